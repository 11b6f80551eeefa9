# source: huggingface/diffusers https://github.com/huggingface/diffusers/issues/11761 — CosmosAttnProcessor2_0 "prepares for GQA" on every attention call by running key/value through repeat_interleave(query_idx // key_idx, dim=3), although Cosmos query/key/value always have the same size there, so the ratio is 1 and each call just allocates and copies fresh K/V tensors. The issue (closed) reports ~10% speedup for Cosmos2 text-to-image / video-to-world from not creating these tensors; the fixed processor below only repeats when the sizes actually differ and otherwise hands K/V straight to SDPA.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, query_dim, heads, dim_head):
        super().__init__()
        inner = heads * dim_head
        self.heads = heads
        self.to_q = nn.Linear(query_dim, inner, bias=False)
        self.to_k = nn.Linear(query_dim, inner, bias=False)
        self.to_v = nn.Linear(query_dim, inner, bias=False)
        self.norm_q = nn.RMSNorm(dim_head, eps=1e-6)
        self.norm_k = nn.RMSNorm(dim_head, eps=1e-6)
        self.to_out = nn.ModuleList([nn.Linear(inner, query_dim, bias=False), nn.Dropout(0.0)])


class CosmosAttnProcessor2_0:
    def __init__(self):
        self.seen = {}

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None):
        # 1. QKV projections
        if encoder_hidden_states is None:
            encoder_hidden_states = hidden_states

        query = attn.to_q(hidden_states)
        key = attn.to_k(encoder_hidden_states)
        value = attn.to_v(encoder_hidden_states)

        query = query.unflatten(2, (attn.heads, -1)).transpose(1, 2)
        key = key.unflatten(2, (attn.heads, -1)).transpose(1, 2)
        value = value.unflatten(2, (attn.heads, -1)).transpose(1, 2)

        # 2. QK normalization
        query = attn.norm_q(query)
        key = attn.norm_k(key)
        self.seen["key_in"] = key

        # 4. Prepare for GQA
        query_idx = query.size(3)
        key_idx = key.size(3)
        value_idx = value.size(3)
        key = key.repeat_interleave(query_idx // key_idx, dim=3)  # want: C
        value = value.repeat_interleave(query_idx // value_idx, dim=3)  # want: C
        self.seen["key_sdpa"] = key

        # 5. Attention
        hidden_states = F.scaled_dot_product_attention(
            query, key, value, attn_mask=attention_mask, dropout_p=0.0, is_causal=False
        )
        hidden_states = hidden_states.transpose(1, 2).flatten(2, 3).type_as(query)

        # 6. Output projection
        hidden_states = attn.to_out[0](hidden_states)
        hidden_states = attn.to_out[1](hidden_states)
        return hidden_states


class CosmosAttnProcessor2_0Fixed(CosmosAttnProcessor2_0):
    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None):
        if encoder_hidden_states is None:
            encoder_hidden_states = hidden_states

        query = attn.to_q(hidden_states)
        key = attn.to_k(encoder_hidden_states)
        value = attn.to_v(encoder_hidden_states)

        query = query.unflatten(2, (attn.heads, -1)).transpose(1, 2)
        key = key.unflatten(2, (attn.heads, -1)).transpose(1, 2)
        value = value.unflatten(2, (attn.heads, -1)).transpose(1, 2)

        query = attn.norm_q(query)
        key = attn.norm_k(key)
        self.seen["key_in"] = key

        if query.size(3) != key.size(3):
            key = key.repeat_interleave(query.size(3) // key.size(3), dim=3)
            value = value.repeat_interleave(query.size(3) // value.size(3), dim=3)
        self.seen["key_sdpa"] = key

        hidden_states = F.scaled_dot_product_attention(
            query, key, value, attn_mask=attention_mask, dropout_p=0.0, is_causal=False
        )
        hidden_states = hidden_states.transpose(1, 2).flatten(2, 3).type_as(query)
        hidden_states = attn.to_out[0](hidden_states)
        hidden_states = attn.to_out[1](hidden_states)
        return hidden_states


if __name__ == "__main__":
    torch.manual_seed(0)
    attn = Attention(query_dim=32, heads=4, dim_head=8).eval()
    x = torch.randn(2, 10, 32)
    p_bug, p_fix = CosmosAttnProcessor2_0(), CosmosAttnProcessor2_0Fixed()
    with torch.no_grad():
        out_bug = p_bug(attn, x)
        out_fix = p_fix(attn, x)
    assert torch.allclose(out_bug, out_fix, atol=1e-6)
    assert p_bug.seen["key_sdpa"].data_ptr() != p_bug.seen["key_in"].data_ptr()
    assert p_fix.seen["key_sdpa"].data_ptr() == p_fix.seen["key_in"].data_ptr()
    print("ok")
