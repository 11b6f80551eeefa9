# source: sgl-project/sglang-omni https://github.com/sgl-project/sglang-omni/pull/1162 — The Qwen3-Omni talker code-predictor attention materialized K/V head copies with a `_repeat_kv` helper before every SDPA call, both in the direct path and in the per-step cached decode path. SDPA already broadcasts KV heads natively with enable_gqa=True, so the fix drops `_repeat_kv` and passes `enable_gqa=(attn.num_heads != attn.num_kv_heads)` to SDPA.
import torch
import torch.nn as nn
import torch.nn.functional as F


class PredictorAttention(nn.Module):
    def __init__(self, hidden_size=32, num_heads=4, num_kv_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = hidden_size // num_heads
        self.q_size = num_heads * self.head_dim
        self.kv_size = num_kv_heads * self.head_dim
        self.qkv_proj = nn.Linear(hidden_size, self.q_size + 2 * self.kv_size, bias=False)
        self.o_proj = nn.Linear(self.q_size, hidden_size, bias=False)


def _repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    if n_rep == 1:
        return hidden_states
    return torch.repeat_interleave(hidden_states, repeats=n_rep, dim=1)  # want: C


class CodePredictorRunner:
    def __init__(self, layers, max_len=16, batch_size=1):
        self.layers = layers
        a = layers[0]
        self.k_cache = [torch.zeros(batch_size, a.num_kv_heads, max_len, a.head_dim) for _ in layers]
        self.v_cache = [torch.zeros(batch_size, a.num_kv_heads, max_len, a.head_dim) for _ in layers]

    def _split_heads(self, attn, hidden_states):
        bsz, seq_len, _ = hidden_states.shape
        q, k, v = attn.qkv_proj(hidden_states).split([attn.q_size, attn.kv_size, attn.kv_size], dim=-1)
        q = q.view(bsz, seq_len, attn.num_heads, attn.head_dim).transpose(1, 2)
        k = k.view(bsz, seq_len, attn.num_kv_heads, attn.head_dim).transpose(1, 2)
        v = v.view(bsz, seq_len, attn.num_kv_heads, attn.head_dim).transpose(1, 2)
        return q, k, v

    def _direct_self_attention(self, attn, hidden_states):
        bsz, seq_len, _ = hidden_states.shape
        q, k, v = self._split_heads(attn, hidden_states)
        n_rep = attn.num_heads // attn.num_kv_heads
        k = _repeat_kv(k, n_rep)  # maybe: C (call site that expands K before SDPA)
        v = _repeat_kv(v, n_rep)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return attn.o_proj(out.transpose(1, 2).reshape(bsz, seq_len, attn.q_size))

    def _predictor_cached_self_attention(self, *, layer_idx, attn, hidden_states, cache_len):
        bsz = hidden_states.shape[0]
        q, k, v = self._split_heads(attn, hidden_states)
        self.k_cache[layer_idx][:, :, cache_len : cache_len + 1].copy_(k)
        self.v_cache[layer_idx][:, :, cache_len : cache_len + 1].copy_(v)
        k_all = self.k_cache[layer_idx][:, :, : cache_len + 1]
        v_all = self.v_cache[layer_idx][:, :, : cache_len + 1]
        n_rep = attn.num_heads // attn.num_kv_heads
        out = F.scaled_dot_product_attention(q, _repeat_kv(k_all, n_rep), _repeat_kv(v_all, n_rep))  # maybe: C (per-decode-step expansion of the whole cached prefix)
        return attn.o_proj(out.transpose(1, 2).reshape(bsz, 1, attn.q_size))


class CodePredictorRunnerFixed(CodePredictorRunner):
    def _direct_self_attention(self, attn, hidden_states):
        bsz, seq_len, _ = hidden_states.shape
        q, k, v = self._split_heads(attn, hidden_states)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=(attn.num_heads != attn.num_kv_heads))
        return attn.o_proj(out.transpose(1, 2).reshape(bsz, seq_len, attn.q_size))

    def _predictor_cached_self_attention(self, *, layer_idx, attn, hidden_states, cache_len):
        bsz = hidden_states.shape[0]
        q, k, v = self._split_heads(attn, hidden_states)
        self.k_cache[layer_idx][:, :, cache_len : cache_len + 1].copy_(k)
        self.v_cache[layer_idx][:, :, cache_len : cache_len + 1].copy_(v)
        k_all = self.k_cache[layer_idx][:, :, : cache_len + 1]
        v_all = self.v_cache[layer_idx][:, :, : cache_len + 1]
        out = F.scaled_dot_product_attention(q, k_all, v_all, enable_gqa=(attn.num_heads != attn.num_kv_heads))
        return attn.o_proj(out.transpose(1, 2).reshape(bsz, 1, attn.q_size))


if __name__ == "__main__":
    torch.manual_seed(0)
    layers = [PredictorAttention()]
    old, new = CodePredictorRunner(layers), CodePredictorRunnerFixed(layers)
    x = torch.randn(1, 5, 32)
    with torch.no_grad():
        assert torch.allclose(old._direct_self_attention(layers[0], x), new._direct_self_attention(layers[0], x), atol=1e-5)
        for step in range(4):
            tok = x[:, step : step + 1]
            a = old._predictor_cached_self_attention(layer_idx=0, attn=layers[0], hidden_states=tok, cache_len=step)
            b = new._predictor_cached_self_attention(layer_idx=0, attn=layers[0], hidden_states=tok, cache_len=step)
            assert torch.allclose(a, b, atol=1e-5)
    k_all = old.k_cache[0][:, :, :4]
    expanded = _repeat_kv(k_all, 2)
    assert expanded.data_ptr() != k_all.data_ptr() and expanded.shape[1] == 2 * k_all.shape[1]
    print("ok")
