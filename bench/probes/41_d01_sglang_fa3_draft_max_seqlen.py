# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/4951 — When EAGLE speculative decoding was added to the FA3 attention backend, the draft-decode branch of `FlashAttentionBackend.init_forward_metadata` (run for every draft step of every scheduler iteration) sized the page table with `metadata.max_seq_len_k = metadata.cache_seqlens_int32.max().item()`, reading a value computed on the GPU back to the host. The review asked for `forward_batch.seq_lens_cpu.max().item() + (self.step_id + 1)`, which gives the same number from the host-side copy of seq_lens that the batch already carries, so metadata preparation no longer waits for the GPU.
from dataclasses import dataclass
from enum import Enum, auto

import torch
import torch.nn.functional as F


class ForwardMode(Enum):
    EXTEND = auto()
    DECODE = auto()

    def is_decode(self):
        return self == ForwardMode.DECODE


@dataclass
class ForwardBatch:
    forward_mode: ForwardMode
    req_pool_indices: torch.Tensor
    seq_lens: torch.Tensor
    seq_lens_cpu: torch.Tensor
    spec_info: object = None


@dataclass
class FlashAttentionMetadata:
    cache_seqlens_int32: torch.Tensor = None
    max_seq_len_q: int = 0
    max_seq_len_k: int = 0
    cu_seqlens_q: torch.Tensor = None
    cu_seqlens_k: torch.Tensor = None
    page_table: torch.Tensor = None


class FlashAttentionBackend:
    def __init__(self, req_to_token, topk=0, speculative_num_steps=0, step_id=0):
        self.req_to_token = req_to_token
        self.topk = topk
        self.speculative_num_steps = speculative_num_steps
        self.step_id = step_id
        self.forward_metadata = None

    def init_forward_metadata(self, forward_batch: ForwardBatch):
        metadata = FlashAttentionMetadata()
        seqlens_in_batch = forward_batch.seq_lens
        batch_size = len(seqlens_in_batch)
        device = seqlens_in_batch.device
        if forward_batch.forward_mode.is_decode():
            if forward_batch.spec_info is not None:
                metadata.cu_seqlens_q = torch.arange(
                    0, batch_size * self.topk + 1, dtype=torch.int32, device=device
                )
                seq_lens_with_decode = seqlens_in_batch + (self.step_id + 1)
                metadata.cache_seqlens_int32 = seq_lens_with_decode.repeat_interleave(self.topk).to(torch.int32)
                metadata.cu_seqlens_k = F.pad(
                    torch.cumsum(metadata.cache_seqlens_int32, dim=0, dtype=torch.int32), (1, 0)
                )
                metadata.max_seq_len_k = self._draft_max_seq_len_k(forward_batch, metadata)
                metadata.page_table = self.req_to_token[
                    forward_batch.req_pool_indices, : metadata.max_seq_len_k
                ].repeat_interleave(self.topk, dim=0)
            else:
                metadata.cache_seqlens_int32 = seqlens_in_batch.to(torch.int32)
                metadata.cu_seqlens_q = torch.arange(0, batch_size + 1, dtype=torch.int32, device=device)
                metadata.cu_seqlens_k = F.pad(
                    torch.cumsum(seqlens_in_batch, dim=0, dtype=torch.int32), (1, 0)
                )
                metadata.max_seq_len_k = forward_batch.seq_lens_cpu.max().item()
                metadata.page_table = self.req_to_token[
                    forward_batch.req_pool_indices, : metadata.max_seq_len_k
                ]
            metadata.max_seq_len_q = 1
        self.forward_metadata = metadata

    def _draft_max_seq_len_k(self, forward_batch, metadata):
        return metadata.cache_seqlens_int32.max().item()  # want: D


class FlashAttentionBackendFixed(FlashAttentionBackend):
    def _draft_max_seq_len_k(self, forward_batch, metadata):
        return forward_batch.seq_lens_cpu.max().item() + (self.step_id + 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    req_to_token = torch.arange(4 * 64, dtype=torch.int32).view(4, 64)
    seq_lens = torch.tensor([7, 12, 9], dtype=torch.int64)
    fb = ForwardBatch(
        forward_mode=ForwardMode.DECODE,
        req_pool_indices=torch.tensor([2, 0, 3]),
        seq_lens=seq_lens,
        seq_lens_cpu=seq_lens.clone(),
        spec_info=object(),
    )
    outs = []
    for cls in (FlashAttentionBackend, FlashAttentionBackendFixed):
        for step_id in range(3):
            backend = cls(req_to_token, topk=2, speculative_num_steps=3, step_id=step_id)
            backend.init_forward_metadata(fb)
            outs.append(backend.forward_metadata)
    for a, b in zip(outs[:3], outs[3:]):
        assert a.max_seq_len_k == b.max_seq_len_k
        assert torch.equal(a.page_table, b.page_table)
        assert torch.equal(a.cu_seqlens_k, b.cu_seqlens_k)
    print("ok", [m.max_seq_len_k for m in outs[:3]])
