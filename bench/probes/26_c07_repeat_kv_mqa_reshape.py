# source: deepspeedai/Megatron-DeepSpeed https://github.com/deepspeedai/Megatron-DeepSpeed/pull/419 — ParallelAttention.repeat_kv always did `[:, :, :, None, :].expand(...).reshape(...)`, materialising n_rep copies of K/V even for multi-query attention (1 KV head) where a broadcasting `expand` view suffices; the fix returns `hidden_states.expand(slen, batch, n_rep, head_dim)` in that case.
import math

import torch
from torch import nn


class Config:
    hidden_size = 128
    num_attention_heads = 8
    num_key_value_heads = 1  # multi-query attention
    kv_channels = 16


class CoreAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm_factor = math.sqrt(config.kv_channels)

    def forward(self, query_layer, key_layer, value_layer, attention_mask):
        # [s, b, np, hn] -> [b, np, s, hn]
        q = query_layer.permute(1, 2, 0, 3)
        k = key_layer.permute(1, 2, 0, 3)
        v = value_layer.permute(1, 2, 0, 3)
        scores = torch.matmul(q, k.transpose(-2, -1)) / self.norm_factor
        scores = scores.masked_fill(attention_mask, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        context = torch.matmul(probs, v)  # [b, np, sq, hn]
        context = context.permute(2, 0, 1, 3).contiguous()
        return context.view(context.size(0), context.size(1), -1)


class ParallelAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.num_key_value_heads = config.num_key_value_heads
        self.use_gqa = (self.num_attention_heads != self.num_key_value_heads)
        self.hidden_size_per_attention_head = config.kv_channels
        self.num_attention_heads_per_partition = config.num_attention_heads
        self.num_key_value_heads_per_partition = config.num_key_value_heads
        self.num_key_value_groups = config.num_attention_heads // config.num_key_value_heads
        qkv_size = config.kv_channels * (config.num_attention_heads + 2 * config.num_key_value_heads)
        self.query_key_value = nn.Linear(config.hidden_size, qkv_size, bias=False)
        self.core_attention = CoreAttention(config)
        self.dense = nn.Linear(config.kv_channels * config.num_attention_heads, config.hidden_size, bias=False)

    def repeat_kv(self, hidden_states, n_rep):
        slen, batch, num_key_value_heads_per_partition, head_dim = hidden_states.shape
        if n_rep == 1:
            return hidden_states
        hidden_states = hidden_states[:, :, :, None, :].expand(
            slen, batch, num_key_value_heads_per_partition, n_rep, head_dim)
        return hidden_states.reshape(slen, batch,  # want: C
                                     num_key_value_heads_per_partition * n_rep,
                                     head_dim)

    def split_tensor(self, mixed_x_layer):
        query_layer, key_layer, value_layer = torch.split(mixed_x_layer, [self.num_key_value_groups, 1, 1], dim=-2)
        query_layer = query_layer.reshape(mixed_x_layer.shape[:2] + (self.num_attention_heads_per_partition,
                                                                     self.hidden_size_per_attention_head))
        key_layer = torch.squeeze(key_layer, -2)
        value_layer = torch.squeeze(value_layer, -2)
        return query_layer, key_layer, value_layer

    def forward(self, hidden_states, attention_mask):
        # hidden_states: [sq, b, h]
        mixed_x_layer = self.query_key_value(hidden_states)

        # [sq, b, ((nq + 2 * nkv) * hn)] --> [sq, b, nkv, (nq // nkv + 2), hn]
        new_tensor_shape = mixed_x_layer.size()[:-1] + \
            (-1, (self.num_key_value_groups + 2), self.hidden_size_per_attention_head)
        mixed_x_layer = mixed_x_layer.view(*new_tensor_shape)

        (query_layer, key_layer, value_layer) = self.split_tensor(mixed_x_layer)

        # Repeat kv
        if self.use_gqa:
            key_layer = self.repeat_kv(key_layer, self.num_key_value_groups)
            value_layer = self.repeat_kv(value_layer, self.num_key_value_groups)

        context_layer = self.core_attention(query_layer, key_layer, value_layer, attention_mask)
        return self.dense(context_layer)


class ParallelAttentionFixed(ParallelAttention):
    def repeat_kv(self, hidden_states, n_rep):
        # merged version (look-alike)
        slen, batch, num_key_value_heads_per_partition, head_dim = hidden_states.shape
        if n_rep == 1:
            return hidden_states
        elif num_key_value_heads_per_partition == 1:
            return hidden_states.expand(slen, batch, n_rep, head_dim)
        else:
            hidden_states = hidden_states[:, :, :, None, :].expand(
                slen, batch, num_key_value_heads_per_partition, n_rep, head_dim)
            return hidden_states.reshape(slen, batch, num_key_value_heads_per_partition * n_rep, head_dim)


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = Config()
    attn = ParallelAttention(cfg)
    fixed = ParallelAttentionFixed(cfg)
    fixed.load_state_dict(attn.state_dict())
    s, b = 64, 2
    x = torch.randn(s, b, cfg.hidden_size)
    mask = torch.triu(torch.ones(s, s, dtype=torch.bool), diagonal=1)
    with torch.no_grad():
        y1 = attn(x, mask)
        y2 = fixed(x, mask)
    print("ok", tuple(y1.shape), torch.allclose(y1, y2, atol=1e-5))
