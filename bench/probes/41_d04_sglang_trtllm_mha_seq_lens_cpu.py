# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/28106 — The trtllm_mha attention backend set `needs_cpu_seq_lens = True` because `init_forward_metadata` sized the block-table width from `max(seq_lens)` on the host, so every decode step the model runner copied the device `seq_lens` back to the host before it could build metadata; under spec-v2 this blocked the CPU on the GPU every step. The PR makes `seq_lens_cpu` optional for the backend: the page table is sized from a static upper bound (max context length) and filled on the device from the device-side lengths by a dedicated index kernel, so no host copy of seq_lens is needed.
from dataclasses import dataclass
from typing import Optional

import torch


@dataclass
class ForwardBatch:
    batch_size: int
    req_pool_indices: torch.Tensor
    seq_lens: torch.Tensor
    seq_lens_cpu: Optional[torch.Tensor] = None


@dataclass
class TRTLLMMHAMetadata:
    cache_seqlens_int32: torch.Tensor = None
    max_seq_len_k: int = 0
    page_table: torch.Tensor = None


def resolve_seq_lens_cpu(forward_batch: ForwardBatch, attn_backend) -> None:
    if attn_backend.needs_cpu_seq_lens and forward_batch.seq_lens_cpu is None:
        forward_batch.seq_lens_cpu = forward_batch.seq_lens.cpu()  # want: D


class TRTLLMHAAttnBackend:
    needs_cpu_seq_lens = True

    def __init__(self, req_to_token, page_size, max_context_len):
        self.req_to_token = req_to_token
        self.page_size = page_size
        self.max_context_len = max_context_len
        self.forward_metadata = None

    def init_forward_metadata(self, forward_batch: ForwardBatch):
        metadata = TRTLLMMHAMetadata()
        metadata.cache_seqlens_int32 = forward_batch.seq_lens.to(torch.int32)
        metadata.max_seq_len_k = int(forward_batch.seq_lens_cpu.max())
        num_pages = (metadata.max_seq_len_k + self.page_size - 1) // self.page_size
        page_indices = self.req_to_token[
            forward_batch.req_pool_indices, : num_pages * self.page_size : self.page_size
        ]
        metadata.page_table = page_indices // self.page_size
        self.forward_metadata = metadata


def create_trtllm_mha_kv_indices(req_to_token, req_pool_indices, seq_lens, page_size, max_num_pages):
    page_ids = torch.arange(max_num_pages, device=seq_lens.device)
    token_pos = page_ids * page_size
    starts = req_to_token[req_pool_indices.unsqueeze(1), token_pos.unsqueeze(0)] // page_size
    num_pages = (seq_lens + page_size - 1) // page_size
    return torch.where(page_ids.unsqueeze(0) < num_pages.unsqueeze(1), starts, torch.zeros_like(starts))


class TRTLLMHAAttnBackendFixed(TRTLLMHAAttnBackend):
    needs_cpu_seq_lens = False

    def __init__(self, req_to_token, page_size, max_context_len):
        super().__init__(req_to_token, page_size, max_context_len)
        self.max_num_pages = (max_context_len + page_size - 1) // page_size

    def init_forward_metadata(self, forward_batch: ForwardBatch):
        metadata = TRTLLMMHAMetadata()
        metadata.cache_seqlens_int32 = forward_batch.seq_lens.to(torch.int32)
        metadata.max_seq_len_k = self.max_context_len
        metadata.page_table = create_trtllm_mha_kv_indices(
            self.req_to_token,
            forward_batch.req_pool_indices,
            forward_batch.seq_lens,
            self.page_size,
            self.max_num_pages,
        )
        self.forward_metadata = metadata


def run_decode_steps(backend, req_pool_indices, seq_lens, steps):
    tables = []
    for _ in range(steps):
        fb = ForwardBatch(batch_size=len(seq_lens), req_pool_indices=req_pool_indices, seq_lens=seq_lens)
        resolve_seq_lens_cpu(fb, backend)
        backend.init_forward_metadata(fb)
        tables.append(backend.forward_metadata.page_table)
        seq_lens = seq_lens + 1
    return tables


if __name__ == "__main__":
    page_size, max_context_len = 4, 64
    req_to_token = torch.arange(3 * max_context_len, dtype=torch.int64).view(3, max_context_len)
    req_pool_indices = torch.tensor([2, 0, 1])
    seq_lens = torch.tensor([5, 13, 9])
    old = run_decode_steps(TRTLLMHAAttnBackend(req_to_token, page_size, max_context_len), req_pool_indices, seq_lens, 6)
    new = run_decode_steps(TRTLLMHAAttnBackendFixed(req_to_token, page_size, max_context_len), req_pool_indices, seq_lens, 6)
    for step, (a, b) in enumerate(zip(old, new)):
        cur = seq_lens + step
        valid = torch.arange(b.shape[1]).unsqueeze(0) < ((cur + page_size - 1) // page_size).unsqueeze(1)
        assert torch.equal(b[:, : a.shape[1]], torch.where(valid[:, : a.shape[1]], a, torch.zeros_like(a)))
    print("ok", old[-1].shape, new[-1].shape)
