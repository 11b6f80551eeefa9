# source: lightseekorg/tokenspeed https://github.com/lightseekorg/tokenspeed/pull/456 — Qwen vision VisionAttention.forward split the packed QKV projection and forced q/k/v through .reshape(...).contiguous(), i.e. three device copies per layer (81 per encoder forward); item 1 of the fix keeps q/k/v as strided views after the split and lets rotary/attention consume them directly.
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin):
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    q_embed = q * cos + rotate_half(q) * sin
    k_embed = k * cos + rotate_half(k) * sin
    return q_embed, k_embed


def varlen_attention(q, k, v, cu_seqlens):
    # q/k/v: [total_tokens, heads, head_dim]; accepts strided views (last-dim stride 1)
    out = torch.empty_like(q)
    for i in range(cu_seqlens.numel() - 1):
        s, e = int(cu_seqlens[i]), int(cu_seqlens[i + 1])
        o = F.scaled_dot_product_attention(
            q[s:e].transpose(0, 1), k[s:e].transpose(0, 1), v[s:e].transpose(0, 1)
        )
        out[s:e] = o.transpose(0, 1)
    return out


class VisionAttention(nn.Module):
    def __init__(self, embed_dim=64, num_heads=4, strided_qkv=False):
        super().__init__()
        self.num_attention_heads_per_partition = num_heads
        self.num_attention_kv_heads_per_partition = num_heads
        self.head_size = embed_dim // num_heads
        self.q_size = num_heads * self.head_size
        self.kv_size = num_heads * self.head_size
        self.qkv_proj = nn.Linear(embed_dim, self.q_size + 2 * self.kv_size)
        self.proj = nn.Linear(embed_dim, embed_dim)
        self.strided_qkv = strided_qkv

    def forward(
        self,
        x: torch.Tensor,
        cu_seqlens: Optional[torch.Tensor] = None,
        position_embeddings: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
    ) -> torch.Tensor:
        if x.dim() == 2:
            x = x.unsqueeze(0)
        bsz, s, _ = x.shape
        head = self.num_attention_heads_per_partition
        kv_head = self.num_attention_kv_heads_per_partition
        # [b, s, embed_dim] --> [b, s, embed_dim]
        qkv = self.qkv_proj(x)
        q, k, v = qkv.split([self.q_size, self.kv_size, self.kv_size], dim=-1)

        if not self.strided_qkv:
            # [b, s, embed_dim] --> [b * s, head, head_size]
            q = q.reshape(bsz * s, head, -1).contiguous()  # want: C
            k = k.reshape(bsz * s, kv_head, -1).contiguous()  # want: C
            v = v.reshape(bsz * s, kv_head, -1).contiguous()  # want: C
        else:
            # fixed: keep views after the packed-QKV split
            q = q.reshape(bsz * s, head, -1)
            k = k.reshape(bsz * s, kv_head, -1)
            v = v.reshape(bsz * s, kv_head, -1)

        if position_embeddings is not None:
            cos, sin = position_embeddings
            original_shape = q.shape
            # [total_tokens, head, head_size]
            q = q.view(-1, head, self.head_size)
            k = k.view(-1, head, self.head_size)
            q, k = apply_rotary_pos_emb(q, k, cos, sin)
            q = q.view(original_shape)
            k = k.view(original_shape)

        output = varlen_attention(q, k, v, cu_seqlens)
        output = output.reshape(bsz, s, -1)
        return self.proj(output)


class VisionTower(nn.Module):
    def __init__(self, depth=4, strided_qkv=False):
        super().__init__()
        self.blocks = nn.ModuleList(VisionAttention(strided_qkv=strided_qkv) for _ in range(depth))

    def forward(self, x, cu_seqlens, position_embeddings):
        for blk in self.blocks:
            x = x + blk(x, cu_seqlens, position_embeddings).squeeze(0)
        return x


if __name__ == "__main__":
    torch.manual_seed(0)
    T, D, hd = 48, 64, 16
    slow = VisionTower()
    fast = VisionTower(strided_qkv=True)
    fast.load_state_dict(slow.state_dict())
    x = torch.randn(T, D)
    cu = torch.tensor([0, 20, 48])
    ang = torch.randn(T, hd)
    pe = (ang.cos(), ang.sin())
    with torch.no_grad():
        a = slow(x, cu, pe)
        b = fast(x, cu, pe)
    assert torch.allclose(a, b, atol=1e-5)
    print("ok", a.shape)
