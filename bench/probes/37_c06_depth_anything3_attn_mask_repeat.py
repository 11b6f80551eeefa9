# source: ByteDance-Seed/Depth-Anything-3 https://github.com/ByteDance-Seed/Depth-Anything-3/pull/268 — In the DINOv2 `Attention.forward` fused path, the attention mask was passed to SDPA as `attn_mask[:, None].repeat(1, self.num_heads, 1, 1)`, physically materializing a per-head [B, num_heads, N, N] copy (8.3 GiB at 14 views) before the kernel runs. SDPA broadcasts the mask over the head dimension, so the fix passes the `[B, 1, N, N]` view `attn_mask[:, None]` instead.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, dim: int, num_heads: int = 8, qkv_bias: bool = False, proj_bias: bool = True,
                 attn_drop: float = 0.0, proj_drop: float = 0.0, qk_norm: bool = False, fused_attn: bool = True, rope=None):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim**-0.5
        self.fused_attn = fused_attn
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.q_norm = nn.LayerNorm(head_dim) if qk_norm else nn.Identity()
        self.k_norm = nn.LayerNorm(head_dim) if qk_norm else nn.Identity()
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim, bias=proj_bias)
        self.proj_drop = nn.Dropout(proj_drop)
        self.rope = rope

    def _qkv(self, x: torch.Tensor, pos=None):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q, k = self.q_norm(q), self.k_norm(k)
        if self.rope is not None and pos is not None:
            q = self.rope(q, pos)
            k = self.rope(k, pos)
        return q, k, v

    def _out(self, x: torch.Tensor, B: int, N: int, C: int) -> torch.Tensor:
        x = x.transpose(1, 2).reshape(B, N, C)
        return self.proj_drop(self.proj(x))

    def forward(self, x: torch.Tensor, pos=None, attn_mask=None) -> torch.Tensor:
        B, N, C = x.shape
        q, k, v = self._qkv(x, pos)
        if self.fused_attn:
            x = F.scaled_dot_product_attention(
                q,
                k,
                v,
                dropout_p=self.attn_drop.p if self.training else 0.0,
                attn_mask=(attn_mask)[:, None].repeat(1, self.num_heads, 1, 1) if attn_mask is not None else None,  # want: C
            )
        else:
            q = q * self.scale
            attn = q @ k.transpose(-2, -1)
            attn = self.attn_drop(attn.softmax(dim=-1))
            x = attn @ v
        return self._out(x, B, N, C)


class AttentionFixed(Attention):
    def forward(self, x: torch.Tensor, pos=None, attn_mask=None) -> torch.Tensor:
        B, N, C = x.shape
        q, k, v = self._qkv(x, pos)
        if self.fused_attn:
            x = F.scaled_dot_product_attention(
                q,
                k,
                v,
                dropout_p=self.attn_drop.p if self.training else 0.0,
                attn_mask=attn_mask[:, None] if attn_mask is not None else None,
            )
        else:
            q = q * self.scale
            attn = q @ k.transpose(-2, -1)
            attn = self.attn_drop(attn.softmax(dim=-1))
            x = attn @ v
        return self._out(x, B, N, C)


if __name__ == "__main__":
    torch.manual_seed(0)
    old = Attention(dim=32, num_heads=4).eval()
    new = AttentionFixed(dim=32, num_heads=4).eval()
    new.load_state_dict(old.state_dict())
    B, N = 2, 12
    x = torch.randn(B, N, 32)
    attn_mask = torch.rand(B, N, N) > 0.3
    attn_mask |= torch.eye(N, dtype=torch.bool)
    masks = []
    real_sdpa = F.scaled_dot_product_attention

    def spy(*args, **kwargs):
        masks.append(kwargs["attn_mask"])
        return real_sdpa(*args, **kwargs)

    F.scaled_dot_product_attention = spy
    try:
        with torch.no_grad():
            a, b = old(x, attn_mask=attn_mask), new(x, attn_mask=attn_mask)
    finally:
        F.scaled_dot_product_attention = real_sdpa
    assert torch.allclose(a, b, atol=1e-6)
    assert masks[0].data_ptr() != attn_mask.data_ptr()
    assert masks[0].untyped_storage().nbytes() == 4 * attn_mask.untyped_storage().nbytes()
    assert masks[1].data_ptr() == attn_mask.data_ptr()
    print("ok")
