# source: ByteDance-Seed/VeOmni https://github.com/ByteDance-Seed/VeOmni/pull/762 — the Qwen3.5 ViT `forward` patch re-derived `cu_seqlens` from the GPU `grid_thw` with `torch.repeat_interleave(...).cumsum(0)` and read `max_seqlen` back with `(cu_seqlens[1:] - cu_seqlens[:-1]).max().detach().cpu().item()` for flash-attention varlen, syncing the host on every micro-batch. The fix materialises `grid_thw.tolist()` once, builds `cu_seqlens` host-side and computes `max_seqlen` as a plain Python int passed to every block.
import torch
import torch.nn.functional as F


def varlen_attention(q, k, v, cu_seqlens, max_seqlen):
    out = torch.empty_like(q)
    bounds = cu_seqlens.tolist() if torch.is_tensor(cu_seqlens) else cu_seqlens
    for s, e in zip(bounds[:-1], bounds[1:]):
        assert e - s <= max_seqlen
        out[s:e] = F.scaled_dot_product_attention(q[None, s:e], k[None, s:e], v[None, s:e])[0]
    return out


class Qwen3_5VisionBlock(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, hidden_states, cu_seqlens, max_seqlen):
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        return hidden_states + self.proj(varlen_attention(q, k, v, cu_seqlens, max_seqlen))


class Qwen3_5VisionModel(torch.nn.Module):
    def __init__(self, dim=8, depth=2):
        super().__init__()
        self.blocks = torch.nn.ModuleList(Qwen3_5VisionBlock(dim) for _ in range(depth))

    def forward(self, hidden_states, grid_thw):
        cu_seqlens = torch.repeat_interleave(grid_thw[:, 1] * grid_thw[:, 2], grid_thw[:, 0]).cumsum(
            dim=0, dtype=torch.int32
        )
        cu_seqlens = F.pad(cu_seqlens, (1, 0), value=0)
        max_seqlen = (cu_seqlens[1:] - cu_seqlens[:-1]).max().detach().cpu().item()  # want: D
        for blk in self.blocks:
            hidden_states = blk(hidden_states, cu_seqlens=cu_seqlens, max_seqlen=max_seqlen)
        return hidden_states


class Qwen3_5VisionModelFixed(Qwen3_5VisionModel):
    def forward(self, hidden_states, grid_thw):
        grid_thw_list = grid_thw.tolist() if torch.is_tensor(grid_thw) else grid_thw
        cu = [0]
        for t, h, w in grid_thw_list:
            for _ in range(t):
                cu.append(cu[-1] + h * w)
        vision_max_seqlen = max(h * w for _, h, w in grid_thw_list)
        cu_seqlens = torch.tensor(cu, dtype=torch.int32).to(hidden_states.device, non_blocking=True)
        for blk in self.blocks:
            hidden_states = blk(hidden_states, cu_seqlens=cu, max_seqlen=vision_max_seqlen)
        return hidden_states


if __name__ == "__main__":
    torch.manual_seed(0)
    a, b = Qwen3_5VisionModel(), Qwen3_5VisionModelFixed()
    b.load_state_dict(a.state_dict())
    grid_thw_list = [[1, 2, 3], [2, 2, 2]]
    x = torch.randn(sum(t * h * w for t, h, w in grid_thw_list), 8)
    ya = a(x, torch.tensor(grid_thw_list))
    yb = b(x, grid_thw_list)
    assert torch.allclose(ya, yb, atol=1e-6)
    print("ok")
