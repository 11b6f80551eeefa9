# source: ecmwf/WeatherGenerator issue #1531 ("Max calculation inside of forward creates CUDA sync") — the varlen attention blocks pass `x_lens.max()` / `x_q_lens.max()` / `x_kv_lens.max()` as flash_attn_varlen_func's max_seqlen ints inside forward, one device->host read per call per layer
import operator
from functools import partial

import torch
import torch.nn.functional as F


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                           softcap=0.0, dropout_p=0.0):
    """CPU stand-in for flash_attn.flash_attn_varlen_func; the CUDA op takes max_seqlen_* as C++ ints."""
    max_seqlen_q = operator.index(max_seqlen_q)  # maybe: D (stands in for the extension's int conversion; the caller chose to pass a tensor)
    max_seqlen_k = operator.index(max_seqlen_k)  # maybe: D (same)
    tq, tk = q.shape[0], k.shape[0]
    seg_q = torch.searchsorted(cu_seqlens_q[1:], torch.arange(tq, dtype=cu_seqlens_q.dtype), right=True)
    seg_k = torch.searchsorted(cu_seqlens_k[1:], torch.arange(tk, dtype=cu_seqlens_k.dtype), right=True)
    mask = seg_q[:, None] == seg_k[None, :]
    out = F.scaled_dot_product_attention(q.transpose(0, 1).float(), k.transpose(0, 1).float(),
                                         v.transpose(0, 1).float(), attn_mask=mask, dropout_p=dropout_p)
    return out.transpose(0, 1).to(v.dtype)


class BaseAttention(torch.nn.Module):
    def __init__(self, num_heads, dropout_rate=0.0, with_residual=True, attention_dtype=torch.bfloat16):
        super().__init__()
        self.num_heads = num_heads
        self.with_residual = with_residual
        self.dtype = attention_dtype
        self.dropout_rate = dropout_rate
        self.norm = partial(torch.nn.LayerNorm, elementwise_affine=False)


class MultiSelfAttentionHeadVarlen(BaseAttention):
    def __init__(self, dim_embed, num_heads, softcap=0.0, **kwargs):
        super().__init__(num_heads=num_heads, **kwargs)
        self.softcap = softcap
        self.dim_head_proj = dim_embed // num_heads
        self.lnorm = self.norm(dim_embed, eps=1e-5)
        self.proj_heads_q = torch.nn.Linear(dim_embed, dim_embed, bias=False)
        self.proj_heads_k = torch.nn.Linear(dim_embed, dim_embed, bias=False)
        self.proj_heads_v = torch.nn.Linear(dim_embed, dim_embed, bias=False)
        self.proj_out = torch.nn.Linear(dim_embed, dim_embed, bias=False)

    def forward(self, x, x_lens):
        x_in = x
        x = self.lnorm(x)
        s = [x.shape[0], self.num_heads, x.shape[-1] // self.num_heads]
        qs = self.proj_heads_q(x).reshape(s).to(self.dtype)
        ks = self.proj_heads_k(x).reshape(s).to(self.dtype)
        vs = self.proj_heads_v(x).reshape(s)
        dropout_rate = self.dropout_rate if self.training else 0.0
        cum_x_lens = F.pad(torch.cumsum(x_lens, 0, dtype=torch.int32), (1, 0))
        outs = flash_attn_varlen_func(
            qs,
            ks,
            vs,
            cum_x_lens,
            cum_x_lens,
            x_lens.max(),  # want: D
            x_lens.max(),  # want: D
            softcap=self.softcap,
            dropout_p=dropout_rate,
        )
        out = self.proj_out(outs.flatten(-2, -1).to(x.dtype))
        return out + x_in if self.with_residual else out


class MultiCrossAttentionHeadVarlen(BaseAttention):
    def __init__(self, dim_embed_q, dim_embed_kv, num_heads, **kwargs):
        super().__init__(num_heads=num_heads, **kwargs)
        self.dim_head_proj = dim_embed_q // num_heads
        self.lnorm_in_q = self.norm(dim_embed_q, eps=1e-5)
        self.lnorm_in_kv = self.norm(dim_embed_kv, eps=1e-5)
        self.proj_heads_q = torch.nn.Linear(dim_embed_q, num_heads * self.dim_head_proj, bias=False)
        self.proj_heads_k = torch.nn.Linear(dim_embed_kv, num_heads * self.dim_head_proj, bias=False)
        self.proj_heads_v = torch.nn.Linear(dim_embed_kv, num_heads * self.dim_head_proj, bias=False)
        self.proj_out = torch.nn.Linear(self.dim_head_proj * num_heads, dim_embed_q, bias=False)

    def forward(self, x_q, x_kv, x_q_lens=None, x_kv_lens=None, max_lens=None):
        x_q_in = x_q
        x_q, x_kv = self.lnorm_in_q(x_q), self.lnorm_in_kv(x_kv)
        qs = self.proj_heads_q(x_q).reshape(x_q.shape[0], self.num_heads, -1).to(self.dtype)
        ks = self.proj_heads_k(x_kv).reshape(x_kv.shape[0], self.num_heads, -1).to(self.dtype)
        vs = self.proj_heads_v(x_kv).reshape(x_kv.shape[0], self.num_heads, -1)
        cum_q = F.pad(torch.cumsum(x_q_lens, 0, dtype=torch.int32), (1, 0))
        cum_kv = F.pad(torch.cumsum(x_kv_lens, 0, dtype=torch.int32), (1, 0))
        if max_lens is not None:
            max_q, max_kv = max_lens  # host ints computed once per batch by the data pipeline
            outs = flash_attn_varlen_func(qs, ks, vs, cum_q, cum_kv, max_q, max_kv)
        else:
            outs = flash_attn_varlen_func(
                qs,
                ks,
                vs,
                cum_q,
                cum_kv,
                x_q_lens.max(),  # want: D
                x_kv_lens.max(),  # want: D
            )
        return self.proj_out(outs.flatten(-2, -1).to(x_q.dtype)) + x_q_in


def collate(lengths):
    """Runs in the DataLoader worker: the lengths are host data, so max() here costs nothing."""
    x_lens = torch.tensor(lengths, dtype=torch.int32)
    return x_lens, max(lengths)


if __name__ == "__main__":
    torch.manual_seed(0)
    x_lens, max_len = collate([3, 5, 2])
    kv_lens, max_kv = collate([4, 4, 4])
    x = torch.randn(int(x_lens.sum()), 32)
    kv = torch.randn(int(kv_lens.sum()), 16)
    self_attn = MultiSelfAttentionHeadVarlen(32, 4)
    cross = MultiCrossAttentionHeadVarlen(32, 16, 4)
    with torch.no_grad():
        y = self_attn(x, x_lens)
        z1 = cross(y, kv, x_lens, kv_lens)
        z2 = cross(y, kv, x_lens, kv_lens, max_lens=(max_len, max_kv))
    assert torch.allclose(z1, z2) and y.shape == x.shape
    print("ok:", tuple(z1.shape))
