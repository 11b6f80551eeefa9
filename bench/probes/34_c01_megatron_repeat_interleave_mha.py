# source: NVIDIA/Megatron-LM https://github.com/NVIDIA/Megatron-LM/pull/537 — DotProductAttention.forward called key/value.repeat_interleave(np // ng, dim=2) unconditionally, so for plain MHA (ratio 1) every layer still materialised full copies of K and V ("this is a noop" was false); the fix guards the expansion with `if np // ng > 1`.
import math

import torch
import torch.nn as nn


class DotProductAttention(nn.Module):
    def __init__(self, num_attention_heads, num_query_groups, kv_channels, world_size=1):
        super().__init__()
        self.hidden_size_per_partition = num_attention_heads * kv_channels // world_size
        self.num_attention_heads_per_partition = num_attention_heads // world_size
        self.num_query_groups_per_partition = num_query_groups // world_size
        self.norm_factor = math.sqrt(kv_channels)

    def forward(self, query, key, value, attention_mask):
        # query: [sq, b, np, hn], key/value: [sk, b, ng, hn]
        # expand the key and value [sk, b, ng, hn] -> [sk, b, np, hn]
        # This is a noop for normal attention where ng == np. When using group query attention this
        # creates a view that has the keys and values virtually repeated along their dimension to
        # match the number of queries.
        key = key.repeat_interleave(self.num_attention_heads_per_partition // self.num_query_groups_per_partition, dim=2)  # want: C
        value = value.repeat_interleave(self.num_attention_heads_per_partition // self.num_query_groups_per_partition, dim=2)  # want: C
        return self._core(query, key, value, attention_mask)

    def _core(self, query, key, value, attention_mask):
        # [b, np, sq, sk]
        output_size = (query.size(1), query.size(2), query.size(0), key.size(0))
        query = query.reshape(output_size[2], output_size[0] * output_size[1], -1)
        key = key.view(output_size[3], output_size[0] * output_size[1], -1)
        matmul_input_buffer = torch.empty(
            output_size[0] * output_size[1], output_size[2], output_size[3],
            dtype=query.dtype, device=query.device,
        )
        matmul_result = torch.baddbmm(
            matmul_input_buffer,
            query.transpose(0, 1),
            key.transpose(0, 1).transpose(1, 2),
            beta=0.0,
            alpha=(1.0 / self.norm_factor),
        )
        attention_scores = matmul_result.view(*output_size)
        attention_scores = attention_scores.masked_fill(attention_mask, -10000.0)
        attention_probs = torch.softmax(attention_scores, dim=-1)

        # value: [sk, b, np, hn] -> context [b, np, sq, hn]
        output_size = (value.size(1), value.size(2), query.size(0), value.size(3))
        value = value.view(value.size(0), output_size[0] * output_size[1], -1)
        attention_probs = attention_probs.view(output_size[0] * output_size[1], output_size[2], -1)
        context = torch.bmm(attention_probs, value.transpose(0, 1))
        context = context.view(*output_size)
        # [b, np, sq, hn] --> [sq, b, np, hn] --> [sq, b, hp]
        context = context.permute(2, 0, 1, 3).contiguous()
        new_context_shape = context.size()[:-2] + (self.hidden_size_per_partition,)
        return context.view(*new_context_shape)


class DotProductAttentionFixed(DotProductAttention):
    def forward(self, query, key, value, attention_mask):
        # expand the key and value [sk, b, ng, hn] -> [sk, b, np, hn] only for GQA
        if self.num_attention_heads_per_partition // self.num_query_groups_per_partition > 1:
            key = key.repeat_interleave(
                self.num_attention_heads_per_partition // self.num_query_groups_per_partition, dim=2
            )
            value = value.repeat_interleave(
                self.num_attention_heads_per_partition // self.num_query_groups_per_partition, dim=2
            )
        return self._core(query, key, value, attention_mask)


if __name__ == "__main__":
    torch.manual_seed(0)
    sq, b, heads, hn = 16, 2, 4, 8
    q = torch.randn(sq, b, heads, hn)
    k = torch.randn(sq, b, heads, hn)
    v = torch.randn(sq, b, heads, hn)
    mask = torch.triu(torch.ones(sq, sq, dtype=torch.bool), diagonal=1)[None, None]

    # plain MHA: ng == np, so the repeat factor is 1
    seen = []
    real_core = DotProductAttention._core

    def spy(self, query, key, value, attention_mask):
        seen.append((key.data_ptr() == k.data_ptr(), value.data_ptr() == v.data_ptr()))
        return real_core(self, query, key, value, attention_mask)

    DotProductAttention._core = spy
    buggy = DotProductAttention(heads, heads, hn)
    fixed = DotProductAttentionFixed(heads, heads, hn)
    out_b = buggy(q, k, v, mask)
    out_f = fixed(q, k, v, mask)
    assert torch.allclose(out_b, out_f, atol=1e-6)
    print("K/V reach the core as the caller's tensors?  buggy:", seen[0], " fixed:", seen[1])
    extra = 2 * k.numel() * k.element_size()
    print(f"buggy MHA path copies K and V every layer: {extra} extra bytes per call; outputs match")
