# source: sgl-project/sglang-omni https://github.com/sgl-project/sglang-omni/pull/1164 — the Qwen3-Omni talker code-predictor attention materialized GQA K/V copies with _repeat_kv (expand + reshape) on every one of ~16 predictor steps before SDPA; the fix (closing issue #1145) passes the un-repeated cache slices with enable_gqa=True and deletes _repeat_kv.
import torch
import torch.nn as nn
import torch.nn.functional as F


def _repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    """Repeat KV heads to match the number of query heads."""
    batch, num_kv_heads, seq_len, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(
        batch, num_kv_heads, n_rep, seq_len, head_dim
    )
    return hidden_states.reshape(batch, num_kv_heads * n_rep, seq_len, head_dim)  # want: C


class PredictorAttn(nn.Module):
    def __init__(self, hidden, num_heads, num_kv_heads):
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = hidden // num_heads
        self.q_size = num_heads * self.head_dim
        self.kv_size = num_kv_heads * self.head_dim
        self.qkv_proj = nn.Linear(hidden, self.q_size + 2 * self.kv_size, bias=False)
        self.o_proj = nn.Linear(self.q_size, hidden, bias=False)


class CodePredictor(nn.Module):
    def __init__(self, hidden=64, num_heads=4, num_kv_heads=2, layers=2, max_len=16, max_bs=4):
        super().__init__()
        self.layers = nn.ModuleList(PredictorAttn(hidden, num_heads, num_kv_heads) for _ in range(layers))
        hd = hidden // num_heads
        self._predictor_k_cache = torch.zeros(layers, max_bs, num_kv_heads, max_len, hd)
        self._predictor_v_cache = torch.zeros(layers, max_bs, num_kv_heads, max_len, hd)

    def _predictor_cached_self_attention(self, *, layer_idx, attn, hidden_states, batch_size, cache_len):
        _, seq_len, hidden_size = hidden_states.shape
        if seq_len != 1:
            raise ValueError("Cached predictor attention expects exactly one token")
        flat_hidden = hidden_states.reshape(-1, hidden_size)
        qkv = attn.qkv_proj(flat_hidden)
        q, k, v = qkv.split([attn.q_size, attn.kv_size, attn.kv_size], dim=-1)

        q = q.reshape(batch_size, 1, attn.num_heads, attn.head_dim).transpose(1, 2)
        k = k.reshape(batch_size, 1, attn.num_kv_heads, attn.head_dim).transpose(1, 2)
        v = v.reshape(batch_size, 1, attn.num_kv_heads, attn.head_dim).transpose(1, 2)

        layer_k_cache = self._predictor_k_cache[layer_idx, :batch_size]
        layer_v_cache = self._predictor_v_cache[layer_idx, :batch_size]
        layer_k_cache[:, :, cache_len : cache_len + 1, :].copy_(k)
        layer_v_cache[:, :, cache_len : cache_len + 1, :].copy_(v)

        cached_k = layer_k_cache[:, :, : cache_len + 1, :]
        cached_v = layer_v_cache[:, :, : cache_len + 1, :]
        num_kv_groups = attn.num_heads // attn.num_kv_heads
        cached_k = _repeat_kv(cached_k, num_kv_groups)  # want: C
        cached_v = _repeat_kv(cached_v, num_kv_groups)  # want: C

        attn_output = F.scaled_dot_product_attention(q, cached_k, cached_v, is_causal=False)
        attn_output = attn_output.transpose(1, 2).reshape(batch_size, attn.num_heads * attn.head_dim)
        attn_output = attn.o_proj(attn_output)
        return attn_output.reshape(batch_size, 1, hidden_size)

    # fixed version (after #1164)
    def _predictor_cached_self_attention_gqa(self, *, layer_idx, attn, hidden_states, batch_size, cache_len):
        _, seq_len, hidden_size = hidden_states.shape
        flat_hidden = hidden_states.reshape(-1, hidden_size)
        qkv = attn.qkv_proj(flat_hidden)
        q, k, v = qkv.split([attn.q_size, attn.kv_size, attn.kv_size], dim=-1)
        q = q.reshape(batch_size, 1, attn.num_heads, attn.head_dim).transpose(1, 2)
        k = k.reshape(batch_size, 1, attn.num_kv_heads, attn.head_dim).transpose(1, 2)
        v = v.reshape(batch_size, 1, attn.num_kv_heads, attn.head_dim).transpose(1, 2)
        layer_k_cache = self._predictor_k_cache[layer_idx, :batch_size]
        layer_v_cache = self._predictor_v_cache[layer_idx, :batch_size]
        layer_k_cache[:, :, cache_len : cache_len + 1, :].copy_(k)
        layer_v_cache[:, :, cache_len : cache_len + 1, :].copy_(v)
        cached_k = layer_k_cache[:, :, : cache_len + 1, :]
        cached_v = layer_v_cache[:, :, : cache_len + 1, :]
        # enable_gqa broadcasts KV heads in-kernel (#1145)
        attn_output = F.scaled_dot_product_attention(
            q, cached_k, cached_v, is_causal=False,
            enable_gqa=attn.num_heads != attn.num_kv_heads,
        )
        attn_output = attn_output.transpose(1, 2).reshape(batch_size, attn.num_heads * attn.head_dim)
        attn_output = attn.o_proj(attn_output)
        return attn_output.reshape(batch_size, 1, hidden_size)

    def run(self, hidden, steps, fixed=False):
        bs = hidden.shape[0]
        fn = self._predictor_cached_self_attention_gqa if fixed else self._predictor_cached_self_attention
        outs = []
        for step in range(steps):  # ~16-step AR loop per talker token
            h = hidden
            for layer_idx, attn in enumerate(self.layers):
                h = h + fn(layer_idx=layer_idx, attn=attn, hidden_states=h, batch_size=bs, cache_len=step)
            outs.append(h)
        return outs[-1]


if __name__ == "__main__":
    torch.manual_seed(0)
    m = CodePredictor()
    x = torch.randn(2, 1, 64)
    with torch.no_grad():
        a = m.run(x, 15)
        b = m.run(x, 15, fixed=True)
    assert torch.allclose(a, b, atol=1e-5)
    print("ok", a.shape)
