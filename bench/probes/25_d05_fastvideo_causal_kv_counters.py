# source: hao-ai-lab/FastVideo PR #1660 ("reduce per-step overhead in causal Wan denoising", item 1: "Stop syncing to the CPU to read two KV-cache position counters") — CausalWanSelfAttention.forward (fastvideo/models/dits/causal_wanvideo.py) kept global_end_index / local_end_index as 1-element device tensors in the kv_cache dict and read both with `int(kv_cache[...].item())` in every attention layer of every denoising call, then used them as branch conditions and slice bounds: O(layers x steps x blocks) device->host syncs per video
import math

import torch
import torch.nn.functional as F
from torch import nn


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


class CausalWanSelfAttention(nn.Module):
    def __init__(self, dim: int, num_heads: int, local_attn_size: int = -1, sink_size: int = 0):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.local_attn_size = local_attn_size
        self.sink_size = sink_size

    def attn(self, q, k, v):
        return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)).transpose(1, 2)

    def forward(self, q, k, v, freqs_cis, kv_cache: dict, current_start: int = 0, frame_seqlen: int = 16):
        cos, sin = freqs_cis
        roped_query = apply_rotary(q, cos, sin).type_as(v)
        roped_key = apply_rotary(k, cos, sin).type_as(v)

        current_end = current_start + roped_query.shape[1]
        sink_tokens = self.sink_size * frame_seqlen
        max_attention_size = (21 if self.local_attn_size == -1 else self.local_attn_size) * frame_seqlen
        kv_cache_size = kv_cache["k"].shape[1]
        num_new_tokens = roped_query.shape[1]
        global_end_index = (
            int(kv_cache["global_end_index"].item())  # want: D
            if isinstance(kv_cache["global_end_index"], torch.Tensor)
            else int(kv_cache["global_end_index"])
        )
        local_end_index_prev = (
            int(kv_cache["local_end_index"].item())  # want: D
            if isinstance(kv_cache["local_end_index"], torch.Tensor)
            else int(kv_cache["local_end_index"])
        )
        if self.local_attn_size != -1 and (current_end > global_end_index) and (num_new_tokens + local_end_index_prev > kv_cache_size):
            num_evicted_tokens = num_new_tokens + local_end_index_prev - kv_cache_size
            num_rolled_tokens = local_end_index_prev - num_evicted_tokens - sink_tokens
            kv_cache["k"][:, sink_tokens:sink_tokens + num_rolled_tokens] = \
                kv_cache["k"][:, sink_tokens + num_evicted_tokens:sink_tokens + num_evicted_tokens + num_rolled_tokens].clone()
            kv_cache["v"][:, sink_tokens:sink_tokens + num_rolled_tokens] = \
                kv_cache["v"][:, sink_tokens + num_evicted_tokens:sink_tokens + num_evicted_tokens + num_rolled_tokens].clone()
            local_end_index = local_end_index_prev + current_end - global_end_index - num_evicted_tokens
        else:
            local_end_index = local_end_index_prev + current_end - global_end_index
        local_start_index = local_end_index - num_new_tokens
        kv_cache["k"][:, local_start_index:local_end_index] = roped_key
        kv_cache["v"][:, local_start_index:local_end_index] = v
        x = self.attn(
            roped_query,
            kv_cache["k"][:, max(0, local_end_index - max_attention_size):local_end_index],
            kv_cache["v"][:, max(0, local_end_index - max_attention_size):local_end_index],
        )
        if isinstance(kv_cache["global_end_index"], torch.Tensor):
            kv_cache["global_end_index"].fill_(current_end)
        else:
            kv_cache["global_end_index"] = current_end
        if isinstance(kv_cache["local_end_index"], torch.Tensor):
            kv_cache["local_end_index"].fill_(local_end_index)
        else:
            kv_cache["local_end_index"] = local_end_index
        return x


class CausalBlock(nn.Module):
    def __init__(self, dim, heads, local_attn_size=-1):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, elementwise_affine=False)
        self.to_q, self.to_k, self.to_v, self.to_out = (nn.Linear(dim, dim) for _ in range(4))
        self.attn1 = CausalWanSelfAttention(dim, heads, local_attn_size)
        self.ffn = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(approximate="tanh"), nn.Linear(2 * dim, dim))
        self.heads = heads

    def forward(self, x, freqs_cis, kv_cache, current_start, frame_seqlen):
        h = self.norm1(x)
        q = self.to_q(h).unflatten(2, (self.heads, -1))
        k = self.to_k(h).unflatten(2, (self.heads, -1))
        v = self.to_v(h).unflatten(2, (self.heads, -1))
        x = x + self.to_out(self.attn1(q, k, v, freqs_cis, kv_cache, current_start, frame_seqlen).flatten(2))
        return x + self.ffn(x)


class CausalWanTransformer(nn.Module):
    def __init__(self, dim=32, heads=4, layers=3, local_attn_size=-1):
        super().__init__()
        self.blocks = nn.ModuleList([CausalBlock(dim, heads, local_attn_size) for _ in range(layers)])
        self.head_dim = dim // heads

    def rope(self, start, n, device):
        pos = torch.arange(start, start + n, device=device, dtype=torch.float32)[:, None]
        inv = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2, device=device, dtype=torch.float32) / self.head_dim))
        ang = (pos * inv)[None, :, None, :]
        return torch.cos(ang), torch.sin(ang)

    def forward(self, x, kv_caches, current_start, frame_seqlen):
        freqs = self.rope(current_start, x.shape[1], x.device)
        for block, cache in zip(self.blocks, kv_caches):
            x = block(x, freqs, cache, current_start, frame_seqlen)
        return x


def initialize_kv_cache(num_layers, batch, cache_len, heads, head_dim, device, host_counters=False):
    caches = []
    for _ in range(num_layers):
        caches.append({
            "k": torch.zeros(batch, cache_len, heads, head_dim, device=device),
            "v": torch.zeros(batch, cache_len, heads, head_dim, device=device),
            # Self-Forcing / FastVideo keep the cursors on the device; the fix keeps python ints
            "global_end_index": 0 if host_counters else torch.tensor([0], dtype=torch.long, device=device),
            "local_end_index": 0 if host_counters else torch.tensor([0], dtype=torch.long, device=device),
        })
    return caches


@torch.no_grad()
def causal_dmd_generate(model, noise, num_blocks, frames_per_block, frame_seqlen, timesteps, host_counters=False):
    """WanCausalDMDPipeline denoising loop: per block, a few denoising steps, then a cache-commit pass."""
    b, _, dim = noise.shape
    caches = initialize_kv_cache(len(model.blocks), b, 21 * frame_seqlen, 4, dim // 4, noise.device, host_counters)
    out = []
    for blk in range(num_blocks):
        start = blk * frames_per_block * frame_seqlen
        x = noise[:, start:start + frames_per_block * frame_seqlen]
        for t in timesteps:  # python floats from the schedule
            pred = model(x, caches, start, frame_seqlen)
            x = x - t * pred
        model(x, caches, start, frame_seqlen)  # commit clean context into the cache
        out.append(x)
    return torch.cat(out, dim=1)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = CausalWanTransformer().eval()
    fs, fpb, blocks = 4, 2, 3
    noise = torch.randn(1, blocks * fpb * fs, 32)
    a = causal_dmd_generate(model, noise, blocks, fpb, fs, [0.5, 0.25, 0.1])
    b = causal_dmd_generate(model, noise, blocks, fpb, fs, [0.5, 0.25, 0.1], host_counters=True)
    assert torch.allclose(a, b, atol=1e-5)
    print("ok", tuple(a.shape))
