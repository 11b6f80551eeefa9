# source: pytorch/executorch https://github.com/pytorch/executorch/pull/18513 — StandardSDPA (Voxtral Realtime, AOTI/Metal path) expanded the full static KV cache to n_heads with k.repeat_interleave(n_rep, dim=1) / v.repeat_interleave(...) before F.scaled_dot_product_attention on every decode step; the fix drops the expansion and passes enable_gqa=True so SDPA broadcasts the KV heads.
import torch
import torch.nn as nn
import torch.nn.functional as F


class StaticKVCache(nn.Module):
    def __init__(self, max_seq_len, n_kv_heads, head_dim):
        super().__init__()
        cache_shape = (1, n_kv_heads, max_seq_len, head_dim)
        self.register_buffer("k_cache", torch.zeros(cache_shape))
        self.register_buffer("v_cache", torch.zeros(cache_shape))

    def update(self, input_pos, k_val, v_val):
        k_val = k_val.transpose(1, 2)
        v_val = v_val.transpose(1, 2)
        self.k_cache.index_copy_(2, input_pos, k_val)
        self.v_cache.index_copy_(2, input_pos, v_val)
        return self.k_cache, self.v_cache


class StandardSDPA(nn.Module):
    def __init__(self, n_heads, n_kv_heads, head_dim):
        super().__init__()
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.head_dim = head_dim
        self.dim = n_heads * head_dim

    def _mask(self, input_pos, seqlen, max_seq_len, device):
        if seqlen > 1:
            q_pos = input_pos.unsqueeze(1)
            k_pos = torch.arange(max_seq_len, device=device).unsqueeze(0)
            return k_pos <= q_pos
        curr_pos = input_pos[0]
        k_pos = torch.arange(max_seq_len, device=device)
        return (k_pos <= curr_pos).unsqueeze(0)

    def forward(self, input_pos, q, k, v, bsz, seqlen):
        q = q.transpose(1, 2)
        # Handle GQA: repeat k/v heads if needed
        if self.n_heads != self.n_kv_heads:
            n_rep = self.n_heads // self.n_kv_heads
            k = k.repeat_interleave(n_rep, dim=1)  # want: C
            v = v.repeat_interleave(n_rep, dim=1)  # want: C
        max_seq_len = k.shape[2]
        attn_mask = self._mask(input_pos, seqlen, max_seq_len, q.device)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=False)
        y = y.transpose(1, 2).contiguous()
        return y.view(bsz, seqlen, self.dim)


class StandardSDPAFixed(StandardSDPA):
    def forward(self, input_pos, q, k, v, bsz, seqlen):
        q = q.transpose(1, 2)
        max_seq_len = k.shape[2]
        attn_mask = self._mask(input_pos, seqlen, max_seq_len, q.device)
        y = F.scaled_dot_product_attention(
            q,
            k,
            v,
            attn_mask=attn_mask,
            is_causal=False,
            enable_gqa=self.n_heads != self.n_kv_heads,
        )
        y = y.transpose(1, 2).contiguous()
        return y.view(bsz, seqlen, self.dim)


class LMAttention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, head_dim, max_seq_len, sdpa_cls):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, head_dim
        self.wq = nn.Linear(dim, n_heads * head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.wo = nn.Linear(n_heads * head_dim, dim, bias=False)
        self.kv_cache = StaticKVCache(max_seq_len, n_kv_heads, head_dim)
        self.sdpa = sdpa_cls(n_heads, n_kv_heads, head_dim)

    def forward(self, x, input_pos):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_heads, self.head_dim)
        k = self.wk(x).view(B, T, self.n_kv_heads, self.head_dim)
        v = self.wv(x).view(B, T, self.n_kv_heads, self.head_dim)
        k, v = self.kv_cache.update(input_pos, k, v)
        return self.wo(self.sdpa(input_pos, q, k, v, B, T))


if __name__ == "__main__":
    torch.manual_seed(0)
    dim, H, KV, D, S = 64, 8, 2, 8, 256
    a = LMAttention(dim, H, KV, D, S, StandardSDPA)
    b = LMAttention(dim, H, KV, D, S, StandardSDPAFixed)
    b.load_state_dict(a.state_dict())
    x = torch.randn(1, 4, dim)
    pos = torch.arange(4)
    with torch.no_grad():
        ya, yb = a(x, pos), b(x, pos)
    assert torch.allclose(ya, yb, atol=1e-5)
    kc = a.kv_cache.k_cache
    n_rep = H // KV
    print("KV cache bytes:", kc.untyped_storage().nbytes(),
          "| buggy allocates per layer per step:", 2 * n_rep * kc.untyped_storage().nbytes(), "bytes of repeated K/V",
          "| fixed: 0 (enable_gqa broadcasts)")
