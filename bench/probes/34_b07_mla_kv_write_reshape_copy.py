# source: vllm-project/vllm-ascend https://github.com/vllm-project/vllm-ascend/pull/15127 — the MLA NoPE KV write flattened the cache with `reshape(-1, D)` and scattered with `index_copy_`; with padded pages the cache is an `as_strided` non-contiguous tensor, so reshape returned a copy and "the scatter would silently write nowhere". The fix writes the tokens into the real cache with advanced-index assignment.
import torch
import torch.nn as nn


def allocate_padded_kv_cache(num_blocks, block_size, page_size_padded, head_dim, dtype=torch.float32):
    # page size is not divisible by the block size -> pad each page, expose an as_strided view
    raw = torch.zeros(num_blocks * page_size_padded * head_dim, dtype=dtype)
    cache = torch.as_strided(raw, (num_blocks, block_size, head_dim), (page_size_padded * head_dim, head_dim, 1))
    return raw, cache


class MLANopeAttention(nn.Module):
    def __init__(self, hidden, kv_lora_rank):
        super().__init__()
        self.kv_a_proj = nn.Linear(hidden, kv_lora_rank, bias=False)
        self.kv_a_layernorm = nn.RMSNorm(kv_lora_rank, eps=1e-6)

    def _exec_kv_mla_nope(self, hidden_states, kv_cache, slots):
        k_nope = self.kv_a_layernorm(self.kv_a_proj(hidden_states))
        cache = kv_cache[0]
        flat = cache.reshape(-1, cache.shape[-1])  # want: B
        token = k_nope.reshape(-1, cache.shape[-1]).to(flat.dtype)
        idx = slots.to(torch.int64)
        flat.index_copy_(0, idx, token)  # want: B
        return k_nope

    def forward(self, hidden_states, kv_cache, slots):
        with torch.no_grad():
            return self._exec_kv_mla_nope(hidden_states, kv_cache, slots)


class MLANopeAttentionFixed(MLANopeAttention):
    def _exec_kv_mla_nope(self, hidden_states, kv_cache, slots):
        k_nope = self.kv_a_layernorm(self.kv_a_proj(hidden_states))
        cache = kv_cache[0]
        block_size = cache.shape[1]
        token = k_nope.reshape(-1, cache.shape[-1]).to(cache.dtype)
        idx = slots.to(torch.int64)
        # advanced indexing writes straight into the (non-contiguous) paged cache
        cache[idx // block_size, idx % block_size] = token
        return k_nope


if __name__ == "__main__":
    torch.manual_seed(0)
    hidden, rank, num_blocks, block_size, padded = 64, 32, 4, 5, 8
    x = torch.randn(6, hidden)
    slots = torch.tensor([0, 1, 2, 7, 8, 13])
    for cls in (MLANopeAttention, MLANopeAttentionFixed):
        torch.manual_seed(1)
        attn = cls(hidden, rank)
        raw, cache = allocate_padded_kv_cache(num_blocks, block_size, padded, rank)
        k_nope = attn(x, [cache], slots)
        written = cache.reshape(-1, rank)[slots]
        print(f"{cls.__name__:22s} cache contiguous={cache.is_contiguous()} tokens landed in cache: "
              f"{torch.allclose(written, k_nope)}")
    torch.manual_seed(1)
    attn = MLANopeAttention(hidden, rank)
    raw, cache = allocate_padded_kv_cache(num_blocks, block_size, padded, rank)
    attn(x, [cache], slots)
    assert raw.abs().sum() == 0
