# source: NVIDIA/TensorRT-LLM https://github.com/NVIDIA/TensorRT-LLM/pull/12736 — Mamba2Metadata.prepare() (run every chunked-prefill step) called cu_seqlens_to_chunk_indices_offsets_triton, which sized its output with `cu[-1].item()` and `p[-1].item()` on the device cu_seqlens, two GPU->CPU syncs per step that left bubbles before the forward; the fix passes `total_seqlens=num_ctx_tokens` and an `extra_chunks` count computed from the host-side seq_lens.
from types import SimpleNamespace

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _cu_seqlens_kernel(cu, chunk_indices, chunk_offsets, num_seqs, chunk_size, N):
    """Stand-in for the `_cu_seqlens_triton_kernel[grid](...)` launch: device ops only."""
    offsets = torch.arange(N, device=cu.device)
    idx, off = offsets.clone(), torch.zeros(N, dtype=torch.int64, device=cu.device)
    p = torch.zeros((), dtype=torch.int64, device=cu.device)
    for seq_idx in range(num_seqs - 1):
        seq_start, seq_end = cu[seq_idx + 1], cu[seq_idx + 2]
        p = p + (seq_start % chunk_size > 0).long()
        s_chunk = seq_start // chunk_size + p
        e_chunk = seq_end // chunk_size + p + (seq_end % chunk_size > 0).long()
        idx = torch.where((offsets >= s_chunk) & (offsets < e_chunk), idx - p, idx)
        off = torch.where(offsets == s_chunk, seq_start % chunk_size, off)
    chunk_indices.copy_(idx), chunk_offsets.copy_(off)


def cu_seqlens_to_chunk_indices_offsets_triton(cu_seqlens, chunk_size):
    device, num_seqs = cu_seqlens.device, cu_seqlens.numel() - 1
    cu = cu_seqlens.to(dtype=torch.int64)
    total_seqlens = cu[-1].item()  # want: D
    misaligned = ((cu[1:-1] % chunk_size) > 0).to(torch.int64)
    p = torch.cumsum(misaligned, dim=0)
    extra_chunks = p[-1].item() if p.numel() > 0 else 0  # want: D
    N = (total_seqlens + chunk_size - 1) // chunk_size + extra_chunks
    chunk_indices = torch.empty(N, device=device, dtype=torch.int)
    chunk_offsets = torch.empty(N, device=device, dtype=torch.int)
    _cu_seqlens_kernel(cu, chunk_indices, chunk_offsets, num_seqs, chunk_size, N)
    return chunk_indices, chunk_offsets


def compute_extra_chunks_cpu(seq_lens, num_seqs: int, chunk_size: int) -> int:
    cumsum, extra = 0, 0
    for i in range(num_seqs - 1):
        cumsum += int(seq_lens[i])  # host list / CPU tensor: no device round-trip
        if cumsum % chunk_size != 0:
            extra += 1
    return extra


def cu_seqlens_to_chunk_indices_offsets_triton_fixed(cu_seqlens, chunk_size, total_seqlens, extra_chunks):
    device, num_seqs = cu_seqlens.device, cu_seqlens.numel() - 1
    cu = cu_seqlens.to(dtype=torch.int64)
    N = (total_seqlens + chunk_size - 1) // chunk_size + extra_chunks
    chunk_indices = torch.empty(N, device=device, dtype=torch.int)
    chunk_offsets = torch.empty(N, device=device, dtype=torch.int)
    _cu_seqlens_kernel(cu, chunk_indices, chunk_offsets, num_seqs, chunk_size, N)
    return chunk_indices, chunk_offsets


class Mamba2Metadata:
    def __init__(self, max_batch_size: int, chunk_size: int, fixed: bool = False):
        self.chunk_size, self.fixed = chunk_size, fixed
        self.cu_seqlens = torch.zeros(max_batch_size + 1, dtype=torch.int, device=DEVICE)

    def prepare(self, attn_metadata):
        num_contexts = attn_metadata.num_contexts
        context_lens = attn_metadata.seq_lens_cuda[:num_contexts]
        torch.cumsum(context_lens, dim=0, dtype=torch.int, out=self.cu_seqlens[1:num_contexts + 1])
        cached = attn_metadata.kv_cache_params.num_cached_tokens_per_seq
        self.use_initial_states = any(cached[i] > 0 for i in range(num_contexts))
        if not self.use_initial_states:
            self.chunk_indices = self.chunk_offsets = None
        elif not self.fixed:
            self.chunk_indices, self.chunk_offsets = cu_seqlens_to_chunk_indices_offsets_triton(
                self.cu_seqlens[:num_contexts + 1], self.chunk_size)
        else:
            extra_chunks = compute_extra_chunks_cpu(attn_metadata.seq_lens, num_contexts, self.chunk_size)
            self.chunk_indices, self.chunk_offsets = cu_seqlens_to_chunk_indices_offsets_triton_fixed(
                self.cu_seqlens[:num_contexts + 1], self.chunk_size,
                total_seqlens=attn_metadata.num_ctx_tokens, extra_chunks=extra_chunks)


if __name__ == "__main__":
    seq_lens = torch.tensor([5, 10, 8], dtype=torch.int)  # host copy kept by the attention metadata
    attn_metadata = SimpleNamespace(
        num_contexts=3, num_ctx_tokens=int(seq_lens.sum()), seq_lens=seq_lens,
        seq_lens_cuda=seq_lens.to(DEVICE),
        kv_cache_params=SimpleNamespace(num_cached_tokens_per_seq=[0, 16, 0]))
    a, b = Mamba2Metadata(8, chunk_size=8), Mamba2Metadata(8, chunk_size=8, fixed=True)
    a.prepare(attn_metadata)
    b.prepare(attn_metadata)
    assert torch.equal(a.chunk_indices, b.chunk_indices) and torch.equal(a.chunk_offsets, b.chunk_offsets)
    print("chunk_indices", a.chunk_indices.tolist(), "chunk_offsets", a.chunk_offsets.tolist())
