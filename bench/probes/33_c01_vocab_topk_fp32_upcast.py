# source: NVIDIA-NeMo/RL https://github.com/NVIDIA-NeMo/RL/pull/2883 — distributed_vocab_topk and gather_logits_at_global_indices cast the whole [B, S, V_local] logits to fp32 before their sequence-chunk loops, so logprob_chunk_size never bounded the fp32 working set (16 GiB at 32k tokens); the fix upcasts one [B, chunk, V_local] slice at a time inside the loop.
from typing import Optional

import torch


@torch.no_grad()
def distributed_vocab_topk(vocab_parallel_logits, k, tp_group=None, *, vocab_start_index, vocab_end_index, chunk_size=None):
    assert vocab_end_index > vocab_start_index
    world_size = 1 if tp_group is None else torch.distributed.get_world_size(tp_group)

    logits = vocab_parallel_logits.to(dtype=torch.float32)  # want: C
    B, S, V_local = logits.shape
    V_total = V_local * world_size
    K_eff = int(min(k, max(1, V_total)))
    if chunk_size is None:
        chunk_size = S

    vals_chunks, idx_chunks = [], []
    for s0 in range(0, S, chunk_size):
        s1 = min(S, s0 + chunk_size)
        local_vals, local_idx_local = torch.topk(logits[:, s0:s1, :], min(k, V_local), dim=-1)
        local_idx_global = local_idx_local + int(vocab_start_index)
        # TP all_gather of the candidates elided (world_size == 1 here)
        sel_vals, sel_pos = torch.topk(local_vals, K_eff, dim=-1)
        sel_idx = torch.gather(local_idx_global, dim=-1, index=sel_pos)
        vals_chunks.append(sel_vals)
        idx_chunks.append(sel_idx)

    topk_vals = torch.cat(vals_chunks, dim=1) if len(vals_chunks) > 1 else vals_chunks[0]
    topk_global_indices = torch.cat(idx_chunks, dim=1) if len(idx_chunks) > 1 else idx_chunks[0]
    return topk_vals, topk_global_indices


def gather_logits_at_global_indices(vocab_parallel_logits, global_indices, tp_group=None, *, vocab_start_index, vocab_end_index, chunk_size: Optional[int] = None):
    logits = vocab_parallel_logits.to(dtype=torch.float32)  # want: C
    B, S, V_local = logits.shape
    if chunk_size is None:
        chunk_size = S

    out_chunks = []
    for s0 in range(0, S, chunk_size):
        s1 = min(S, s0 + chunk_size)
        gi = global_indices[:, s0:s1, :]
        in_range = (gi >= int(vocab_start_index)) & (gi < int(vocab_end_index))
        li = (gi - int(vocab_start_index)).clamp(min=0, max=V_local - 1)
        local_vals = torch.gather(logits[:, s0:s1, :], dim=-1, index=li)
        local_vals = local_vals * in_range.to(dtype=local_vals.dtype)
        out_chunks.append(local_vals)
    return torch.cat(out_chunks, dim=1) if len(out_chunks) > 1 else out_chunks[0]


# ---- fixed (after the PR): the fp32 working set is one sequence chunk ----
@torch.no_grad()
def distributed_vocab_topk_fixed(vocab_parallel_logits, k, tp_group=None, *, vocab_start_index, vocab_end_index, chunk_size=None):
    assert vocab_end_index > vocab_start_index
    world_size = 1 if tp_group is None else torch.distributed.get_world_size(tp_group)
    B, S, V_local = vocab_parallel_logits.shape
    K_eff = int(min(k, max(1, V_local * world_size)))
    if chunk_size is None:
        chunk_size = S

    vals_chunks, idx_chunks = [], []
    for s0 in range(0, S, chunk_size):
        s1 = min(S, s0 + chunk_size)
        chunk = vocab_parallel_logits[:, s0:s1, :].to(dtype=torch.float32)
        local_vals, local_idx_local = torch.topk(chunk, min(k, V_local), dim=-1)
        local_idx_global = local_idx_local + int(vocab_start_index)
        sel_vals, sel_pos = torch.topk(local_vals, K_eff, dim=-1)
        vals_chunks.append(sel_vals)
        idx_chunks.append(torch.gather(local_idx_global, dim=-1, index=sel_pos))
    topk_vals = torch.cat(vals_chunks, dim=1) if len(vals_chunks) > 1 else vals_chunks[0]
    topk_global_indices = torch.cat(idx_chunks, dim=1) if len(idx_chunks) > 1 else idx_chunks[0]
    return topk_vals, topk_global_indices


def gather_logits_at_global_indices_fixed(vocab_parallel_logits, global_indices, tp_group=None, *, vocab_start_index, vocab_end_index, chunk_size: Optional[int] = None):
    B, S, V_local = vocab_parallel_logits.shape
    if chunk_size is None:
        chunk_size = S
    out_chunks = []
    for s0 in range(0, S, chunk_size):
        s1 = min(S, s0 + chunk_size)
        gi = global_indices[:, s0:s1, :]
        in_range = (gi >= int(vocab_start_index)) & (gi < int(vocab_end_index))
        li = (gi - int(vocab_start_index)).clamp(min=0, max=V_local - 1)
        chunk = vocab_parallel_logits[:, s0:s1, :].to(dtype=torch.float32)
        local_vals = torch.gather(chunk, dim=-1, index=li)
        out_chunks.append(local_vals * in_range.to(dtype=local_vals.dtype))
    return torch.cat(out_chunks, dim=1) if len(out_chunks) > 1 else out_chunks[0]


if __name__ == "__main__":
    torch.manual_seed(0)
    B, S, V, k, chunk = 1, 512, 4096, 8, 64
    logits = torch.randn(B, S, V, dtype=torch.bfloat16)
    kw = dict(vocab_start_index=0, vocab_end_index=V, chunk_size=chunk)

    v_bug, i_bug = distributed_vocab_topk(logits, k, **kw)
    v_fix, i_fix = distributed_vocab_topk_fixed(logits, k, **kw)
    assert torch.equal(v_bug, v_fix) and torch.equal(i_bug, i_fix)
    g_bug = gather_logits_at_global_indices(logits, i_bug, **kw)
    g_fix = gather_logits_at_global_indices_fixed(logits, i_fix, **kw)
    assert torch.equal(g_bug, g_fix)

    full = logits.to(torch.float32)
    print("bf16 logits bytes:", logits.untyped_storage().nbytes())
    print("buggy fp32 copy bytes (whole tensor, alive for the loop):", full.untyped_storage().nbytes(),
          "new storage:", full.data_ptr() != logits.data_ptr())
    print("fixed fp32 working set per chunk:", logits[:, :chunk].to(torch.float32).untyped_storage().nbytes())
