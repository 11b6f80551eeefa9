# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/26496 — Qwen3_VisionTransformer.forward copied grid_thw to the GPU with a blocking torch.tensor(..., device=...) and built cu_seqlens with torch.repeat_interleave(h*w, t) using a device tensor of repeats (no output_size), which syncs inside repeat_interleave on every vision forward; the fix computes cu_seqlens with numpy on the CPU and moves it to the device with a non-blocking copy.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def vision_varlen_attention(q, k, v, cu_seqlens):
    # packed block-diagonal attention; sequence boundaries are read on device
    pos = torch.arange(q.shape[0], device=q.device)
    seg = torch.searchsorted(cu_seqlens[1:].to(pos.dtype), pos, right=True)
    mask = seg[:, None] == seg[None, :]
    out = F.scaled_dot_product_attention(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), attn_mask=mask)
    return out.transpose(0, 1)


class Qwen3_VisionBlock(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x, cu_seqlens):
        s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(s, 3, self.num_heads, d // self.num_heads).unbind(1)
        x = x + self.proj(vision_varlen_attention(q, k, v, cu_seqlens).reshape(s, d))
        return x + self.mlp(self.norm2(x))


class Qwen3_VisionTransformer(nn.Module):
    def __init__(self, in_dim=12, dim=32, num_heads=4, depth=3):
        super().__init__()
        self.patch_embed = nn.Linear(in_dim, dim)
        self.blocks = nn.ModuleList(Qwen3_VisionBlock(dim, num_heads) for _ in range(depth))

    @property
    def device(self):
        return self.patch_embed.weight.device

    @property
    def dtype(self):
        return self.patch_embed.weight.dtype

    def compute_cu_seqlens(self, grid_thw):
        grid_thw_tensor = torch.tensor(grid_thw, device=self.device, dtype=torch.int32)  # maybe: D (blocking pageable H2D copy of host metadata)
        cu_seqlens = torch.repeat_interleave(grid_thw_tensor[:, 1] * grid_thw_tensor[:, 2], grid_thw_tensor[:, 0]).cumsum(dim=0, dtype=torch.int32)  # want: D
        return F.pad(cu_seqlens, (1, 0), value=0)

    def forward(self, x, grid_thw):
        hidden_states = x.to(device=self.device, dtype=self.dtype, non_blocking=True)
        hidden_states = self.patch_embed(hidden_states)
        cu_seqlens = self.compute_cu_seqlens(grid_thw)
        for blk in self.blocks:
            hidden_states = blk(hidden_states, cu_seqlens=cu_seqlens)
        return hidden_states


class Qwen3_VisionTransformerFixed(Qwen3_VisionTransformer):
    def compute_cu_seqlens(self, grid_thw):
        grid_thw_np = np.array(grid_thw, dtype=np.int32)
        cu_seqlens = np.repeat(grid_thw_np[:, 1] * grid_thw_np[:, 2], grid_thw_np[:, 0]).cumsum(axis=0, dtype=np.int32)
        cu_seqlens = np.concatenate([np.zeros(1, dtype=np.int32), cu_seqlens])
        return torch.from_numpy(cu_seqlens).to(self.device, non_blocking=True)


if __name__ == "__main__":
    torch.manual_seed(0)
    grid_thw = [[1, 4, 6], [2, 2, 4], [1, 6, 2]]  # host-side list from the processor
    num_patches = sum(t * h * w for t, h, w in grid_thw)
    pixel_values = torch.randn(num_patches, 12)
    buggy = Qwen3_VisionTransformer()
    fixed = Qwen3_VisionTransformerFixed()
    fixed.load_state_dict(buggy.state_dict())
    assert torch.equal(buggy.compute_cu_seqlens(grid_thw), fixed.compute_cu_seqlens(grid_thw))
    with torch.no_grad():
        a = buggy(pixel_values, grid_thw)
        b = fixed(pixel_values, grid_thw)
    assert torch.allclose(a, b, atol=1e-6)
    print("cu_seqlens", fixed.compute_cu_seqlens(grid_thw).tolist(), "out", tuple(a.shape))
