# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/14790 — `a[0, indices].copy_(x)` with a numpy index array silently left `a` all zeros: indexing with an array is advanced indexing and returns a new tensor, so copy_ fills a temporary. The fix (fmassa) is to write through __setitem__: `a[0, indices] = x`.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class StaticKVCache:
    def __init__(self, max_batch, n_heads, max_len, head_dim, dtype=torch.float32):
        self.k_cache = torch.zeros(max_batch, n_heads, max_len, head_dim, dtype=dtype)
        self.v_cache = torch.zeros(max_batch, n_heads, max_len, head_dim, dtype=dtype)

    def update(self, slot, positions, k, v):
        # slot: int row of the batch slot, positions: np.ndarray from the scheduler
        self.k_cache[slot, :, positions].copy_(k)  # want: B
        self.v_cache[slot, :, positions].copy_(v)  # want: B
        end = int(positions[-1]) + 1
        return self.k_cache[slot, :, :end], self.v_cache[slot, :, :end]


class StaticKVCacheFixed(StaticKVCache):
    def update(self, slot, positions, k, v):
        self.k_cache[slot, :, positions] = k
        self.v_cache[slot, :, positions] = v
        end = int(positions[-1]) + 1
        return self.k_cache[slot, :, :end], self.v_cache[slot, :, :end]


class Attention(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.wqkv = nn.Linear(dim, 3 * dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, cache, slot, positions):
        # x: (T, dim) tokens of one request
        T = x.shape[0]
        q, k, v = self.wqkv(x).split(x.shape[-1], dim=-1)
        q = q.view(T, self.n_heads, self.head_dim).transpose(0, 1)
        k = k.view(T, self.n_heads, self.head_dim).transpose(0, 1)
        v = v.view(T, self.n_heads, self.head_dim).transpose(0, 1)
        keys, values = cache.update(slot, positions, k, v)
        out = F.scaled_dot_product_attention(q[None], keys[None], values[None])[0]
        return self.wo(out.transpose(0, 1).reshape(T, -1))


@torch.no_grad()
def decode(cache_cls, steps=4, seed=0):
    torch.manual_seed(seed)
    attn = Attention(32, 4)
    cache = cache_cls(max_batch=2, n_heads=4, max_len=16, head_dim=8)
    prompt = torch.randn(3, 32)
    positions = np.arange(0, 3)
    out = attn(prompt, cache, 1, positions)
    outs = [out[-1]]
    for t in range(steps):
        positions = np.array([3 + t])
        out = attn(out[-1:], cache, 1, positions)
        outs.append(out[-1])
    return cache, torch.stack(outs)


if __name__ == "__main__":
    cache_b, outs_b = decode(StaticKVCache)
    cache_f, outs_f = decode(StaticKVCacheFixed)
    filled_b = cache_b.k_cache[1].abs().sum().item()
    filled_f = cache_f.k_cache[1].abs().sum().item()
    print(f"buggy cache |K| = {filled_b:.3f}, fixed cache |K| = {filled_f:.3f}")
    print("decoded outputs differ:", not torch.allclose(outs_b, outs_f))
    assert filled_b == 0.0 and filled_f > 0.0
