# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/4745 — FlashAttentionBackend.init_forward_metadata (run once per forward batch) took the extend-path max query length from `seqlens_in_batch.max().item()` and tested for prefixes with `not any(forward_batch.extend_prefix_lens)` over a device tensor, both device syncs (39us -> 18us after the fix); the fix uses the host copies `forward_batch.extend_prefix_lens_cpu` / `extend_seq_lens_cpu` (and `seq_lens_cpu`) for those scalars.
from dataclasses import dataclass
from enum import IntEnum, auto
from typing import List, Optional

import torch
import torch.nn.functional as F


class ForwardMode(IntEnum):
    EXTEND = auto()
    DECODE = auto()


@dataclass
class ReqToTokenPool:
    req_to_token: torch.Tensor


@dataclass
class ForwardBatch:
    forward_mode: ForwardMode
    seq_lens: torch.Tensor
    seq_lens_cpu: torch.Tensor
    req_pool_indices: torch.Tensor
    req_to_token_pool: ReqToTokenPool
    extend_seq_lens: Optional[torch.Tensor] = None
    extend_prefix_lens: Optional[torch.Tensor] = None
    extend_seq_lens_cpu: Optional[List[int]] = None
    extend_prefix_lens_cpu: Optional[List[int]] = None


@dataclass
class FlashAttentionMetadata:
    cache_seqlens_int32: torch.Tensor = None
    cu_seqlens_q: torch.Tensor = None
    cu_seqlens_k: torch.Tensor = None
    max_seq_len_q: int = 0
    max_seq_len_k: int = 0
    page_table: torch.Tensor = None


class FlashAttentionBackend:
    def __init__(self):
        self.forward_metadata = None

    def init_forward_metadata(self, forward_batch):
        metadata = FlashAttentionMetadata()
        extend_seq_lens = forward_batch.extend_seq_lens
        seqlens_in_batch = forward_batch.seq_lens
        batch_size = len(seqlens_in_batch)
        device = seqlens_in_batch.device
        metadata.cache_seqlens_int32 = seqlens_in_batch.to(torch.int32)
        metadata.cu_seqlens_k = F.pad(torch.cumsum(seqlens_in_batch, dim=0, dtype=torch.int32), (1, 0))
        # Precompute maximum sequence length
        metadata.max_seq_len_k = seqlens_in_batch.max().item()  # maybe: D (k-side max read from the device tensor; moved to seq_lens_cpu alongside this change)
        metadata.page_table = forward_batch.req_to_token_pool.req_to_token[
            forward_batch.req_pool_indices, : metadata.max_seq_len_k
        ]
        if forward_batch.forward_mode == ForwardMode.DECODE:
            metadata.cu_seqlens_q = torch.arange(0, batch_size + 1, dtype=torch.int32, device=device)
        else:
            extend_no_prefix = not any(forward_batch.extend_prefix_lens)  # want: D
            if not extend_no_prefix:
                metadata.cu_seqlens_q = F.pad(torch.cumsum(extend_seq_lens, dim=0, dtype=torch.int32), (1, 0))
            else:
                metadata.cu_seqlens_q = metadata.cu_seqlens_k
            metadata.max_seq_len_q = seqlens_in_batch.max().item()  # want: D
        self.forward_metadata = metadata


class FlashAttentionBackendFixed(FlashAttentionBackend):
    def init_forward_metadata(self, forward_batch):
        metadata = FlashAttentionMetadata()
        seqlens_in_batch = forward_batch.seq_lens
        batch_size = len(seqlens_in_batch)
        device = seqlens_in_batch.device
        metadata.cache_seqlens_int32 = seqlens_in_batch.to(torch.int32)
        metadata.cu_seqlens_k = F.pad(torch.cumsum(seqlens_in_batch, dim=0, dtype=torch.int32), (1, 0))
        metadata.max_seq_len_k = forward_batch.seq_lens_cpu.max().item()
        metadata.page_table = forward_batch.req_to_token_pool.req_to_token[
            forward_batch.req_pool_indices, : metadata.max_seq_len_k
        ]
        if forward_batch.forward_mode == ForwardMode.DECODE:
            metadata.cu_seqlens_q = torch.arange(0, batch_size + 1, dtype=torch.int32, device=device)
        else:
            if any(forward_batch.extend_prefix_lens_cpu):
                extend_seq_lens = forward_batch.extend_seq_lens
                metadata.cu_seqlens_q = F.pad(torch.cumsum(extend_seq_lens, dim=0, dtype=torch.int32), (1, 0))
                metadata.max_seq_len_q = max(forward_batch.extend_seq_lens_cpu)
            else:
                metadata.cu_seqlens_q = metadata.cu_seqlens_k
                metadata.max_seq_len_q = metadata.max_seq_len_k
        self.forward_metadata = metadata


if __name__ == "__main__":
    seq_lens_cpu = torch.tensor([7, 12, 5])
    prefix = [0, 0, 0]
    ext = [int(s) - p for s, p in zip(seq_lens_cpu.tolist(), prefix)]
    fb = ForwardBatch(
        forward_mode=ForwardMode.EXTEND,
        seq_lens=seq_lens_cpu.clone(), seq_lens_cpu=seq_lens_cpu,
        req_pool_indices=torch.tensor([0, 1, 2]),
        req_to_token_pool=ReqToTokenPool(torch.arange(4 * 32).view(4, 32)),
        extend_seq_lens=torch.tensor(ext), extend_prefix_lens=torch.tensor(prefix),
        extend_seq_lens_cpu=ext, extend_prefix_lens_cpu=prefix,
    )
    a, b = FlashAttentionBackend(), FlashAttentionBackendFixed()
    a.init_forward_metadata(fb)
    b.init_forward_metadata(fb)
    ma, mb = a.forward_metadata, b.forward_metadata
    assert ma.max_seq_len_q == mb.max_seq_len_q == 12 and ma.max_seq_len_k == mb.max_seq_len_k
    assert torch.equal(ma.cu_seqlens_q, mb.cu_seqlens_q) and torch.equal(ma.page_table, mb.page_table)
    print("metadata identical; page_table", tuple(mb.page_table.shape))
