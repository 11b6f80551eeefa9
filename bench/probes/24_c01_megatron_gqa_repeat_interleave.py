# source: NVIDIA/Megatron-LM PR #537 (fixed by commit 993aa0f) — Attention.forward always ran key/value.repeat_interleave(np // ng, dim=2) before core attention, commented as "a noop ... creates a view"; it is a full copy of K and V every layer and every step, even for plain MHA where np // ng == 1
import math

import torch
from torch import nn


class DotProductAttention(nn.Module):
    """Megatron's unfused core attention on [s, b, heads, hn] tensors (baddbmm + softmax + bmm)."""

    def __init__(self, num_heads: int, head_dim: int):
        super().__init__()
        self.num_heads = num_heads
        self.norm_factor = math.sqrt(head_dim)

    def forward(self, query, key, value, attention_mask):
        # [b, np, sq, sk]
        output_size = (query.size(1), query.size(2), query.size(0), key.size(0))
        query = query.reshape(output_size[2], output_size[0] * output_size[1], -1)
        key = key.view(output_size[3], output_size[0] * output_size[1], -1)
        buf = torch.empty(output_size[0] * output_size[1], output_size[2], output_size[3], dtype=query.dtype)
        scores = torch.baddbmm(buf, query.transpose(0, 1), key.transpose(0, 1).transpose(1, 2),
                               beta=0.0, alpha=1.0 / self.norm_factor)
        scores = scores.view(*output_size).masked_fill(attention_mask, -10000.0)
        probs = torch.softmax(scores, dim=-1)
        value = value.view(value.size(0), output_size[0] * output_size[1], -1)
        probs = probs.view(output_size[0] * output_size[1], output_size[2], -1)
        context = torch.bmm(probs, value.transpose(0, 1))
        context = context.view(output_size[0], output_size[1], output_size[2], -1)
        context = context.permute(2, 0, 1, 3).contiguous()  # after a permute: a real layout change, needed for the view below
        return context.view(output_size[2], output_size[0], -1)


class SelfAttention(nn.Module):
    def __init__(self, hidden: int, num_heads: int, num_query_groups: int):
        super().__init__()
        self.hn = hidden // num_heads
        self.num_attention_heads_per_partition = num_heads
        self.num_query_groups_per_partition = num_query_groups
        qkv_out = (num_heads + 2 * num_query_groups) * self.hn
        self.linear_qkv = nn.Linear(hidden, qkv_out, bias=False)
        self.linear_proj = nn.Linear(hidden, hidden, bias=False)
        self.core_attention = DotProductAttention(num_heads, self.hn)

    def get_query_key_value_tensors(self, hidden_states):
        mixed_qkv = self.linear_qkv(hidden_states)
        sq, b, _ = mixed_qkv.shape
        ng = self.num_query_groups_per_partition
        per_group = self.num_attention_heads_per_partition // ng
        # [sq, b, ng, (np/ng + 2) * hn]
        mixed_qkv = mixed_qkv.view(sq, b, ng, (per_group + 2) * self.hn)
        query, key, value = torch.split(mixed_qkv, [per_group * self.hn, self.hn, self.hn], dim=3)
        query = query.reshape(sq, b, -1, self.hn)
        return query, key, value

    def forward(self, hidden_states, attention_mask):
        # hidden_states: [sq, b, h]
        query, key, value = self.get_query_key_value_tensors(hidden_states)

        # expand the key_layer and value_layer [sk, b, ng, hn] -> [sk, b, np, hn]
        # This is a noop for normal attention where ng == np. When using group query attention this
        # creates a view that has the keys and values virtually repeated along their dimension to
        # match the number of queries.
        key = key.repeat_interleave(  # want: C
            self.num_attention_heads_per_partition // self.num_query_groups_per_partition, dim=2
        )
        value = value.repeat_interleave(  # want: C
            self.num_attention_heads_per_partition // self.num_query_groups_per_partition, dim=2
        )

        core_attn_out = self.core_attention(query, key, value, attention_mask)
        return self.linear_proj(core_attn_out)

    def forward_fixed(self, hidden_states, attention_mask):
        query, key, value = self.get_query_key_value_tensors(hidden_states)
        rep = self.num_attention_heads_per_partition // self.num_query_groups_per_partition
        if rep > 1:
            # baddbmm has no grouped-query mode, so for real GQA the expansion is the price of this kernel
            key = key.repeat_interleave(rep, dim=2)
            value = value.repeat_interleave(rep, dim=2)
        return self.linear_proj(self.core_attention(query, key, value, attention_mask))


if __name__ == "__main__":
    torch.manual_seed(0)
    sq, b, hidden = 6, 2, 32
    causal = torch.triu(torch.ones(sq, sq, dtype=torch.bool), 1)[None, None]
    x = torch.randn(sq, b, hidden)
    for groups in (4, 2):  # MHA (np == ng) and GQA
        attn = SelfAttention(hidden, num_heads=4, num_query_groups=groups)
        with torch.no_grad():
            a, c = attn(x, causal), attn.forward_fixed(x, causal)
        assert torch.allclose(a, c, atol=1e-6), groups
    k = torch.randn(sq, b, 4, 8)
    assert k.repeat_interleave(1, dim=2).data_ptr() != k.data_ptr()  # "noop" repeat still allocates and copies
    print("ok: same outputs; the unguarded repeat_interleave copies K and V even when the ratio is 1")
