# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/29415 — In the DSA attention backend, `_apply_cuda_graph_metadata` (run before every target-verify CUDA-graph replay) built the constant per-request query lengths as `torch.tensor([num_draft_tokens] * bs, device=cuda)`, a pageable host-to-device copy that triggers a cudaStreamSynchronize (~8.5 ms/step on GB200) and blocks the host on the whole queued stream. The fix fills the same values on device with `torch.full((bs,), num_draft_tokens, ...)`.
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class DSAMetadata:
    cache_seqlens_int32: torch.Tensor
    cu_seqlens_q: torch.Tensor
    cu_seqlens_k: torch.Tensor
    page_table_1: torch.Tensor
    dsa_seqlens_expanded: torch.Tensor
    dsa_cache_seqlens_int32: torch.Tensor


def compute_dsa_seqlens(seqlens_expanded: torch.Tensor, dsa_index_topk: int) -> torch.Tensor:
    return seqlens_expanded.clamp(max=dsa_index_topk)


class DeepseekSparseAttnBackend:
    def __init__(self, req_to_token: torch.Tensor, speculative_num_draft_tokens: int, dsa_index_topk: int, max_bs: int, device):
        self.req_to_token = req_to_token
        self.speculative_num_draft_tokens = speculative_num_draft_tokens
        self.dsa_index_topk = dsa_index_topk
        self.device = device
        max_num_tokens = max_bs * speculative_num_draft_tokens
        max_context_len = req_to_token.shape[1]
        self.decode_cuda_graph_metadata = DSAMetadata(
            cache_seqlens_int32=torch.zeros(max_bs, dtype=torch.int32, device=device),
            cu_seqlens_q=torch.zeros(max_bs + 1, dtype=torch.int32, device=device),
            cu_seqlens_k=torch.zeros(max_bs + 1, dtype=torch.int32, device=device),
            page_table_1=torch.zeros(max_num_tokens, max_context_len, dtype=torch.int32, device=device),
            dsa_seqlens_expanded=torch.zeros(max_num_tokens, dtype=torch.int32, device=device),
            dsa_cache_seqlens_int32=torch.zeros(max_num_tokens, dtype=torch.int32, device=device),
        )

    def _apply_cuda_graph_metadata(self, metadata: DSAMetadata, bs: int, req_pool_indices, seq_lens, seq_lens_cpu):
        """Target-verify replay: refresh the captured metadata buffers in place."""
        max_seqlen_k = int(seq_lens_cpu.max().item() + self.speculative_num_draft_tokens)

        cache_seqlens = (seq_lens + self.speculative_num_draft_tokens).to(torch.int32)
        metadata.cache_seqlens_int32[:bs].copy_(cache_seqlens)
        metadata.cu_seqlens_k[1 : bs + 1].copy_(torch.cumsum(cache_seqlens, dim=0, dtype=torch.int32))
        page_indices = self.req_to_token[req_pool_indices, :max_seqlen_k]
        page_indices = torch.repeat_interleave(page_indices, repeats=self.speculative_num_draft_tokens, dim=0)
        metadata.page_table_1[: bs * self.speculative_num_draft_tokens, :max_seqlen_k].copy_(page_indices)

        extend_seq_lens_cpu = [self.speculative_num_draft_tokens] * bs
        extend_seq_lens = torch.tensor(extend_seq_lens_cpu, dtype=torch.int32, device=self.device)  # want: D
        metadata.cu_seqlens_q[1 : bs + 1].copy_(torch.cumsum(extend_seq_lens, dim=0, dtype=torch.int32))

        # per draft token causal kv length: kv_len - qo_len + 1 ... kv_len
        qo_len = self.speculative_num_draft_tokens
        offsets = torch.arange(qo_len, dtype=torch.int32, device=self.device).repeat(bs)
        seqlens_expanded = cache_seqlens.repeat_interleave(qo_len) - (qo_len - 1) + offsets
        n = seqlens_expanded.shape[0]
        metadata.dsa_seqlens_expanded[:n].copy_(seqlens_expanded)
        metadata.dsa_cache_seqlens_int32[:n].copy_(compute_dsa_seqlens(seqlens_expanded, self.dsa_index_topk))
        return metadata


class DeepseekSparseAttnBackendFixed(DeepseekSparseAttnBackend):
    def _apply_cuda_graph_metadata(self, metadata: DSAMetadata, bs: int, req_pool_indices, seq_lens, seq_lens_cpu):
        """Target-verify replay: refresh the captured metadata buffers in place."""
        max_seqlen_k = int(seq_lens_cpu.max().item() + self.speculative_num_draft_tokens)

        cache_seqlens = (seq_lens + self.speculative_num_draft_tokens).to(torch.int32)
        metadata.cache_seqlens_int32[:bs].copy_(cache_seqlens)
        metadata.cu_seqlens_k[1 : bs + 1].copy_(torch.cumsum(cache_seqlens, dim=0, dtype=torch.int32))
        page_indices = self.req_to_token[req_pool_indices, :max_seqlen_k]
        page_indices = torch.repeat_interleave(page_indices, repeats=self.speculative_num_draft_tokens, dim=0)
        metadata.page_table_1[: bs * self.speculative_num_draft_tokens, :max_seqlen_k].copy_(page_indices)

        # Fill the constant per-req qo lengths (num_draft_tokens) on-device.
        extend_seq_lens = torch.full(
            (bs,),
            self.speculative_num_draft_tokens,
            dtype=torch.int32,
            device=self.device,
        )
        metadata.cu_seqlens_q[1 : bs + 1].copy_(torch.cumsum(extend_seq_lens, dim=0, dtype=torch.int32))

        # per draft token causal kv length: kv_len - qo_len + 1 ... kv_len
        qo_len = self.speculative_num_draft_tokens
        offsets = torch.arange(qo_len, dtype=torch.int32, device=self.device).repeat(bs)
        seqlens_expanded = cache_seqlens.repeat_interleave(qo_len) - (qo_len - 1) + offsets
        n = seqlens_expanded.shape[0]
        metadata.dsa_seqlens_expanded[:n].copy_(seqlens_expanded)
        metadata.dsa_cache_seqlens_int32[:n].copy_(compute_dsa_seqlens(seqlens_expanded, self.dsa_index_topk))
        return metadata


if __name__ == "__main__":
    device = torch.device("cpu")
    req_to_token = torch.arange(6 * 40, dtype=torch.int32).view(6, 40)
    bs = 3
    req_pool_indices = torch.tensor([4, 0, 2])
    seq_lens_cpu = torch.tensor([11, 7, 20], dtype=torch.int32)
    seq_lens = seq_lens_cpu.to(device)

    backend = DeepseekSparseAttnBackend(req_to_token, speculative_num_draft_tokens=3, dsa_index_topk=16, max_bs=4, device=device)
    backend_fixed = DeepseekSparseAttnBackendFixed(req_to_token, speculative_num_draft_tokens=3, dsa_index_topk=16, max_bs=4, device=device)
    for step in range(3):
        m = backend._apply_cuda_graph_metadata(backend.decode_cuda_graph_metadata, bs, req_pool_indices, seq_lens + step, seq_lens_cpu + step)
        mf = backend_fixed._apply_cuda_graph_metadata(backend_fixed.decode_cuda_graph_metadata, bs, req_pool_indices, seq_lens + step, seq_lens_cpu + step)
        for name in m.__dataclass_fields__:
            assert torch.equal(getattr(m, name), getattr(mf, name)), name
    assert m.cu_seqlens_q[: bs + 1].tolist() == [0, 3, 6, 9]
    print("ok", m.dsa_seqlens_expanded[:9].tolist())
