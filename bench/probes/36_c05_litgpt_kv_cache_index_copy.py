# source: Lightning-AI/litgpt (then lit-parrot) https://github.com/Lightning-AI/litgpt/pull/174 — CausalSelfAttention updated its KV cache with the out-of-place `k = cache_k.index_copy(2, input_pos, k)`, which copies the whole (B, heads, max_seq_length, head_size) cache on every decode step just to write one position, and then rebinds kv_cache to the new tensor; the fix used the in-place `index_copy_`.
import math

import torch
import torch.nn.functional as F
from torch import nn


class Config:
    n_embd = 32
    n_head = 4
    head_size = 8
    bias = False


class CausalSelfAttention(nn.Module):
    def __init__(self, config, fixed=False):
        super().__init__()
        self.attn = nn.Linear(config.n_embd, 3 * config.n_head * config.head_size, bias=config.bias)
        self.proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.config = config
        self.fixed = fixed

    def forward(self, x, max_seq_length, mask=None, input_pos=None, kv_cache=None):
        B, T, C = x.size()
        qkv = self.attn(x)
        q, k, v = qkv.split(C, dim=2)
        q = q.view(B, T, self.config.n_head, self.config.head_size).transpose(1, 2)
        k = k.view(B, T, self.config.n_head, self.config.head_size).transpose(1, 2)
        v = v.view(B, T, self.config.n_head, self.config.head_size).transpose(1, 2)

        if input_pos is not None and kv_cache is not None:
            cache_k, cache_v = kv_cache
            cache_k, cache_v = cache_k.to(dtype=k.dtype), cache_v.to(dtype=v.dtype)
            if self.fixed:
                k = cache_k.index_copy_(2, input_pos, k)
                v = cache_v.index_copy_(2, input_pos, v)
            else:
                k = cache_k.index_copy(2, input_pos, k)  # want: C
                v = cache_v.index_copy(2, input_pos, v)  # want: C
            kv_cache = k, v

        y = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, dropout_p=0.0, scale=1.0 / math.sqrt(self.config.head_size)
        )
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y), kv_cache


@torch.no_grad()
def generate(block, prompt, max_seq_length, steps):
    B = prompt.size(0)
    cfg = block.config
    kv_cache = (torch.zeros(B, cfg.n_head, max_seq_length, cfg.head_size),
                torch.zeros(B, cfg.n_head, max_seq_length, cfg.head_size))
    ptrs, outs = [kv_cache[0].data_ptr()], []
    for pos in range(steps):
        input_pos = torch.tensor([pos])
        mask = torch.arange(max_seq_length).le(pos).view(1, 1, 1, -1)
        y, kv_cache = block(prompt[:, pos: pos + 1], max_seq_length, mask, input_pos, kv_cache)
        ptrs.append(kv_cache[0].data_ptr())
        outs.append(y)
    return torch.cat(outs, dim=1), ptrs


if __name__ == "__main__":
    torch.manual_seed(0)
    buggy = CausalSelfAttention(Config())
    fixed = CausalSelfAttention(Config(), fixed=True)
    fixed.load_state_dict(buggy.state_dict())
    x = torch.randn(2, 6, Config.n_embd)
    y_bug, ptrs_bug = generate(buggy, x, max_seq_length=16, steps=6)
    y_fix, ptrs_fix = generate(fixed, x, max_seq_length=16, steps=6)
    assert torch.allclose(y_bug, y_fix, atol=1e-6)
    assert ptrs_bug[1] != ptrs_bug[0]  # index_copy returned a brand-new full cache
    assert len(set(ptrs_fix)) == 1  # cache updated in place, same storage every step
    print("out-of-place index_copy allocated a full KV cache on each of", len(ptrs_bug) - 1, "steps")
