# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/32575 — In alloc_for_extend (run for every prefill batch the scheduler prepares), the paged path built `last_loc` with a list comprehension that materialized `torch.tensor([-1], device=batch.device)` for every fresh (empty-prefix) request; each one is a pageable host-to-device copy that lowers to cudaMemcpyAsync + cudaStreamSynchronize and drains the in-flight forward (12 syncs per batch in the PR's trace). The fix builds the sentinel on device with `torch.full((1,), -1, device=...)`.
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import torch


@dataclass
class Req:
    prefix_indices: torch.Tensor
    extend_input_len: int


@dataclass
class ScheduleBatch:
    reqs: list
    req_to_token_pool: SimpleNamespace
    tree_cache: SimpleNamespace
    device: torch.device
    seq_lens: torch.Tensor
    seq_lens_cpu: torch.Tensor
    prefix_lens: list
    extend_lens: list
    extend_num_tokens: int


def alloc_req_slots(req_to_token_pool, reqs, tree_cache):
    slots, req_to_token_pool.free_slots = req_to_token_pool.free_slots[: len(reqs)], req_to_token_pool.free_slots[len(reqs):]
    return slots


def alloc_paged_token_slots_extend(tree_cache, prefix_lens, prefix_lens_cpu, seq_lens, seq_lens_cpu, last_loc, extend_num_tokens):
    # Stand-in for allocator.alloc_extend (a triton kernel that consumes last_loc on device).
    page_size, pages = tree_cache.page_size, tree_cache.free_pages
    need = (extend_num_tokens + page_size - 1) // page_size
    tree_cache.free_pages = pages[need:]
    slots = (pages[:need, None] * page_size + torch.arange(page_size, device=pages.device)).flatten()
    return slots[:extend_num_tokens], last_loc


def write_cache_indices(out_cache_loc, req_pool_indices, prefix_lens, extend_lens, prefix_tensors, req_to_token_pool):
    # Stand-in for the triton write_req_to_token_pool kernel.
    pt = 0
    for i, req_idx in enumerate(req_pool_indices):
        pre, ext = prefix_lens[i], extend_lens[i]
        req_to_token_pool.req_to_token[req_idx, :pre] = prefix_tensors[i]
        req_to_token_pool.req_to_token[req_idx, pre : pre + ext] = out_cache_loc[pt : pt + ext]
        pt += ext


def alloc_for_extend(batch: ScheduleBatch):
    """Allocate KV cache for extend batch and write to req_to_token_pool."""
    prefix_tensors = [r.prefix_indices for r in batch.reqs]
    prefix_lens_cpu = torch.tensor(batch.prefix_lens, dtype=torch.int64)
    prefix_lens_device = prefix_lens_cpu.to(batch.device, non_blocking=True)
    req_pool_indices = alloc_req_slots(batch.req_to_token_pool, batch.reqs, batch.tree_cache)

    # Paged allocation - build last_loc
    last_loc = [
        (t[-1:] if len(t) > 0 else torch.tensor([-1], device=batch.device))  # want: D
        for t in prefix_tensors
    ]
    out_cache_loc, last_loc = alloc_paged_token_slots_extend(
        tree_cache=batch.tree_cache, prefix_lens=prefix_lens_device, prefix_lens_cpu=prefix_lens_cpu,
        seq_lens=batch.seq_lens, seq_lens_cpu=batch.seq_lens_cpu, last_loc=torch.cat(last_loc),
        extend_num_tokens=batch.extend_num_tokens,
    )
    write_cache_indices(out_cache_loc, req_pool_indices, batch.prefix_lens, batch.extend_lens, prefix_tensors, batch.req_to_token_pool)
    return out_cache_loc, last_loc


def alloc_for_extend_fixed(batch: ScheduleBatch):
    """Allocate KV cache for extend batch and write to req_to_token_pool."""
    prefix_tensors = [r.prefix_indices for r in batch.reqs]
    prefix_lens_cpu = torch.tensor(batch.prefix_lens, dtype=torch.int64)
    prefix_lens_device = prefix_lens_cpu.to(batch.device, non_blocking=True)
    req_pool_indices = alloc_req_slots(batch.req_to_token_pool, batch.reqs, batch.tree_cache)

    # Paged allocation - build last_loc
    last_loc = [
        (t[-1:] if len(t) > 0 else torch.full((1,), -1, dtype=torch.int64, device=batch.device))
        for t in prefix_tensors
    ]
    out_cache_loc, last_loc = alloc_paged_token_slots_extend(
        tree_cache=batch.tree_cache, prefix_lens=prefix_lens_device, prefix_lens_cpu=prefix_lens_cpu,
        seq_lens=batch.seq_lens, seq_lens_cpu=batch.seq_lens_cpu, last_loc=torch.cat(last_loc),
        extend_num_tokens=batch.extend_num_tokens,
    )
    write_cache_indices(out_cache_loc, req_pool_indices, batch.prefix_lens, batch.extend_lens, prefix_tensors, batch.req_to_token_pool)
    return out_cache_loc, last_loc


def _make_batch(device: torch.device) -> ScheduleBatch:
    empty = torch.empty(0, dtype=torch.int64, device=device)
    reqs = [Req(torch.arange(8, 14, device=device), 3), Req(empty, 5), Req(empty.clone(), 2)]
    seq_lens_cpu = torch.tensor([len(r.prefix_indices) + r.extend_input_len for r in reqs])
    return ScheduleBatch(
        reqs=reqs,
        req_to_token_pool=SimpleNamespace(req_to_token=torch.zeros(4, 32, dtype=torch.int64, device=device), free_slots=[0, 1, 2, 3]),
        tree_cache=SimpleNamespace(page_size=4, free_pages=torch.arange(5, 16, device=device)),
        device=device, seq_lens=seq_lens_cpu.to(device), seq_lens_cpu=seq_lens_cpu,
        prefix_lens=[len(r.prefix_indices) for r in reqs], extend_lens=[r.extend_input_len for r in reqs],
        extend_num_tokens=sum(r.extend_input_len for r in reqs),
    )


if __name__ == "__main__":
    device = torch.device("cpu")
    batch, batch_fixed = _make_batch(device), _make_batch(device)
    out, last_loc = alloc_for_extend(batch)
    out_f, last_loc_f = alloc_for_extend_fixed(batch_fixed)
    assert torch.equal(out, out_f) and torch.equal(last_loc, last_loc_f)
    assert last_loc.tolist() == [13, -1, -1] and last_loc.dtype == last_loc_f.dtype
    assert torch.equal(batch.req_to_token_pool.req_to_token, batch_fixed.req_to_token_pool.req_to_token)
    print("ok", out.tolist())
