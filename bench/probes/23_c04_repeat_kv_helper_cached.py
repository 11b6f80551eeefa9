# source: sgl-project/sglang-omni PR #1162 (issue #1145) — the Qwen3-Omni talker code-predictor attention ran every cached decode step through a `_repeat_kv` helper (expand + reshape = a materialized copy of K/V) before SDPA; the fix passes `enable_gqa=True` instead.
import torch
import torch.nn.functional as F
from torch import nn


def _repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    if n_rep == 1:
        return hidden_states
    batch, num_kv_heads, slen, head_dim = hidden_states.shape
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_kv_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_kv_heads * n_rep, slen, head_dim)  # maybe: C (the copy is made here; whether it is wasted depends on the caller)


class PredictorAttention(nn.Module):
    def __init__(self, hidden=64, num_heads=8, num_kv_heads=2, max_len=32, max_batch=4):
        super().__init__()
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        self.head_dim = hidden // num_heads
        self.q_size, self.kv_size = num_heads * self.head_dim, num_kv_heads * self.head_dim
        self.qkv_proj = nn.Linear(hidden, self.q_size + 2 * self.kv_size, bias=False)
        self.o_proj = nn.Linear(self.q_size, hidden, bias=False)
        shape = (max_batch, num_kv_heads, max_len, self.head_dim)
        self.register_buffer("k_cache", torch.zeros(shape), persistent=False)
        self.register_buffer("v_cache", torch.zeros(shape), persistent=False)

    def _split(self, hidden_states):
        b, t, _ = hidden_states.shape
        q, k, v = self.qkv_proj(hidden_states).split([self.q_size, self.kv_size, self.kv_size], dim=-1)
        q = q.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.view(b, t, self.num_kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, t, self.num_kv_heads, self.head_dim).transpose(1, 2)
        return q, k, v

    def cached_step(self, hidden_states: torch.Tensor, cache_len: int) -> torch.Tensor:
        b = hidden_states.shape[0]
        q, k, v = self._split(hidden_states)
        layer_k = self.k_cache[:b]
        layer_v = self.v_cache[:b]
        layer_k[:, :, cache_len:cache_len + 1].copy_(k)  # basic slice of a buffer: the write lands
        layer_v[:, :, cache_len:cache_len + 1].copy_(v)
        cached_k = layer_k[:, :, :cache_len + 1]
        cached_v = layer_v[:, :, :cache_len + 1]
        n_rep = self.num_heads // self.num_kv_heads
        cached_k = _repeat_kv(cached_k, n_rep)  # want: C
        cached_v = _repeat_kv(cached_v, n_rep)  # want: C
        out = F.scaled_dot_product_attention(q, cached_k, cached_v, is_causal=False)
        return self.o_proj(out.transpose(1, 2).reshape(b, 1, self.q_size))

    def cached_step_fixed(self, hidden_states: torch.Tensor, cache_len: int) -> torch.Tensor:
        b = hidden_states.shape[0]
        q, _, _ = self._split(hidden_states)
        cached_k = self.k_cache[:b, :, :cache_len + 1]
        cached_v = self.v_cache[:b, :, :cache_len + 1]
        out = F.scaled_dot_product_attention(q, cached_k, cached_v, enable_gqa=self.num_heads != self.num_kv_heads)
        return self.o_proj(out.transpose(1, 2).reshape(b, 1, self.q_size))

    def eager_scores(self, hidden_states: torch.Tensor) -> torch.Tensor:
        q, k, _ = self._split(hidden_states)
        k = _repeat_kv(k, self.num_heads // self.num_kv_heads)  # plain matmul has no GQA flag
        return torch.matmul(q, k.transpose(2, 3)) / self.head_dim ** 0.5


if __name__ == "__main__":
    torch.manual_seed(0)
    attn = PredictorAttention()
    x = torch.randn(2, 1, 64)
    with torch.no_grad():
        ref = attn.cached_step(x, 0)
        out = attn.cached_step_fixed(x, 0)
    assert torch.allclose(ref, out, atol=1e-5) and attn.eager_scores(torch.randn(2, 3, 64)).shape == (2, 8, 3, 3)
    kv = attn.k_cache[:2, :, :1]
    assert _repeat_kv(kv, 4).untyped_storage().nbytes() == 4 * kv.numel() * kv.element_size()  # a materialized 4x copy
    print("ok: enable_gqa gives the same output without the K/V copies")
