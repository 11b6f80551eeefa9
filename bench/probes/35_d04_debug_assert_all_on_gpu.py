# source: NVIDIA/TensorRT-LLM https://github.com/NVIDIA/TensorRT-LLM/pull/12445 — the DSA indexer's _compute_slot_mappings guarded a debug `assert (...).all()` only with `not is_current_stream_capturing()`, so in eager mode on_update_kv_lens ran it on GPU tensors (reduce + 1-byte D2H + cudaStreamSynchronize, twice per context step); the fix guards it with `not block_indices_in_seq.is_cuda` so only the CPU prepare() path checks.
import torch


def is_current_stream_capturing():
    return torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()


def _compute_slot_mappings(block_table, block_indices_in_seq, token_offsets, tokens_per_block):
    if not is_current_stream_capturing():
        assert (block_indices_in_seq < block_table.shape[1]).all(), "block index out of range"  # want: D
    block_ids = torch.gather(block_table, 1, block_indices_in_seq.long())
    return block_ids * tokens_per_block + token_offsets


def _compute_slot_mappings_fixed(block_table, block_indices_in_seq, token_offsets, tokens_per_block):
    # GPU callers already clamped the offsets in prepare(); only check host tensors.
    if not block_indices_in_seq.is_cuda:
        assert (block_indices_in_seq < block_table.shape[1]).all(), "block index out of range"
    block_ids = torch.gather(block_table, 1, block_indices_in_seq.long())
    return block_ids * tokens_per_block + token_offsets


class Indexer:
    def __init__(self, tokens_per_block, slot_fn=_compute_slot_mappings):
        self.tokens_per_block = tokens_per_block
        self.slot_fn = slot_fn
        self.slot_mapping = None

    def prepare(self, block_table_cpu, positions_cpu):
        block_idx = (positions_cpu // self.tokens_per_block).clamp(max=block_table_cpu.shape[1] - 1)
        offsets = positions_cpu % self.tokens_per_block
        self.slot_mapping = self.slot_fn(block_table_cpu, block_idx, offsets, self.tokens_per_block)
        return self.slot_mapping

    def on_update_kv_lens(self, block_table, kv_lens, num_new_tokens, device):
        # called from the model engine's _preprocess_inputs on every context step
        positions = kv_lens[:, None] + torch.arange(num_new_tokens, device=device)[None, :]
        block_idx = (positions // self.tokens_per_block).clamp(max=block_table.shape[1] - 1)
        offsets = positions % self.tokens_per_block
        self.slot_mapping = self.slot_fn(block_table, block_idx, offsets, self.tokens_per_block)
        return self.slot_mapping


def preprocess_inputs(indexer, block_table, kv_lens, num_new_tokens, overlap_mtp=False):
    device = block_table.device
    out = indexer.on_update_kv_lens(block_table, kv_lens, num_new_tokens, device)
    if overlap_mtp:
        out = indexer.on_update_kv_lens(block_table, kv_lens + 1, num_new_tokens, device)
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    tpb, bs, nblocks = 4, 3, 8
    block_table = torch.randint(0, 64, (bs, nblocks))
    kv_lens = torch.tensor([3, 7, 10])
    a = preprocess_inputs(Indexer(tpb), block_table, kv_lens, 4, overlap_mtp=True)
    b = preprocess_inputs(Indexer(tpb, _compute_slot_mappings_fixed), block_table, kv_lens, 4, overlap_mtp=True)
    pos = torch.arange(12).repeat(bs, 1)
    c = Indexer(tpb, _compute_slot_mappings_fixed).prepare(block_table, pos)
    print("slot mappings equal:", torch.equal(a, b), "cpu prepare shape:", tuple(c.shape))
