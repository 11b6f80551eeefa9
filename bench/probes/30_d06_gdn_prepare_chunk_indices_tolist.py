# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/38361 — during GDN prefill, the @tensor_cache-decorated prepare_chunk_indices() called `.tolist()` on the device cu_seqlens (via cdiv(prepare_lens(...))), a blocking GPU->CPU sync on the first call of every step. The fix pre-computes chunk_indices/chunk_offsets on the host in GDNAttentionMetadataBuilder.build() from query_start_loc_cpu, copies them to the GPU non_blocking, and threads them through the FLA op so the cached helper is skipped.
import functools
from dataclasses import dataclass
from typing import Optional

import torch

FLA_CHUNK_SIZE = 64


def tensor_cache(fn):
    last_args = None
    last_kwargs = None
    last_result = None

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        nonlocal last_args, last_kwargs, last_result
        if last_args is not None and last_kwargs is not None:
            if len(args) == len(last_args) and len(kwargs) == len(last_kwargs):
                if all(a is b for a, b in zip(args, last_args)) and all(
                    k in last_kwargs and v is last_kwargs[k] for k, v in kwargs.items()
                ):
                    return last_result
        result = fn(*args, **kwargs)
        last_args, last_kwargs, last_result = args, kwargs, result
        return result

    return wrapper


def cdiv(a, b):
    return (a + b - 1) // b


@tensor_cache
def prepare_lens(cu_seqlens: torch.LongTensor) -> torch.LongTensor:
    return cu_seqlens[1:] - cu_seqlens[:-1]


@tensor_cache
def prepare_chunk_indices(cu_seqlens: torch.LongTensor, chunk_size: int) -> torch.LongTensor:
    indices = torch.cat([torch.arange(n) for n in cdiv(prepare_lens(cu_seqlens), chunk_size).tolist()])  # want: D
    return torch.stack([indices.eq(0).cumsum(0) - 1, indices], 1).to(cu_seqlens)


@tensor_cache
def prepare_chunk_offsets(cu_seqlens: torch.LongTensor, chunk_size: int) -> torch.LongTensor:
    return torch.cat([cu_seqlens.new_tensor([0]), cdiv(prepare_lens(cu_seqlens), chunk_size)]).cumsum(-1)


def chunk_local_cumsum(g, cu_seqlens=None, chunk_indices=None, chunk_size=FLA_CHUNK_SIZE):
    # reference for the Triton kernel: one program per (sequence, chunk) row of chunk_indices
    if chunk_indices is None and cu_seqlens is not None:
        chunk_indices = prepare_chunk_indices(cu_seqlens, chunk_size)
    out = torch.empty_like(g)
    starts = cu_seqlens[chunk_indices[:, 0]] + chunk_indices[:, 1] * chunk_size
    ends = torch.minimum(starts + chunk_size, cu_seqlens[chunk_indices[:, 0] + 1])
    pos = torch.arange(g.shape[0], device=g.device)
    chunk_of_pos = torch.searchsorted(starts, pos, right=True) - 1
    seg_start = starts[chunk_of_pos]
    csum = g.cumsum(0)
    base = torch.where(seg_start > 0, csum[(seg_start - 1).clamp(min=0)], torch.zeros_like(csum[0]))
    out = csum - base
    return out, ends


@dataclass
class GDNAttentionMetadata:
    num_prefills: int
    non_spec_query_start_loc: Optional[torch.Tensor] = None
    chunk_indices: Optional[torch.Tensor] = None
    chunk_offsets: Optional[torch.Tensor] = None


class GDNAttentionMetadataBuilder:
    def __init__(self, device):
        self.device = device

    def build(self, query_start_loc, query_start_loc_cpu, num_prefills):
        return GDNAttentionMetadata(num_prefills=num_prefills, non_spec_query_start_loc=query_start_loc)


class GDNAttentionMetadataBuilderFixed(GDNAttentionMetadataBuilder):
    def build(self, query_start_loc, query_start_loc_cpu, num_prefills):
        chunk_indices = chunk_offsets = None
        if num_prefills > 0:
            # cu_seqlens already lives on the host: build the chunk grid there, ship it async
            cu_seqlens_cpu = query_start_loc_cpu
            chunk_indices = prepare_chunk_indices(cu_seqlens_cpu, FLA_CHUNK_SIZE).to(self.device, non_blocking=True)
            chunk_offsets = prepare_chunk_offsets(cu_seqlens_cpu, FLA_CHUNK_SIZE).to(self.device, non_blocking=True)
        return GDNAttentionMetadata(num_prefills, query_start_loc, chunk_indices, chunk_offsets)


def gdn_prefill_forward(g, attn_metadata):
    return chunk_local_cumsum(g, cu_seqlens=attn_metadata.non_spec_query_start_loc,
                              chunk_indices=attn_metadata.chunk_indices)


if __name__ == "__main__":
    device = torch.device("cpu")
    seq_lens = [100, 7, 300, 64]
    qsl_cpu = torch.tensor([0] + seq_lens).cumsum(0)
    g = torch.randn(int(sum(seq_lens)))
    outs = []
    for builder_cls in (GDNAttentionMetadataBuilder, GDNAttentionMetadataBuilderFixed):
        # a fresh device tensor every step defeats the identity-keyed cache -> sync every step
        md = builder_cls(device).build(qsl_cpu.to(device).clone(), qsl_cpu, num_prefills=len(seq_lens))
        outs.append(gdn_prefill_forward(g, md)[0])
    ref = prepare_chunk_indices(qsl_cpu.clone(), FLA_CHUNK_SIZE)
    fixed_md = GDNAttentionMetadataBuilderFixed(device).build(qsl_cpu, qsl_cpu, len(seq_lens))
    assert torch.equal(ref, fixed_md.chunk_indices)
    assert torch.allclose(outs[0], outs[1])
    print("chunk_indices rows:", ref.shape[0])
