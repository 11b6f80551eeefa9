# source: NVIDIA/TransformerEngine https://github.com/NVIDIA/TransformerEngine/pull/555 — DotProductAttention.forward for packed (thd) inputs derived max_seqlen_q/max_seqlen_kv from cu_seqlens with seqlens.max().item() in every attention call, i.e. extra kernels plus two D2H copies per layer per step; the fix lets callers pass pre-computed max_seqlen_q/max_seqlen_kv (known on the host from the packing) so the attention forward no longer reads device values.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def fused_attn_varlen(q, k, v, cu_seqlens_q, cu_seqlens_kv, max_seqlen_q, max_seqlen_kv):
    # stand-in for the fused varlen kernel: max_seqlen_* only size the launch grid,
    # the per-sequence boundaries are read on device from cu_seqlens
    assert isinstance(max_seqlen_q, int) and isinstance(max_seqlen_kv, int)
    t = q.shape[0]
    pos = torch.arange(t, device=q.device)
    seg_q = torch.searchsorted(cu_seqlens_q[1:], pos, right=True)
    seg_kv = torch.searchsorted(cu_seqlens_kv[1:], pos, right=True)
    mask = seg_q[:, None] == seg_kv[None, :]
    out = F.scaled_dot_product_attention(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), attn_mask=mask)
    return out.transpose(0, 1)


class DotProductAttention(nn.Module):
    def __init__(self, num_attention_heads, kv_channels):
        super().__init__()
        self.num_attention_heads = num_attention_heads
        self.hidden_size_per_attention_head = kv_channels

    def forward(self, query_layer, key_layer, value_layer, qkv_format="thd", cu_seqlens_q=None, cu_seqlens_kv=None):
        if qkv_format == "thd":
            assert cu_seqlens_q is not None and cu_seqlens_kv is not None
            seqlens_q = cu_seqlens_q[1:] - cu_seqlens_q[:-1]
            seqlens_kv = cu_seqlens_kv[1:] - cu_seqlens_kv[:-1]
            max_seqlen_q = seqlens_q.max().item()  # want: D
            max_seqlen_kv = seqlens_kv.max().item()  # want: D
        return fused_attn_varlen(query_layer, key_layer, value_layer, cu_seqlens_q, cu_seqlens_kv, max_seqlen_q, max_seqlen_kv)


class DotProductAttentionFixed(DotProductAttention):
    def forward(self, query_layer, key_layer, value_layer, qkv_format="thd", cu_seqlens_q=None, cu_seqlens_kv=None,
                max_seqlen_q=None, max_seqlen_kv=None):
        assert cu_seqlens_q is not None and cu_seqlens_kv is not None
        # callers pass max_seqlen_q / max_seqlen_kv computed on the host from the packing
        return fused_attn_varlen(query_layer, key_layer, value_layer, cu_seqlens_q, cu_seqlens_kv, max_seqlen_q, max_seqlen_kv)


class TransformerLayer(nn.Module):
    attention_cls = DotProductAttention

    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.layernorm = nn.LayerNorm(hidden_size)
        self.qkv = nn.Linear(hidden_size, 3 * hidden_size)
        self.proj = nn.Linear(hidden_size, hidden_size)
        self.core_attention = self.attention_cls(num_heads, self.head_dim)

    def forward(self, hidden_states, cu_seqlens, **attn_kwargs):
        t = hidden_states.shape[0]
        q, k, v = self.qkv(self.layernorm(hidden_states)).view(t, 3, self.num_heads, self.head_dim).unbind(1)
        ctx = self.core_attention(q, k, v, qkv_format="thd", cu_seqlens_q=cu_seqlens, cu_seqlens_kv=cu_seqlens, **attn_kwargs)
        return hidden_states + self.proj(ctx.reshape(t, -1))


class TransformerLayerFixed(TransformerLayer):
    attention_cls = DotProductAttentionFixed


class PackedEncoder(nn.Module):
    layer_cls = TransformerLayer

    def __init__(self, hidden_size=32, num_heads=4, num_layers=4):
        super().__init__()
        self.layers = nn.ModuleList(self.layer_cls(hidden_size, num_heads) for _ in range(num_layers))

    def forward(self, hidden_states, cu_seqlens, max_seqlen=None):
        for layer in self.layers:
            hidden_states = layer(hidden_states, cu_seqlens)
        return hidden_states


class PackedEncoderFixed(PackedEncoder):
    layer_cls = TransformerLayerFixed

    def forward(self, hidden_states, cu_seqlens, max_seqlen=None):
        for layer in self.layers:
            hidden_states = layer(hidden_states, cu_seqlens, max_seqlen_q=max_seqlen, max_seqlen_kv=max_seqlen)
        return hidden_states


if __name__ == "__main__":
    torch.manual_seed(0)
    seq_lens = [5, 11, 3, 9]  # known on the host when the batch is packed
    cu_seqlens = torch.tensor([0] + [sum(seq_lens[: i + 1]) for i in range(len(seq_lens))], dtype=torch.int32)
    max_seqlen = max(seq_lens)
    x = torch.randn(sum(seq_lens), 32)
    buggy = PackedEncoder()
    fixed = PackedEncoderFixed()
    fixed.load_state_dict(buggy.state_dict())
    with torch.no_grad():
        a = buggy(x, cu_seqlens)
        b = fixed(x, cu_seqlens, max_seqlen=max_seqlen)
    assert torch.allclose(a, b, atol=1e-6)
    print("tokens", x.shape[0], "max_seqlen", max_seqlen, "rounded", 2 ** math.ceil(math.log2(max_seqlen)))
