# source: intel/ipex-llm https://github.com/intel/ipex-llm/pull/8580 — the Llama attention forward grew past_key_value with torch.cat([past_key_value[0], key_states], dim=2) on every decode step, re-copying the whole KV cache per token; the PR pre-allocates the cache in KV_CACHE_ALLOC_BLOCK_LENGTH blocks (init_kv_cache / extend_kv_cache) and appends the new token into an as_strided view (append_kv_cache).
import math

import torch
from torch import nn

KV_CACHE_ALLOC_BLOCK_LENGTH = 256


class LlamaAttention(nn.Module):
    def __init__(self, hidden_size=64, num_heads=4):
        super().__init__()
        self.hidden_size, self.num_heads = hidden_size, num_heads
        self.head_dim = hidden_size // num_heads
        self.q_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.k_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.v_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def _attend(self, query_states, key_states, value_states, bsz, q_len):
        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).reshape(bsz, q_len, self.hidden_size)
        return self.o_proj(attn_output)

    def forward(self, hidden_states, past_key_value=None, use_cache=True):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)

        if past_key_value is not None:
            # reuse k, v, self_attention
            key_states = torch.cat([past_key_value[0], key_states], dim=2)  # want: C
            value_states = torch.cat([past_key_value[1], value_states], dim=2)  # want: C
        past_key_value = (key_states, value_states) if use_cache else None
        return self._attend(query_states, key_states, value_states, bsz, q_len), past_key_value


def init_kv_cache(batch_size, num_heads, head_dim, current_length, max_length, dtype, device):
    key_cache_storage = torch.empty(batch_size, num_heads, max_length, head_dim, dtype=dtype, device=device)
    value_cache_storage = torch.empty(batch_size, num_heads, max_length, head_dim, dtype=dtype, device=device)
    key_cache = key_cache_storage.as_strided((batch_size, num_heads, current_length, head_dim),
                                             key_cache_storage.stride(), storage_offset=0)
    value_cache = value_cache_storage.as_strided((batch_size, num_heads, current_length, head_dim),
                                                 value_cache_storage.stride(), storage_offset=0)
    return key_cache, value_cache


def append_kv_cache(cache_k, cache_v, key_states, value_states):
    new_size = (cache_k.size(0), cache_k.size(1), cache_k.size(2) + key_states.size(2), cache_k.size(3))
    new_cache_k = cache_k.as_strided(new_size, cache_k.stride(), storage_offset=0)
    new_cache_k[:, :, cache_k.size(2):cache_k.size(2) + key_states.size(2), :] = key_states
    new_cache_v = cache_v.as_strided(new_size, cache_v.stride(), storage_offset=0)
    new_cache_v[:, :, cache_v.size(2):cache_v.size(2) + key_states.size(2), :] = value_states
    return new_cache_k, new_cache_v


class LlamaAttentionFixed(LlamaAttention):
    def forward(self, hidden_states, past_key_value=None, use_cache=True):
        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        kv_seq_len = q_len + (past_key_value[0].shape[-2] if past_key_value is not None else 0)

        if past_key_value is not None:
            cache_k, cache_v = past_key_value
            if cache_k.stride()[1] <= cache_k.size(2) * cache_k.size(3):
                # allocate a new, larger block only when the current one is full
                new_cache_k, new_cache_v = init_kv_cache(bsz, self.num_heads, self.head_dim, cache_k.size(2),
                                                         kv_seq_len + KV_CACHE_ALLOC_BLOCK_LENGTH,
                                                         cache_k.dtype, cache_k.device)
                new_cache_k[:] = cache_k
                new_cache_v[:] = cache_v
                cache_k, cache_v = new_cache_k, new_cache_v
            key_states, value_states = append_kv_cache(cache_k, cache_v, key_states, value_states)
        elif use_cache:
            new_key_states, new_value_states = init_kv_cache(bsz, self.num_heads, self.head_dim, kv_seq_len,
                                                             kv_seq_len + KV_CACHE_ALLOC_BLOCK_LENGTH,
                                                             key_states.dtype, key_states.device)
            new_key_states[:] = key_states
            new_value_states[:] = value_states
            key_states, value_states = new_key_states, new_value_states
        past_key_value = (key_states, value_states) if use_cache else None
        return self._attend(query_states, key_states, value_states, bsz, q_len), past_key_value


def decode(attn, prompt, steps):
    out, past = attn(prompt)
    ptrs = {past[0].data_ptr()}
    x = out[:, -1:]
    for _ in range(steps):
        out, past = attn(x, past_key_value=past)
        ptrs.add(past[0].data_ptr())
        x = out
    return out, len(ptrs)


if __name__ == "__main__":
    torch.manual_seed(0)
    buggy = LlamaAttention().eval()
    fixed = LlamaAttentionFixed().eval()
    fixed.load_state_dict(buggy.state_dict())
    prompt = torch.randn(1, 16, 64)
    with torch.no_grad():
        out_b, n_b = decode(buggy, prompt, 40)
        out_f, n_f = decode(fixed, prompt, 40)
    assert torch.allclose(out_b, out_f, atol=1e-5)
    print("distinct key-cache buffers over 40 decode steps: buggy", n_b, "fixed", n_f)
