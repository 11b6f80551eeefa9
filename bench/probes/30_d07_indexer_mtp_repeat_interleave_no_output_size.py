# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/36723 — the DeepSeek-V3.2 sparse-MLA indexer metadata builder flattened multi-token (MTP) decode requests with torch.repeat_interleave(..., decode_lens) using device repeats and no output_size, so every decode step read the output length back from the GPU (a stream sync that broke async scheduling, ~30% slowdown). The fix passes output_size=actual_expanded computed from decode_lens_cpu.
import torch


class DeepseekV32IndexerMetadataBuilder:
    def __init__(self, max_num_batched_tokens, max_blocks_per_req, device):
        self.device = device
        self.arange_buffer = torch.arange(max_num_batched_tokens, dtype=torch.int32, device=device)
        self.expanded_seq_lens_buffer = torch.zeros(max_num_batched_tokens, dtype=torch.int32, device=device)
        self.expanded_block_table_buffer = torch.zeros(
            (max_num_batched_tokens, max_blocks_per_req), dtype=torch.int32, device=device
        )

    def build_decode(self, seq_lens, block_table, query_start_loc, decode_lens, decode_lens_cpu, num_decode_tokens):
        num_decodes = seq_lens.shape[0]
        # padded requests have seq_lens=0, so the kernel produces no meaningful output for those rows.
        block_table.clamp_(min=0)
        max_decode_len = int(decode_lens_cpu.max().item())
        if max_decode_len > 1:
            # Flatten multi-token decode requests into single-token batch entries,
            # expanding seq_lens and block tables so the kernel always sees next_n=1.
            seq_lens, block_table = self._expand_decode(
                seq_lens, block_table, query_start_loc, decode_lens, decode_lens_cpu, num_decodes, num_decode_tokens
            )
        return seq_lens, block_table

    def _expand_decode(self, seq_lens, block_table, query_start_loc, decode_lens, decode_lens_cpu, num_decodes,
                       num_decode_tokens):
        # [7, 6, 8, 0] -> [7, 7, 7, 6, 8, 8, 8, 8]
        expanded_base = torch.repeat_interleave(seq_lens - decode_lens, decode_lens)  # want: D
        actual_expanded = expanded_base.shape[0]
        # [0, 3, 4, 8] -> [0, 0, 0, 3, 4, 4, 4, 4]
        expanded_starts = torch.repeat_interleave(query_start_loc[:num_decodes], decode_lens)  # want: D
        # [0, 1, 2, 0, 0, 1, 2, 3]
        positions_within = self.arange_buffer[:actual_expanded] - expanded_starts
        # [8, 9, 10, 7, 9, 10, 11, 12, ...] where ... is unused buffer space
        self.expanded_seq_lens_buffer[:actual_expanded] = expanded_base + positions_within + 1
        self.expanded_seq_lens_buffer[actual_expanded:] = 0
        seq_lens = self.expanded_seq_lens_buffer[:num_decode_tokens]
        # Give each of the flattened entries the same block table row as the original request.
        self.expanded_block_table_buffer[:actual_expanded] = torch.repeat_interleave(block_table, decode_lens, dim=0)  # want: D
        if actual_expanded < num_decode_tokens:
            self.expanded_block_table_buffer[actual_expanded:num_decode_tokens, 0] = 0
        block_table = self.expanded_block_table_buffer[:num_decode_tokens]
        return seq_lens, block_table


class DeepseekV32IndexerMetadataBuilderFixed(DeepseekV32IndexerMetadataBuilder):
    def _expand_decode(self, seq_lens, block_table, query_start_loc, decode_lens, decode_lens_cpu, num_decodes,
                       num_decode_tokens):
        # 3 + 1 + 4 + 0 = 8, read from the host copy
        actual_expanded = int(decode_lens_cpu.sum().item())
        expanded_base = torch.repeat_interleave(seq_lens - decode_lens, decode_lens, output_size=actual_expanded)
        expanded_starts = torch.repeat_interleave(
            query_start_loc[:num_decodes], decode_lens, output_size=actual_expanded
        )
        positions_within = self.arange_buffer[:actual_expanded] - expanded_starts
        self.expanded_seq_lens_buffer[:actual_expanded] = expanded_base + positions_within + 1
        self.expanded_seq_lens_buffer[actual_expanded:] = 0
        seq_lens = self.expanded_seq_lens_buffer[:num_decode_tokens]
        self.expanded_block_table_buffer[:actual_expanded] = torch.repeat_interleave(
            block_table, decode_lens, dim=0, output_size=actual_expanded
        )
        if actual_expanded < num_decode_tokens:
            self.expanded_block_table_buffer[actual_expanded:num_decode_tokens, 0] = 0
        block_table = self.expanded_block_table_buffer[:num_decode_tokens]
        return seq_lens, block_table


def run_decode_steps(builder_cls, num_steps, device):
    builder = builder_cls(max_num_batched_tokens=64, max_blocks_per_req=8, device=device)
    results = []
    for step in range(num_steps):
        # 4 requests (last one is padding), MTP with up to 3 draft tokens
        decode_lens_cpu = torch.tensor([3, 1, 4, 0], dtype=torch.int32)
        seq_lens = torch.tensor([10 + step, 7 + step, 12 + step, 0], dtype=torch.int32, device=device)
        decode_lens = decode_lens_cpu.to(device, non_blocking=True)
        query_start_loc = torch.cat([decode_lens.new_zeros(1), decode_lens.cumsum(0)]).to(torch.int32)
        block_table = torch.arange(32, dtype=torch.int32, device=device).view(4, 8)
        s, bt = builder.build_decode(seq_lens, block_table, query_start_loc, decode_lens, decode_lens_cpu,
                                     num_decode_tokens=10)
        results.append((s.clone(), bt.clone()))
    return results


if __name__ == "__main__":
    dev = torch.device("cpu")
    a = run_decode_steps(DeepseekV32IndexerMetadataBuilder, 5, dev)
    b = run_decode_steps(DeepseekV32IndexerMetadataBuilderFixed, 5, dev)
    for (s1, t1), (s2, t2) in zip(a, b):
        assert torch.equal(s1, s2) and torch.equal(t1, t2)
    print("decode steps compared:", len(a), "expanded rows:", tuple(a[0][0].shape))
