import torch
import torch.nn.functional as F
from torch import nn


class Attn(nn.Module):
    def __init__(self, num_heads, num_kv_heads):
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads

    def forward(self, q, k, v):
        rep = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(rep, dim=1)  # want: C
        v = v.repeat_interleave(rep, dim=1)  # want: C
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
