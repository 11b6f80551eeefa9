# source: lightseekorg/tokenspeed https://github.com/lightseekorg/tokenspeed/pull/45 — TRTLLMMHAAttnBackend._init_extend_metadata computed `max_seq_len_q = int(seq_lens.max().item())` (or `extend_seq_lens.max().item()` with a prefix) on GPU tensors for every prefill / mixed iteration, blocking the host on the previous step's forward and erasing the prefill/decode overlap (~10 ms TTFT in the PR's A/B). The fix threads the pinned-CPU mirror `extend_seq_lens_cpu` into the metadata builder and takes the max from it, so no device value is read.
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class TRTLLMMHAMetadata:
    cache_seqlens_int32: torch.Tensor = None
    max_seq_len_q: int = 1
    max_seq_len_k: int = 0
    cu_seqlens_q: torch.Tensor = None
    cu_seqlens_k: torch.Tensor = None
    page_table: torch.Tensor = None


class TRTLLMMHAAttnBackend:
    """trtllm_mha attention backend optimized for SM100 (Blackwell)."""

    def __init__(self, max_bs: int, max_num_pages: int, max_context_len: int, device):
        self.max_num_pages = max_num_pages
        self.max_context_len = max_context_len
        self.device = device
        self.page_table_buf = torch.zeros((max_bs, max_num_pages), dtype=torch.int32, device=device)
        self.forward_prefill_metadata = None

    def _build_page_table(self, req_pool_indices, seq_lens, bs, req_to_page, page_table_buf):
        """Build page table in [bs, max_pages] format from req_to_page."""
        page_table_buf[:bs].copy_(req_to_page[req_pool_indices[:bs], : self.max_num_pages])
        return page_table_buf[:bs]

    def _init_extend_metadata(
        self, bs, req_pool_indices, seq_lens, req_to_page, extend_with_prefix=False,
        extend_prefix_lens=None, extend_prefix_lens_cpu=None, extend_seq_lens_cpu=None,
    ):
        """Populate prefill slot for regular EXTEND (ragged query)."""
        assert seq_lens.dtype == torch.int32, f"seq_lens must be int32, got {seq_lens.dtype}"
        cache_seqlens_int32 = seq_lens[:bs]
        cu_seqlens_k = torch.nn.functional.pad(torch.cumsum(seq_lens, dim=0, dtype=torch.int32), (1, 0))
        page_table = self._build_page_table(req_pool_indices, seq_lens, bs, req_to_page, self.page_table_buf)

        if extend_with_prefix and extend_prefix_lens_cpu is not None and any(extend_prefix_lens_cpu):
            if extend_prefix_lens is None:
                raise RuntimeError("TRTLLMMHAAttnBackend requires extend_prefix_lens tensor when extend_with_prefix is true.")
            extend_seq_lens = seq_lens - extend_prefix_lens
            max_seq_len_q = int(extend_seq_lens.max().item())  # want: D
            cu_seqlens_q = torch.nn.functional.pad(torch.cumsum(extend_seq_lens, dim=0, dtype=torch.int32), (1, 0))
        else:
            max_seq_len_q = int(seq_lens.max().item())  # want: D
            cu_seqlens_q = cu_seqlens_k

        self.forward_prefill_metadata = TRTLLMMHAMetadata(
            cache_seqlens_int32=cache_seqlens_int32, max_seq_len_q=max_seq_len_q, max_seq_len_k=self.max_context_len,
            cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k, page_table=page_table,
        )


class TRTLLMMHAAttnBackendFixed(TRTLLMMHAAttnBackend):
    def _init_extend_metadata(
        self, bs, req_pool_indices, seq_lens, req_to_page, extend_with_prefix=False,
        extend_prefix_lens=None, extend_prefix_lens_cpu=None, extend_seq_lens_cpu=None,
    ):
        """Populate prefill slot for regular EXTEND (ragged query)."""
        assert seq_lens.dtype == torch.int32, f"seq_lens must be int32, got {seq_lens.dtype}"
        assert (
            extend_seq_lens_cpu is not None
        ), "trtllm extend requires extend_seq_lens_cpu (pinned-CPU mirror) to avoid GPU sync"
        cache_seqlens_int32 = seq_lens[:bs]
        cu_seqlens_k = torch.nn.functional.pad(torch.cumsum(seq_lens, dim=0, dtype=torch.int32), (1, 0))
        page_table = self._build_page_table(req_pool_indices, seq_lens, bs, req_to_page, self.page_table_buf)

        # Read the max from the pinned-CPU mirror; extend_seq_lens_cpu holds the
        # new-token counts for both the no-prefix and the prefix-cached extend.
        max_seq_len_q = int(extend_seq_lens_cpu[:bs].max().item())

        if extend_with_prefix and extend_prefix_lens_cpu is not None and any(extend_prefix_lens_cpu):
            if extend_prefix_lens is None:
                raise RuntimeError("TRTLLMMHAAttnBackend requires extend_prefix_lens tensor when extend_with_prefix is true.")
            extend_seq_lens = seq_lens - extend_prefix_lens
            cu_seqlens_q = torch.nn.functional.pad(torch.cumsum(extend_seq_lens, dim=0, dtype=torch.int32), (1, 0))
        else:
            cu_seqlens_q = cu_seqlens_k

        self.forward_prefill_metadata = TRTLLMMHAMetadata(
            cache_seqlens_int32=cache_seqlens_int32, max_seq_len_q=max_seq_len_q, max_seq_len_k=self.max_context_len,
            cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k, page_table=page_table,
        )


if __name__ == "__main__":
    device = torch.device("cpu")
    req_to_page = torch.arange(5 * 8, dtype=torch.int32).view(5, 8)
    req_pool_indices = torch.tensor([3, 1, 4])
    prefix_lens_cpu, extend_lens_cpu = [0, 6, 2], [9, 4, 13]
    seq_lens_cpu = torch.tensor([p + e for p, e in zip(prefix_lens_cpu, extend_lens_cpu)], dtype=torch.int32)
    seq_lens = seq_lens_cpu.to(device)
    extend_prefix_lens = torch.tensor(prefix_lens_cpu, dtype=torch.int32, device=device)
    extend_seq_lens_cpu = torch.tensor(extend_lens_cpu, dtype=torch.int32)

    for with_prefix in (True, False):
        kwargs = dict(
            extend_with_prefix=with_prefix,
            extend_prefix_lens=extend_prefix_lens if with_prefix else None,
            extend_prefix_lens_cpu=prefix_lens_cpu if with_prefix else None,
            extend_seq_lens_cpu=extend_seq_lens_cpu if with_prefix else seq_lens_cpu,
        )
        backend, backend_fixed = TRTLLMMHAAttnBackend(4, 8, 64, device), TRTLLMMHAAttnBackendFixed(4, 8, 64, device)
        backend._init_extend_metadata(3, req_pool_indices, seq_lens, req_to_page, **kwargs)
        backend_fixed._init_extend_metadata(3, req_pool_indices, seq_lens, req_to_page, **kwargs)
        m, mf = backend.forward_prefill_metadata, backend_fixed.forward_prefill_metadata
        assert m.max_seq_len_q == mf.max_seq_len_q
        assert torch.equal(m.cu_seqlens_q, mf.cu_seqlens_q) and torch.equal(m.page_table, mf.page_table)
    print("ok", m.max_seq_len_q)
