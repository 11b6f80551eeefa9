# source: NVIDIA/Megatron-LM https://github.com/NVIDIA/Megatron-LM/commit/e85075d3055064457f8e7060f7de27e2e8bebcbd — DynamicInferenceContext.update_requests released the KV chunks of finished requests and then reset their bookkeeping with `self.request_to_kv_chunk_ids[finished_idxs].fill_(-1)`; `finished_idxs` comes from `torch.nonzero`, so the indexing made a clone and the reset was lost, leaving freed chunk ids attached to dead request slots. The fix ("Dynamic engine bug fixes") assigns `self.request_to_kv_chunk_ids[finished_idxs] = -1` with a comment explaining the clone.
from typing import List

import torch
from torch import Tensor


class ChunkAllocator:
    def __init__(self, num_chunks: int):
        self.free: List[int] = list(range(num_chunks))

    def allocate(self, n: int) -> Tensor:
        out, self.free = self.free[:n], self.free[n:]
        return torch.tensor(out)

    def release_memory_chunks(self, chunks: Tensor) -> None:
        self.free.extend(chunks.tolist())


class DynamicInferenceContext:
    def __init__(self, max_requests: int = 8, max_chunks_per_req: int = 4, fixed: bool = False):
        self.chunk_allocator = ChunkAllocator(64)
        self.request_to_kv_chunk_ids = torch.full((max_requests, max_chunks_per_req), -1, dtype=torch.long)
        self.paused_request_count = 0
        self.total_request_count = 0
        self.fixed = fixed

    def add_request(self, num_chunks: int) -> None:
        idx = self.total_request_count
        self.request_to_kv_chunk_ids[idx, :num_chunks] = self.chunk_allocator.allocate(num_chunks)
        self.total_request_count += 1

    def update_requests(self, active_requests_mask: Tensor) -> None:
        finished_request_count = (active_requests_mask == 0).sum().item()
        if finished_request_count > 0:
            finished_idxs = (
                torch.nonzero(active_requests_mask == 0, as_tuple=True)[0]
                + self.paused_request_count
            )
            kv_chunks_asigned = self.request_to_kv_chunk_ids[finished_idxs]
            non_zero_values_in_kv_memory = kv_chunks_asigned[kv_chunks_asigned != -1]
            self.chunk_allocator.release_memory_chunks(non_zero_values_in_kv_memory)
            if not self.fixed:
                self.request_to_kv_chunk_ids[finished_idxs].fill_(-1)  # want: B
            else:
                # Note: do not use fill_() here. Indexing with a tensor and fill_()
                # creates a clone and updates it instead of the original tensor.
                self.request_to_kv_chunk_ids[finished_idxs] = -1


if __name__ == "__main__":
    results = {}
    for fixed in (False, True):
        ctx = DynamicInferenceContext(fixed=fixed)
        for n in (2, 3, 1):
            ctx.add_request(n)
        ctx.update_requests(torch.tensor([1, 0, 1]))  # request 1 finished
        results[fixed] = ctx.request_to_kv_chunk_ids[1].clone()
        print("fixed" if fixed else "buggy", "row of finished request:", results[fixed].tolist())
    assert (results[False] != -1).any(), "stale chunk ids still referenced after release"
    assert (results[True] == -1).all()
