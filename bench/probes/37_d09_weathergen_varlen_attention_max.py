# source: ecmwf/WeatherGenerator https://github.com/ecmwf/WeatherGenerator/issues/1531 — `MultiCrossAttentionHeadVarlen.forward` passed `x_q_lens.max()` and `x_kv_lens.max()` (0-dim device tensors) as the integer `max_seqlen` arguments of `flash_attn_varlen_func`, which forces a CUDA sync inside every attention call and blocks `torch.compile`. Maintainers agreed, and PR #1532 moves the max computation up the call stack so the module receives host ints computed once per batch.
from functools import partial

import torch
import torch.nn.functional as F


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softcap=0.0, dropout_p=0.0):
    max_seqlen_q, max_seqlen_k = int(max_seqlen_q), int(max_seqlen_k)
    cq = [0] + cu_seqlens_q.tolist()
    ck = [0] + cu_seqlens_k.tolist()
    out = torch.empty_like(q)
    for (qs, qe), (ks, ke) in zip(zip(cq[:-1], cq[1:]), zip(ck[:-1], ck[1:])):
        assert qe - qs <= max_seqlen_q and ke - ks <= max_seqlen_k
        o = F.scaled_dot_product_attention(q[qs:qe].transpose(0, 1), k[ks:ke].transpose(0, 1), v[ks:ke].transpose(0, 1))
        out[qs:qe] = o.transpose(0, 1)
    return out


class MultiCrossAttentionHeadVarlen(torch.nn.Module):
    def __init__(self, dim_embed_q, dim_embed_kv, num_heads, dropout_rate=0.0, softcap=0.0, norm_eps=1e-5):
        super().__init__()
        self.num_heads, self.dropout_rate, self.softcap = num_heads, dropout_rate, softcap
        self.dim_head_proj = dim_embed_q // num_heads
        norm = partial(torch.nn.LayerNorm, elementwise_affine=False, eps=norm_eps)
        self.lnorm_in_q, self.lnorm_in_kv = norm(dim_embed_q), norm(dim_embed_kv)
        self.proj_heads_q = torch.nn.Linear(dim_embed_q, num_heads * self.dim_head_proj, bias=False)
        self.proj_heads_k = torch.nn.Linear(dim_embed_kv, num_heads * self.dim_head_proj, bias=False)
        self.proj_heads_v = torch.nn.Linear(dim_embed_kv, num_heads * self.dim_head_proj, bias=False)
        self.proj_out = torch.nn.Linear(self.dim_head_proj * num_heads, dim_embed_q, bias=False)

    def _project(self, x_q, x_kv):
        x_q, x_kv = self.lnorm_in_q(x_q), self.lnorm_in_kv(x_kv)
        qs = self.proj_heads_q(x_q).reshape([x_q.shape[0], self.num_heads, self.dim_head_proj])
        s = [x_kv.shape[0], self.num_heads, self.dim_head_proj]
        return qs, self.proj_heads_k(x_kv).reshape(s), self.proj_heads_v(x_kv).reshape(s)

    def forward(self, x_q, x_kv, x_q_lens=None, x_kv_lens=None):
        qs, ks, vs = self._project(x_q, x_kv)
        dropout_rate = self.dropout_rate if self.training else 0.0
        cum_x_q_lens = torch.cumsum(x_q_lens, 0, dtype=torch.int32)
        cum_x_kv_lens = torch.cumsum(x_kv_lens, 0, dtype=torch.int32)
        outs = flash_attn_varlen_func(
            qs, ks, vs, cum_x_q_lens, cum_x_kv_lens,
            x_q_lens.max(),  # want: D
            x_kv_lens.max(),  # want: D
            softcap=self.softcap, dropout_p=dropout_rate,
        )
        return x_q + self.proj_out(outs.flatten(-2, -1))


class MultiCrossAttentionHeadVarlenFixed(MultiCrossAttentionHeadVarlen):
    def forward(self, x_q, x_kv, x_q_lens=None, x_kv_lens=None, x_q_lens_max=None, x_kv_lens_max=None):
        qs, ks, vs = self._project(x_q, x_kv)
        dropout_rate = self.dropout_rate if self.training else 0.0
        cum_x_q_lens = torch.cumsum(x_q_lens, 0, dtype=torch.int32)
        cum_x_kv_lens = torch.cumsum(x_kv_lens, 0, dtype=torch.int32)
        outs = flash_attn_varlen_func(
            qs, ks, vs, cum_x_q_lens, cum_x_kv_lens, x_q_lens_max, x_kv_lens_max,
            softcap=self.softcap, dropout_p=dropout_rate,
        )
        return x_q + self.proj_out(outs.flatten(-2, -1))


if __name__ == "__main__":
    torch.manual_seed(0)
    q_lens_host, kv_lens_host = [3, 5, 2], [4, 6, 1]
    x_q, x_kv = torch.randn(sum(q_lens_host), 16), torch.randn(sum(kv_lens_host), 12)
    q_lens, kv_lens = torch.tensor(q_lens_host), torch.tensor(kv_lens_host)
    a = MultiCrossAttentionHeadVarlen(16, 12, num_heads=4)
    b = MultiCrossAttentionHeadVarlenFixed(16, 12, num_heads=4)
    b.load_state_dict(a.state_dict())
    # the fixed caller computes the maxima once, higher up, from host data
    q_max, kv_max = max(q_lens_host), max(kv_lens_host)
    for _ in range(2):
        ya = a(x_q, x_kv, q_lens, kv_lens)
        yb = b(x_q, x_kv, q_lens, kv_lens, x_q_lens_max=q_max, x_kv_lens_max=kv_max)
        assert torch.allclose(ya, yb)
    print("ok")
