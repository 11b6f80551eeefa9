# source: rasbt/LLMs-from-scratch https://github.com/rasbt/LLMs-from-scratch/pull/673 — the KV-cache MultiHeadAttention grew cache_k/cache_v with torch.cat on every decode step (reallocating and copying the whole cache per token); the optimized version (gpt_with_kv_cache_optimized.py, "Tip 1: Pre-allocate Memory") pre-allocates the cache once and writes each step into a slice.
import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1), persistent=False
        )
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x, use_cache=False):
        b, num_tokens, d_in = x.shape
        keys_new = self.W_key(x)
        values_new = self.W_value(x)
        queries = self.W_query(x)
        keys_new = keys_new.view(b, num_tokens, self.num_heads, self.head_dim)
        values_new = values_new.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)

        if use_cache:
            if self.cache_k is None:
                self.cache_k, self.cache_v = keys_new, values_new
            else:
                self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)  # want: C
                self.cache_v = torch.cat([self.cache_v, values_new], dim=1)  # want: C
            keys, values = self.cache_k, self.cache_v
        else:
            keys, values = keys_new, values_new

        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        K = attn_scores.size(-1)
        offset = K - num_tokens
        row_idx = torch.arange(num_tokens).unsqueeze(1)
        col_idx = torch.arange(K).unsqueeze(0)
        causal_mask = row_idx + offset < col_idx
        attn_scores.masked_fill_(causal_mask, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)

    def reset_cache(self):
        self.cache_k, self.cache_v = None, None


class MultiHeadAttentionPrealloc(MultiHeadAttention):
    """Fixed version: pre-allocated cache, slice writes."""

    def __init__(self, *args, window_size=64, **kw):
        super().__init__(*args, **kw)
        self.window_size = window_size
        self.ptr_cur = 0

    def forward(self, x, use_cache=False):
        b, num_tokens, d_in = x.shape
        keys_new = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        values_new = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        if self.cache_k is None or self.cache_k.size(0) != b:
            self.cache_k = torch.zeros(b, self.num_heads, self.window_size, self.head_dim, device=x.device)
            self.cache_v = torch.zeros_like(self.cache_k)
            self.ptr_cur = 0
        self.cache_k[:, :, self.ptr_cur:self.ptr_cur + num_tokens, :] = keys_new
        self.cache_v[:, :, self.ptr_cur:self.ptr_cur + num_tokens, :] = values_new
        self.ptr_cur += num_tokens
        keys = self.cache_k[:, :, :self.ptr_cur, :]
        values = self.cache_v[:, :, :self.ptr_cur, :]
        attn_scores = queries @ keys.transpose(2, 3)
        K = attn_scores.size(-1)
        offset = K - num_tokens
        causal_mask = torch.arange(num_tokens).unsqueeze(1) + offset < torch.arange(K).unsqueeze(0)
        attn_scores.masked_fill_(causal_mask, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context_vec)

    def reset_cache(self):
        self.cache_k, self.cache_v = None, None
        self.ptr_cur = 0


class TinyGPT(nn.Module):
    def __init__(self, vocab=97, d=32, heads=4, n_layers=2, ctx=64, attn_cls=MultiHeadAttention):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, d)
        self.pos_emb = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(attn_cls(d, d, ctx, 0.0, heads) for _ in range(n_layers))
        self.out_head = nn.Linear(d, vocab, bias=False)
        self.current_pos = 0

    def forward(self, idx, use_cache=False):
        _, seq_len = idx.shape
        pos_ids = torch.arange(self.current_pos, self.current_pos + seq_len)
        self.current_pos += seq_len
        x = self.tok_emb(idx) + self.pos_emb(pos_ids).unsqueeze(0)
        for blk in self.blocks:
            x = x + blk(x, use_cache=use_cache)
        return self.out_head(x)

    def reset_kv_cache(self):
        for blk in self.blocks:
            blk.reset_cache()
        self.current_pos = 0


def generate_text_simple_cached(model, idx, max_new_tokens):
    model.eval()
    model.reset_kv_cache()
    logits = model(idx, use_cache=True)
    for _ in range(max_new_tokens):
        next_idx = logits[:, -1].argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, next_idx], dim=1)
        logits = model(next_idx, use_cache=True)
    return idx


if __name__ == "__main__":
    torch.manual_seed(123)
    slow = TinyGPT()
    fast = TinyGPT(attn_cls=MultiHeadAttentionPrealloc)
    fast.load_state_dict(slow.state_dict())
    prompt = torch.tensor([[1, 2, 3, 4]])
    with torch.no_grad():
        a = generate_text_simple_cached(slow, prompt, 40)
        b = generate_text_simple_cached(fast, prompt, 40)
    assert torch.equal(a, b)
    print("ok", a.shape)
