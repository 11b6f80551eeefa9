# source: mosaicml/llm-foundry https://github.com/mosaicml/llm-foundry/pull/628 — For multi-query attention the flash/triton attention functions materialised the single KV head n_heads times with `key.repeat(1, 1, n_heads, 1)` on every forward; the fix ("Change `repeat` to `expand` in GQA") uses `.expand(...)`, a stride-0 view that allocates no new memory.
import math

import torch


def _reset_is_causal(num_query_tokens, num_key_tokens, original_is_causal):
    if original_is_causal and num_query_tokens != num_key_tokens:
        if num_query_tokens != 1:
            raise NotImplementedError("query and key with different number of tokens")
        return False
    return original_is_causal


def flash_attn_func(q, k, v, bias, causal, softmax_scale):
    # stand-in for the triton kernel: inputs/outputs are [b, s, h, d]
    scale = softmax_scale or 1 / math.sqrt(q.size(-1))
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if causal:
        s_q, s_k = q.size(1), k.size(1)
        mask = torch.ones(s_q, s_k, dtype=torch.bool).tril()
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    probs = scores.softmax(dim=-1)
    return torch.einsum("bhqk,bkhd->bqhd", probs, v)


def triton_flash_attn_fn(query, key, value, n_heads, kv_n_heads=1, softmax_scale=None,
                         attn_bias=None, is_causal=False):
    b, s_q = query.shape[:2]
    query = query.view(b, s_q, n_heads, -1)
    key = key.view(b, key.size(1), kv_n_heads, -1)
    value = value.view(b, value.size(1), kv_n_heads, -1)

    # multi-query case
    if kv_n_heads == 1:
        # necessary to repeat instead of expand tensor because
        # output contains NaN in edge cases such as with head dimension = 8
        key = key.repeat(1, 1, n_heads, 1)  # want: C
        value = value.repeat(1, 1, n_heads, 1)  # want: C

    reset_is_causal = _reset_is_causal(query.size(1), key.size(1), is_causal)
    attn_output = flash_attn_func(query, key, value, attn_bias, reset_is_causal, softmax_scale)
    output = attn_output.reshape(*attn_output.shape[:2], -1)
    return output, None, (key, value)


def triton_flash_attn_fn_fixed(query, key, value, n_heads, kv_n_heads=1, softmax_scale=None,
                               attn_bias=None, is_causal=False):
    b, s_q = query.shape[:2]
    query = query.view(b, s_q, n_heads, -1)
    key = key.view(b, key.size(1), kv_n_heads, -1)
    value = value.view(b, value.size(1), kv_n_heads, -1)

    # multi-query case
    if kv_n_heads == 1:
        # Expanding a tensor does not allocate new memory, but only creates a new
        # view on the existing tensor where a dimension of size one is expanded
        # to a larger size by setting the stride to 0.
        key = key.expand(*key.shape[:2], n_heads, key.size(-1))
        value = value.expand(*value.shape[:2], n_heads, value.size(-1))

    reset_is_causal = _reset_is_causal(query.size(1), key.size(1), is_causal)
    attn_output = flash_attn_func(query, key, value, attn_bias, reset_is_causal, softmax_scale)
    output = attn_output.reshape(*attn_output.shape[:2], -1)
    return output, None, (key, value)


if __name__ == "__main__":
    torch.manual_seed(0)
    b, s, n_heads, d = 2, 128, 16, 32
    query = torch.randn(b, s, n_heads * d)
    key = torch.randn(b, s, d)
    value = torch.randn(b, s, d)

    out_b, _, (k_b, _) = triton_flash_attn_fn(query, key, value, n_heads, 1, is_causal=True)
    out_f, _, (k_f, _) = triton_flash_attn_fn_fixed(query, key, value, n_heads, 1, is_causal=True)

    print("buggy key storage bytes:", k_b.untyped_storage().nbytes(), "shares input:", k_b.data_ptr() == key.data_ptr())
    print("fixed key storage bytes:", k_f.untyped_storage().nbytes(), "shares input:", k_f.data_ptr() == key.data_ptr())
    assert k_f.data_ptr() == key.data_ptr() and k_b.data_ptr() != key.data_ptr()
    assert k_b.untyped_storage().nbytes() == n_heads * key.untyped_storage().nbytes()
    assert torch.allclose(out_b, out_f, atol=1e-5)
