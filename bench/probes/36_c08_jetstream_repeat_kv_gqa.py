# source: AI-Hypercomputer/jetstream-pytorch https://github.com/AI-Hypercomputer/jetstream-pytorch/pull/171 — AttentionKernel expanded the GQA key/value cache to the query head count with `repeat_kv` (expand + reshape, which materializes n_rep copies of the whole cache) on every attention call; the fix stopped repeating K/V and instead reshapes the query heads into (kv_heads, rep * seqlen) so the dense kernel reads the cache once.
import math

import torch
import torch.nn.functional as F


def repeat_kv(x, n_rep):
    """torch.repeat_interleave(x, dim=1, repeats=n_rep)."""
    bs, n_kv_heads, slen, head_dim = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(bs, n_kv_heads, n_rep, slen, head_dim).reshape(bs, n_kv_heads * n_rep, slen, head_dim)  # maybe: C (the copy happens here, but the call sites are what the fix removed)


def dense_attention(xq, keys, values, mask=None):
    head_dim = xq.shape[-1]
    scores = torch.einsum("ikjl,ikml->ikjm", xq, keys) / math.sqrt(head_dim)
    if mask is not None:
        scores = scores + mask
    scores = F.softmax(scores, dim=-1)
    return torch.einsum("ikjm,ikml->ikjl", scores, values)


def reshape_heads(xq, keys):
    bq, hq, tq, dq = xq.shape
    hkv = keys.shape[-3]
    rep = hq // hkv
    if rep > 1:
        xq = xq.reshape(bq, hkv, rep, tq, dq).reshape(bq, hkv, rep * tq, dq)
    return xq, rep


def dense_attention_gqa(xq, keys, values):
    bq, hq, tq, dq = xq.shape
    xq, rep = reshape_heads(xq, keys)
    output = dense_attention(xq, keys, values)
    return output.reshape(bq, hq // rep, rep, tq, dq).reshape(bq, hq, tq, dq)


class KVCacheManager:
    def __init__(self, bsz, kv_heads, max_len, head_dim):
        self.cache_k = torch.zeros(bsz, kv_heads, max_len, head_dim)
        self.cache_v = torch.zeros(bsz, kv_heads, max_len, head_dim)
        self.pos = 0

    def update(self, xk, xv, layer_id):
        end = self.pos + xk.shape[2]
        self.cache_k[:, :, self.pos:end] = xk
        self.cache_v[:, :, self.pos:end] = xv
        self.pos = end
        return self.cache_k[:, :, :end], self.cache_v[:, :, :end]


class AttentionKernel:
    def __init__(self, layer_id, fixed=False):
        self.layer_id = layer_id
        self.fixed = fixed

    def __call__(self, xq, xk, xv, mask, cache):
        bsz, num_heads, seqlen, head_dim = xq.shape
        n_rep = num_heads // xk.shape[-3]
        orig_keys, orig_values = cache.update(xk, xv, self.layer_id)
        if self.fixed:
            return dense_attention_gqa(xq, orig_keys, orig_values)
        orig_keys = repeat_kv(orig_keys, n_rep)  # want: C
        orig_values = repeat_kv(orig_values, n_rep)  # want: C
        return dense_attention(xq, orig_keys, orig_values, mask)


if __name__ == "__main__":
    torch.manual_seed(0)
    bsz, hq, hkv, d, max_len = 2, 8, 2, 16, 32
    buggy, fixed = AttentionKernel(0), AttentionKernel(0, fixed=True)
    cache_b, cache_f = KVCacheManager(bsz, hkv, max_len, d), KVCacheManager(bsz, hkv, max_len, d)
    for step in range(4):  # decode steps
        xq, xk, xv = torch.randn(bsz, hq, 1, d), torch.randn(bsz, hkv, 1, d), torch.randn(bsz, hkv, 1, d)
        out_b = buggy(xq, xk, xv, None, cache_b)
        out_f = fixed(xq, xk, xv, None, cache_f)
        assert torch.allclose(out_b, out_f, atol=1e-5)
    keys = cache_b.cache_k[:, :, :cache_b.pos]
    rep = repeat_kv(keys, hq // hkv)
    assert rep.data_ptr() != keys.data_ptr() and rep.numel() == keys.numel() * (hq // hkv)
    print("repeat_kv materialized", rep.numel() - keys.numel(), "extra key elements per layer per step")
