# source: Robbyant/lingbot-world https://github.com/Robbyant/lingbot-world/pull/51 — CausalWanSelfAttention.forward recomputed `frame_seqlen = math.prod(grid_sizes[0][1:]).item()` and read the KV-cache write position back with `kv_cache["local_end_index"].item()` / `kv_cache["global_end_index"].item()` in every layer of every denoising forward; the fix threads frame_seqlen in as an int kwarg and adds a no-eviction fast path (local_attn_size == -1) whose write position is the host-known current_end.
import math

import torch
import torch.nn.functional as F
from torch import nn


class CausalWanSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, local_attn_size=-1, sink_size=0):
        super().__init__()
        self.dim = dim
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.local_attn_size = local_attn_size
        self.sink_size = sink_size
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.o = nn.Linear(dim, dim)

    def forward(self, x, grid_sizes, kv_cache, current_start=0):
        assert self.local_attn_size == -1, "cache-rolling path not reproduced here"
        b, s, n, d = *x.shape[:2], self.num_heads, self.head_dim
        q = self.q(x).view(b, s, n, d)
        k = self.k(x).view(b, s, n, d)
        v = self.v(x).view(b, s, n, d)

        frame_seqlen = math.prod(grid_sizes[0][1:]).item()  # want: D
        current_start_frame = current_start // frame_seqlen
        current_end = current_start + q.shape[1]
        num_new_tokens = q.shape[1]

        # Assign new keys/values directly up to current_end
        local_end_index = kv_cache["local_end_index"].item() + current_end - kv_cache["global_end_index"].item()  # want: D
        local_start_index = local_end_index - num_new_tokens
        kv_cache["k"][:, local_start_index:local_end_index] = k
        kv_cache["v"][:, local_start_index:local_end_index] = v

        x = F.scaled_dot_product_attention(
            q.transpose(1, 2),
            kv_cache["k"][:, :local_end_index].transpose(1, 2),
            kv_cache["v"][:, :local_end_index].transpose(1, 2),
        ).transpose(1, 2)
        kv_cache["global_end_index"].fill_(current_end)
        kv_cache["local_end_index"].fill_(local_end_index)
        self.last_start_frame = current_start_frame
        return self.o(x.flatten(2))


class CausalWanSelfAttentionFixed(CausalWanSelfAttention):
    def forward(self, x, grid_sizes, kv_cache, current_start=0, frame_seqlen=None):
        assert self.local_attn_size == -1, "cache-rolling path not reproduced here"
        b, s, n, d = *x.shape[:2], self.num_heads, self.head_dim
        q = self.q(x).view(b, s, n, d)
        k = self.k(x).view(b, s, n, d)
        v = self.v(x).view(b, s, n, d)

        current_start_frame = current_start // frame_seqlen
        current_end = current_start + q.shape[1]
        num_new_tokens = q.shape[1]

        # No eviction ever happens, so the local cache index equals the global one.
        local_end_index = current_end
        local_start_index = local_end_index - num_new_tokens
        kv_cache["k"][:, local_start_index:local_end_index] = k
        kv_cache["v"][:, local_start_index:local_end_index] = v

        x = F.scaled_dot_product_attention(
            q.transpose(1, 2),
            kv_cache["k"][:, :local_end_index].transpose(1, 2),
            kv_cache["v"][:, :local_end_index].transpose(1, 2),
        ).transpose(1, 2)
        kv_cache["global_end_index"].fill_(current_end)
        kv_cache["local_end_index"].fill_(local_end_index)
        self.last_start_frame = current_start_frame
        return self.o(x.flatten(2))


def init_kv_cache(num_layers, batch, max_tokens, num_heads, head_dim):
    return [{
        "k": torch.zeros(batch, max_tokens, num_heads, head_dim),
        "v": torch.zeros(batch, max_tokens, num_heads, head_dim),
        "global_end_index": torch.tensor([0], dtype=torch.long),
        "local_end_index": torch.tensor([0], dtype=torch.long),
    } for _ in range(num_layers)]


def generate(blocks, num_chunks, frames_per_chunk, h, w, dim, denoise_steps=3, fixed=False):
    torch.manual_seed(1)
    frame_tokens = h * w
    caches = init_kv_cache(len(blocks), 1, num_chunks * frames_per_chunk * frame_tokens,
                           blocks[0].num_heads, blocks[0].head_dim)
    grid_sizes = torch.tensor([[frames_per_chunk, h, w]])
    outs = []
    for chunk in range(num_chunks):
        current_start = chunk * frames_per_chunk * frame_tokens
        x = torch.randn(1, frames_per_chunk * frame_tokens, dim)
        for _ in range(denoise_steps):
            for blk, cache in zip(blocks, caches):
                kw = {"frame_seqlen": frame_tokens} if fixed else {}
                x = x + blk(x, grid_sizes, cache, current_start=current_start, **kw)
        outs.append(x)
    return torch.cat(outs, dim=1)


if __name__ == "__main__":
    torch.manual_seed(0)
    dim, heads = 32, 4
    bug = nn.ModuleList([CausalWanSelfAttention(dim, heads) for _ in range(2)])
    fix = nn.ModuleList([CausalWanSelfAttentionFixed(dim, heads) for _ in range(2)])
    fix.load_state_dict(bug.state_dict())
    with torch.no_grad():
        a = generate(bug, 3, 2, 2, 3, dim)
        b = generate(fix, 3, 2, 2, 3, dim, fixed=True)
    assert torch.allclose(a, b, atol=1e-5)
    print("generated tokens:", tuple(b.shape))
