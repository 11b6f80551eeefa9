# source: facebookresearch/sapiens2 PR #3 ("perf(gqa): use SDPA's native GQA broadcast in fp16/bf16") — GroupedQueryAttention.forward in sapiens/backbones/sapiens2.py always ran k/v.repeat_interleave(num_heads // num_kv_heads, dim=1) before F.scaled_dot_product_attention, materializing a 2x-larger K/V every layer; the PR passes enable_gqa=True for half precision and keeps the explicit repeat only for fp32 (where the fused backends reject mismatched head counts)
import math
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


class SwiGLUFFN(nn.Module):
    def __init__(self, embed_dims: int, feedforward_channels: Optional[int] = None):
        super().__init__()
        hidden = feedforward_channels or 4 * embed_dims
        hidden = int(2 * hidden / 3)
        self.w12 = nn.Linear(embed_dims, 2 * hidden)
        self.w3 = nn.Linear(hidden, embed_dims)

    def forward(self, x: Tensor) -> Tensor:
        x1, x2 = self.w12(x).chunk(2, dim=-1)
        return self.w3(F.silu(x1) * x2)


class GroupedQueryAttention(nn.Module):
    """Backbone attention as shipped before the PR."""

    def __init__(self, embed_dims, num_heads, num_kv_heads=None, attn_drop=0.0, qkv_bias=True, use_qk_norm=True):
        super().__init__()
        self.embed_dims = embed_dims
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads or num_heads
        assert self.num_heads % self.num_kv_heads == 0, "num_kv_heads must divide num_heads"
        self.head_dim = embed_dims // num_heads
        self.attn_drop = attn_drop
        self.use_qk_norm = use_qk_norm
        self.attn_op = F.scaled_dot_product_attention

        self.wq = nn.Linear(embed_dims, embed_dims, bias=qkv_bias)
        self.wk = nn.Linear(embed_dims, self.num_kv_heads * self.head_dim, bias=qkv_bias)
        self.wv = nn.Linear(embed_dims, self.num_kv_heads * self.head_dim, bias=qkv_bias)
        if use_qk_norm:
            self.q_norm = nn.RMSNorm(self.head_dim, eps=1e-6)
            self.k_norm = nn.RMSNorm(self.head_dim, eps=1e-6)
        self.proj = nn.Linear(embed_dims, embed_dims)

    @staticmethod
    def _rope_rotate_half(x: Tensor) -> Tensor:
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat([-x2, x1], dim=-1)

    def apply_rope(self, q: Tensor, k: Tensor, rope: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tensor]:
        sin, cos = rope
        prefix = q.shape[-2] - sin.shape[-2]
        q = torch.cat((q[:, :, :prefix], q[:, :, prefix:] * cos + self._rope_rotate_half(q[:, :, prefix:]) * sin), dim=-2)
        k = torch.cat((k[:, :, :prefix], k[:, :, prefix:] * cos + self._rope_rotate_half(k[:, :, prefix:]) * sin), dim=-2)
        return q, k

    def forward(self, x: Tensor, rope: Optional[Tuple[Tensor, Tensor]] = None) -> Tensor:
        B, N, _ = x.shape
        q = self.wq(x).view(B, N, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        k = self.wk(x).view(B, N, self.num_kv_heads, self.head_dim).permute(0, 2, 1, 3)
        v = self.wv(x).view(B, N, self.num_kv_heads, self.head_dim).permute(0, 2, 1, 3)
        if self.use_qk_norm:
            q = self.q_norm(q)
            k = self.k_norm(k)

        if self.num_kv_heads != self.num_heads:
            factor = self.num_heads // self.num_kv_heads
            k = k.repeat_interleave(factor, dim=1)  # want: C
            v = v.repeat_interleave(factor, dim=1)  # want: C

        if rope is not None:
            q, k = self.apply_rope(q, k, rope)

        attn_out = self.attn_op(q, k, v, dropout_p=self.attn_drop if self.training else 0.0)
        out = attn_out.permute(0, 2, 1, 3).reshape(B, N, self.embed_dims)
        return self.proj(out)


class GroupedQueryAttentionPR3(GroupedQueryAttention):
    """After the PR: native GQA broadcast in half precision, explicit repeat kept for fp32."""

    def forward(self, x: Tensor, rope: Optional[Tuple[Tensor, Tensor]] = None) -> Tensor:
        B, N, _ = x.shape
        q = self.wq(x).view(B, N, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        k = self.wk(x).view(B, N, self.num_kv_heads, self.head_dim).permute(0, 2, 1, 3)
        v = self.wv(x).view(B, N, self.num_kv_heads, self.head_dim).permute(0, 2, 1, 3)
        if self.use_qk_norm:
            q = self.q_norm(q)
            k = self.k_norm(k)

        use_gqa = self.num_kv_heads != self.num_heads
        if use_gqa and q.dtype not in (torch.bfloat16, torch.float16):
            factor = self.num_heads // self.num_kv_heads
            k = k.repeat_interleave(factor, dim=1)  # maybe: C (deliberate: fp32 FLASH/cuDNN reject GQA and MATH is slower than the copy)
            v = v.repeat_interleave(factor, dim=1)  # maybe: C (same fp32-only branch)
            use_gqa = False

        if rope is not None:
            q, k = self.apply_rope(q, k, rope)

        attn_out = self.attn_op(q, k, v, dropout_p=self.attn_drop if self.training else 0.0, enable_gqa=use_gqa)
        out = attn_out.permute(0, 2, 1, 3).reshape(B, N, self.embed_dims)
        return self.proj(out)


class Tokenizer(nn.Module):
    """Window tokenizer from the same file: its .contiguous() follows a permute, so it is a real relayout."""

    def __init__(self, embed_dims: int, window_size: int = 2):
        super().__init__()
        self.ws = window_size
        self.w_cls = nn.Parameter(torch.zeros(1, 1, embed_dims))
        self.attn = GroupedQueryAttentionPR3(embed_dims, num_heads=4, num_kv_heads=2)

    def forward(self, x: Tensor, hw: Tuple[int, int]) -> Tuple[Tensor, Tuple[int, int]]:
        B, N, C = x.shape
        H, W = hw
        ws = self.ws
        ph, pw = H // ws, W // ws
        x = x.view(B, ph, ws, pw, ws, C).permute(0, 1, 3, 2, 4, 5)
        x = x.contiguous().view(B * ph * pw, ws * ws, C)
        cls = self.w_cls.expand(x.size(0), -1, -1)
        x = self.attn(torch.cat([cls, x], dim=1))
        return x[:, 0].view(B, ph * pw, C), (ph, pw)


class Block(nn.Module):
    def __init__(self, dim, heads, kv_heads, attn_cls):
        super().__init__()
        self.ln1 = nn.RMSNorm(dim, eps=1e-6)
        self.attn = attn_cls(dim, heads, kv_heads)
        self.ln2 = nn.RMSNorm(dim, eps=1e-6)
        self.ffn = SwiGLUFFN(dim, 4 * dim)

    def forward(self, x, rope=None):
        x = x + self.attn(self.ln1(x), rope)
        return x + self.ffn(self.ln2(x))


def make_rope(hw: int, head_dim: int) -> Tuple[Tensor, Tensor]:
    coords = torch.arange(hw, dtype=torch.float32)[:, None]
    periods = 100.0 ** (torch.arange(head_dim // 2, dtype=torch.float32) / (head_dim // 2))
    angles = (2 * math.pi * coords / periods).tile(2)
    return torch.sin(angles), torch.cos(angles)


if __name__ == "__main__":
    torch.manual_seed(0)
    dim, heads, kv_heads = 64, 8, 2
    old = nn.ModuleList([Block(dim, heads, kv_heads, GroupedQueryAttention) for _ in range(2)]).eval()
    new = nn.ModuleList([Block(dim, heads, kv_heads, GroupedQueryAttentionPR3) for _ in range(2)]).eval()
    new.load_state_dict(old.state_dict())
    x = torch.randn(2, 1 + 16, dim)
    rope = make_rope(16, dim // heads)
    with torch.no_grad():
        a, b = x, x
        for blk_old, blk_new in zip(old, new):
            a, b = blk_old(a, rope), blk_new(b, rope)
        assert torch.allclose(a, b, atol=1e-5)
        tok, hw = Tokenizer(dim)(torch.randn(2, 16, dim), (4, 4))
        assert tok.shape == (2, 4, dim) and hw == (2, 2)
        # the native-GQA path gives the same answer without materializing K/V
        q = torch.randn(1, heads, 5, 8)
        k = torch.randn(1, kv_heads, 5, 8)
        v = torch.randn(1, kv_heads, 5, 8)
        ref = F.scaled_dot_product_attention(q, k.repeat_interleave(4, 1), v.repeat_interleave(4, 1))  # maybe: C (one-off reference in the self-test)
        got = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        assert torch.allclose(ref, got, atol=1e-6)
    print("ok")
