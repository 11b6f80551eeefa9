# source: Lightning-AI/lightning-thunder https://github.com/Lightning-AI/lightning-thunder/pull/788 — the OverridenKVCache used by thunder's litgpt model updated the KV cache with the out-of-place `k = self.k = torch.index_add(self.k, 2, input_pos, k)` outside torch.compile, allocating and copying the whole (B, H, max_seq, D) cache buffer on every decode step; the fix removes the override and uses litgpt's in-place `self.k.index_copy_(2, input_pos, k)`.
import torch
import torch.nn as nn


def is_compiling():
    return torch.compiler.is_compiling()


class KVCache(nn.Module):
    def __init__(self, k_shape, v_shape, device=None, dtype=None):
        super().__init__()
        self.register_buffer("k", torch.zeros(k_shape, device=device, dtype=dtype), persistent=False)
        self.register_buffer("v", torch.zeros(v_shape, device=device, dtype=dtype), persistent=False)

    def forward(self, input_pos, k, v):
        # update the cache
        k = self.k.index_copy_(2, input_pos, k)
        v = self.v.index_copy_(2, input_pos, v)
        return k, v

    def reset_parameters(self):
        torch.nn.init.zeros_(self.k)
        torch.nn.init.zeros_(self.v)


class OverridenKVCache(KVCache):
    def forward(self, input_pos, k, v):
        # update the cache
        if is_compiling():
            # inductor doesn't support `index_add` with bfloat16
            k = self.k.index_copy_(2, input_pos, k)
            v = self.v.index_copy_(2, input_pos, v)
            return k, v
        # See issue: "Support more indexing operators (index_copy and index_add)"
        k = self.k = torch.index_add(self.k, 2, input_pos, k)  # want: C
        v = self.v = torch.index_add(self.v, 2, input_pos, v)  # want: C
        # THUNDER bug: cannot return self.k, self.v here (may be cuda graphs related - no minimum repro)
        return k, v


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd=32, n_head=4, max_seq_length=128, cache_cls=KVCache):
        super().__init__()
        self.n_head = n_head
        self.head_size = n_embd // n_head
        self.attn = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.proj = nn.Linear(n_embd, n_embd, bias=False)
        shape = (1, n_head, max_seq_length, self.head_size)
        self.kv_cache = cache_cls(shape, shape)

    def forward(self, x, mask, input_pos):
        B, T, C = x.size()
        qkv = self.attn(x)
        q, k, v = qkv.split(C, dim=-1)
        q = q.view(B, T, self.n_head, self.head_size).transpose(1, 2)
        k = k.view(B, T, self.n_head, self.head_size).transpose(1, 2)
        v = v.view(B, T, self.n_head, self.head_size).transpose(1, 2)
        k, v = self.kv_cache(input_pos, k, v)
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        y = y.transpose(1, 2).reshape(B, T, C)
        return self.proj(y)


def decode(attn, steps, max_seq_length=128):
    torch.manual_seed(0)
    causal = torch.ones(max_seq_length, max_seq_length, dtype=torch.bool).tril()
    x = torch.randn(1, 1, 32)
    ptrs = []
    with torch.no_grad():
        for pos in range(steps):
            input_pos = torch.tensor([pos])
            mask = causal[input_pos].view(1, 1, 1, max_seq_length)
            x = attn(x, mask, input_pos)
            ptrs.append(attn.kv_cache.k.data_ptr())
    return x, ptrs


if __name__ == "__main__":
    a = CausalSelfAttention(cache_cls=OverridenKVCache)
    b = CausalSelfAttention(cache_cls=KVCache)
    b.load_state_dict(a.state_dict())
    ya, pa = decode(a, 16)
    yb, pb = decode(b, 16)
    assert torch.allclose(ya, yb, atol=1e-5)
    nbytes = a.kv_cache.k.untyped_storage().nbytes()
    print("index_add (buggy): cache reallocated", len(set(pa)) > 1, "- copies", 2 * nbytes, "bytes per step")
    print("index_copy_ (fixed): cache buffer stable", len(set(pb)) == 1)
