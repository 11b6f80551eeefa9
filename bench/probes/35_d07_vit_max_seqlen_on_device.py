# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/37139 — an earlier change moved cu_seqlens to the GPU before compute_attn_mask_seqlen in Qwen3_VisionTransformer, so max_seqlen became a GPU scalar and the `.item()` in the vision attention caused a D2H sync; the fix computes max_seqlen from the host cu_seqlens before the non_blocking copy.
import numpy as np
import torch
from torch import nn


class Qwen3_VisionAttention(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, cu_seqlens, max_seqlen):
        s, d = x.shape
        max_s = int(max_seqlen.item())  # want: D
        q, k, v = self.qkv(x).view(s, 3, self.num_heads, d // self.num_heads).unbind(1)
        # stand-in for flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_s, max_s)
        seg = torch.searchsorted(cu_seqlens[1:].long(), torch.arange(s, device=x.device), right=True)
        block_mask = seg[:, None] == seg[None, :]
        out = torch.nn.functional.scaled_dot_product_attention(
            q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), attn_mask=block_mask
        ).transpose(0, 1)
        assert max_s <= s
        return self.proj(out.reshape(s, d))


class Qwen3_VisionBlock(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = Qwen3_VisionAttention(dim, num_heads)

    def forward(self, x, cu_seqlens, max_seqlen):
        return x + self.attn(self.norm(x), cu_seqlens=cu_seqlens, max_seqlen=max_seqlen)


class Qwen3_VisionTransformer(nn.Module):
    def __init__(self, dim=16, num_heads=2, depth=3, attn_backend="FLASH_ATTN"):
        super().__init__()
        self.attn_backend = attn_backend
        self.blocks = nn.ModuleList(Qwen3_VisionBlock(dim, num_heads) for _ in range(depth))

    @property
    def device(self):
        return next(self.parameters()).device

    def compute_attn_mask_seqlen(self, cu_seqlens):
        max_seqlen = torch.zeros([], device=cu_seqlens.device)
        if self.attn_backend in {"FLASH_ATTN", "ROCM_AITER_FA"}:
            max_seqlen = (cu_seqlens[1:] - cu_seqlens[:-1]).max()
        return max_seqlen

    def _cu_seqlens(self, grid_thw):
        cu_seqlens = np.repeat(grid_thw[:, 1] * grid_thw[:, 2], grid_thw[:, 0]).cumsum(axis=0, dtype=np.int32)
        cu_seqlens = np.concatenate([np.zeros(1, dtype=np.int32), cu_seqlens])
        return torch.from_numpy(cu_seqlens)

    def forward(self, hidden_states, grid_thw):
        cu_seqlens = self._cu_seqlens(grid_thw)
        cu_seqlens = cu_seqlens.to(self.device, non_blocking=True)
        max_seqlen = self.compute_attn_mask_seqlen(cu_seqlens)  # maybe: D (max_seqlen now lives on the device)
        for blk in self.blocks:
            hidden_states = blk(hidden_states, cu_seqlens=cu_seqlens, max_seqlen=max_seqlen)
        return hidden_states


class Qwen3_VisionTransformerFixed(Qwen3_VisionTransformer):
    def forward(self, hidden_states, grid_thw):
        cu_seqlens = self._cu_seqlens(grid_thw)
        # compute on the host copy, then ship cu_seqlens
        max_seqlen = self.compute_attn_mask_seqlen(cu_seqlens)
        cu_seqlens = cu_seqlens.to(self.device, non_blocking=True)
        for blk in self.blocks:
            hidden_states = blk(hidden_states, cu_seqlens=cu_seqlens, max_seqlen=max_seqlen)
        return hidden_states


if __name__ == "__main__":
    torch.manual_seed(0)
    grid = np.array([[1, 2, 4], [2, 2, 2], [1, 3, 3]])
    n = int((grid[:, 0] * grid[:, 1] * grid[:, 2]).sum())
    x = torch.randn(n, 16)
    bug = Qwen3_VisionTransformer()
    fix = Qwen3_VisionTransformerFixed()
    fix.load_state_dict(bug.state_dict())
    with torch.no_grad():
        a, b = bug(x, grid), fix(x, grid)
    print("vit outputs equal:", torch.allclose(a, b), tuple(a.shape))
