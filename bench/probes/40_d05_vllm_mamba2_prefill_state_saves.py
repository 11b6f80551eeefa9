# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/49371 — `MambaMixer2.conv_ssm_forward` saved the block-aligned SSM states of each prefill sequence (prefix caching) in a Python loop over `num_prefills`, whose bounds came from `.tolist()` calls on the device metadata tensors, so every prefill forward of every Mamba layer paid GPU->CPU syncs (`# TODO avoid sync here?`). The PR removes the loop: the write count comes from the metadata builder as a host value (`num_state_writes_p`, derived from CPU data), the per-write indices are built on device with `repeat_interleave(..., output_size=...)`, and all states are stored with one indexed copy.
from dataclasses import dataclass

import torch


@dataclass
class Mamba2PrefillMetadata:
    state_indices_tensor_p: torch.Tensor  # (num_prefills, max_blocks) cache slots
    block_idx_first_scheduled_token_p: torch.Tensor  # (num_prefills,)
    block_idx_last_scheduled_token_p: torch.Tensor  # (num_prefills,)
    last_chunk_indices_p: torch.Tensor  # (num_prefills,) index of each seq's last chunk
    num_state_writes_p: int = 0  # host value, filled by the builder from CPU data


class MambaMixer2:
    def __init__(self, chunk_size: int, block_size: int):
        self.chunk_size = chunk_size
        self.block_size = block_size

    def _save_prefill_states(self, varlen_states, ssm_state, meta: Mamba2PrefillMetadata, num_prefills: int):
        chunks_per_block = self.block_size // self.chunk_size
        # TODO avoid sync here?
        block_first_list = meta.block_idx_first_scheduled_token_p.tolist()  # want: D
        block_last_list = meta.block_idx_last_scheduled_token_p.tolist()  # want: D
        last_chunk_list = meta.last_chunk_indices_p.tolist()  # want: D
        for seq_idx in range(num_prefills):
            first_chunk = 0 if seq_idx == 0 else last_chunk_list[seq_idx - 1] + 1
            n_blocks = block_last_list[seq_idx] - block_first_list[seq_idx]
            cache_blocks_to_fill = meta.state_indices_tensor_p[
                seq_idx, block_first_list[seq_idx] : block_last_list[seq_idx]
            ]
            from_where = first_chunk + torch.arange(1, n_blocks + 1, device=varlen_states.device) * chunks_per_block - 1
            ssm_state[cache_blocks_to_fill] = varlen_states[from_where]


class MambaMixer2Fixed(MambaMixer2):
    def _save_prefill_states(self, varlen_states, ssm_state, meta: Mamba2PrefillMetadata, num_prefills: int):
        chunks_per_block = self.block_size // self.chunk_size
        device = varlen_states.device
        first = meta.block_idx_first_scheduled_token_p
        counts = meta.block_idx_last_scheduled_token_p - first
        n_writes = meta.num_state_writes_p
        seq_ids = torch.repeat_interleave(torch.arange(num_prefills, device=device), counts, output_size=n_writes)
        write_starts = torch.cumsum(counts, dim=0) - counts
        k = torch.arange(n_writes, device=device) - write_starts[seq_ids]
        first_chunk = torch.cat([meta.last_chunk_indices_p.new_zeros(1), meta.last_chunk_indices_p[:-1] + 1])
        cache_blocks_to_fill = meta.state_indices_tensor_p[seq_ids, first[seq_ids] + k]
        from_where = first_chunk[seq_ids] + (k + 1) * chunks_per_block - 1
        ssm_state[cache_blocks_to_fill] = varlen_states[from_where]


def build_prefill_metadata(state_indices, first_cpu, last_cpu, last_chunk_cpu, device="cpu"):
    # metadata builder: host-side copies are available here without any sync
    return Mamba2PrefillMetadata(
        state_indices_tensor_p=state_indices.to(device),
        block_idx_first_scheduled_token_p=first_cpu.to(device),
        block_idx_last_scheduled_token_p=last_cpu.to(device),
        last_chunk_indices_p=last_chunk_cpu.to(device),
        num_state_writes_p=int((last_cpu - first_cpu).sum()),
    )


if __name__ == "__main__":
    torch.manual_seed(0)
    chunk_size, block_size, nheads = 4, 8, 3
    meta = build_prefill_metadata(
        state_indices=torch.arange(3 * 6).view(3, 6),
        first_cpu=torch.tensor([0, 1, 2]),
        last_cpu=torch.tensor([2, 4, 2]),
        last_chunk_cpu=torch.tensor([4, 11, 13]),
    )
    varlen_states = torch.randn(14, nheads)
    ssm_a, ssm_b = torch.zeros(18, nheads), torch.zeros(18, nheads)
    MambaMixer2(chunk_size, block_size)._save_prefill_states(varlen_states, ssm_a, meta, num_prefills=3)
    MambaMixer2Fixed(chunk_size, block_size)._save_prefill_states(varlen_states, ssm_b, meta, num_prefills=3)
    assert torch.equal(ssm_a, ssm_b) and ssm_a.abs().sum() > 0
    print("ok", int((ssm_a != 0).any(dim=1).sum()))
