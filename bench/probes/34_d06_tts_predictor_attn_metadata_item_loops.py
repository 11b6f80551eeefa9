# source: vllm-project/vllm-omni https://github.com/vllm-project/vllm-omni/pull/1614 — _LocalPredictorKVCache.build_attn_metadata (run every Qwen3-TTS decode step) called int(query_lens_i32[i].item()), int(seq_lens_i32[i].item()) per request in two loops and int(self._block_table[i, block_idx].item()) per token position, one GPU->CPU sync each; the fix converts the tensors with one .tolist() / .cpu().tolist() before the loops and indexes Python lists.
import torch


class _LocalPredictorKVCache:
    def __init__(self, max_num_reqs, max_blocks_per_req, block_size, device):
        self.block_size = block_size
        self.device = device
        self._block_table = torch.zeros(max_num_reqs, max_blocks_per_req, dtype=torch.int32, device=device)
        self._next_block = 0

    def allocate(self, req_idx, num_blocks):
        ids = torch.arange(self._next_block, self._next_block + num_blocks, dtype=torch.int32)
        self._block_table[req_idx, :num_blocks] = ids.to(self.device)
        self._next_block += num_blocks

    def build_attn_metadata(self, query_lens_i32, seq_lens_i32):
        num_reqs = query_lens_i32.shape[0]
        query_start_loc = torch.zeros(num_reqs + 1, dtype=torch.int32, device=self.device)
        query_start_loc[1:] = torch.cumsum(query_lens_i32, dim=0)

        positions = []
        for i in range(num_reqs):
            q_len = int(query_lens_i32[i].item())  # want: D
            s_len = int(seq_lens_i32[i].item())  # want: D
            positions.extend(range(s_len - q_len, s_len))

        slot_mapping = []
        for i in range(num_reqs):
            q_len = int(query_lens_i32[i].item())  # want: D
            s_len = int(seq_lens_i32[i].item())  # want: D
            for pos in range(s_len - q_len, s_len):
                block_idx = pos // self.block_size
                block_num = int(self._block_table[i, block_idx].item())  # want: D
                slot_mapping.append(block_num * self.block_size + pos % self.block_size)

        return {
            "query_start_loc": query_start_loc,
            "seq_lens": seq_lens_i32,
            "positions": torch.tensor(positions, dtype=torch.int64, device=self.device),
            "slot_mapping": torch.tensor(slot_mapping, dtype=torch.int64, device=self.device),
            "block_table": self._block_table[:num_reqs],
        }


class _LocalPredictorKVCacheFixed(_LocalPredictorKVCache):
    def build_attn_metadata(self, query_lens_i32, seq_lens_i32):
        num_reqs = query_lens_i32.shape[0]
        query_start_loc = torch.zeros(num_reqs + 1, dtype=torch.int32, device=self.device)
        query_start_loc[1:] = torch.cumsum(query_lens_i32, dim=0)

        # One batched transfer per tensor instead of one per element.
        query_lens = query_lens_i32.tolist()
        seq_lens = seq_lens_i32.tolist()
        block_table = self._block_table[:num_reqs].cpu().tolist()

        positions = []
        slot_mapping = []
        for i in range(num_reqs):
            q_len = query_lens[i]
            s_len = seq_lens[i]
            positions.extend(range(s_len - q_len, s_len))
            row = block_table[i]
            for pos in range(s_len - q_len, s_len):
                block_num = row[pos // self.block_size]
                slot_mapping.append(block_num * self.block_size + pos % self.block_size)

        return {
            "query_start_loc": query_start_loc,
            "seq_lens": seq_lens_i32,
            "positions": torch.tensor(positions, dtype=torch.int64, device=self.device),
            "slot_mapping": torch.tensor(slot_mapping, dtype=torch.int64, device=self.device),
            "block_table": self._block_table[:num_reqs],
        }


def decode_steps(cache_cls, steps):
    cache = cache_cls(max_num_reqs=4, max_blocks_per_req=4, block_size=4, device="cpu")
    for r in range(3):
        cache.allocate(r, 4)
    seq_lens = torch.tensor([3, 5, 2], dtype=torch.int32)
    out = None
    for _ in range(steps):  # one call per TTS decode step
        query_lens = torch.ones(3, dtype=torch.int32)
        seq_lens = seq_lens + 1
        out = cache.build_attn_metadata(query_lens, seq_lens)
    return out


if __name__ == "__main__":
    a = decode_steps(_LocalPredictorKVCache, 6)
    b = decode_steps(_LocalPredictorKVCacheFixed, 6)
    print("slot_mapping equal:", torch.equal(a["slot_mapping"], b["slot_mapping"]), a["slot_mapping"].tolist())
    print("positions equal:", torch.equal(a["positions"], b["positions"]))
