# source: PriorLabs/TabPFN https://github.com/PriorLabs/TabPFN/pull/933 — ICLAttention cached only the first num_kv_heads_test heads via k[:, :, :nh] slices (then .detach(), which does not copy) in a KVCacheEntry kept by fit_with_cache, silently retaining the full all-heads K/V projections; the fix made the kept slices .contiguous() so the backing tensor can be freed.
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor, nn


# ---- tabpfn/architectures/kv_cache.py --------------------------------------------


@dataclass
class KVCacheEntry:
    """A single key-value cache entry for one attention layer."""

    key: Tensor | None = None
    value: Tensor | None = None

    def is_valid(self) -> bool:
        return self.key is not None and self.value is not None

    def to(self, device) -> "KVCacheEntry":
        if not self.is_valid():
            return KVCacheEntry()
        return KVCacheEntry(key=self.key.to(device), value=self.value.to(device))


@dataclass
class KVCache:
    """Maps layer indices to KVCacheEntry objects."""

    kv: dict[int, KVCacheEntry] = field(default_factory=dict)

    def is_populated(self) -> bool:
        return any(entry.is_valid() for entry in self.kv.values())


# ---- tabpfn/architectures/tabpfn_v3.py -------------------------------------------


def _batched_scaled_dot_product_attention(q, k, v, softmax_scaling_layer=None):
    # q: (B, Rq, H, D), k/v: (B, N, Hkv, D) -> repeat kv heads to H (GQA / MQA)
    B, Rq, H, D = q.shape
    Hkv = k.shape[2]
    if Hkv != H:
        k = k.repeat_interleave(H // Hkv, dim=2)
        v = v.repeat_interleave(H // Hkv, dim=2)
    out = torch.nn.functional.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    )
    return out.transpose(1, 2)


class ICLAttention(nn.Module):
    def __init__(self, emsize, num_heads, num_kv_heads, num_kv_heads_test=None):
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.num_kv_heads_test = num_kv_heads_test
        self.head_dim = emsize // num_heads
        self.q_projection = nn.Linear(emsize, num_heads * self.head_dim, bias=False)
        self.k_projection = nn.Linear(emsize, num_kv_heads * self.head_dim, bias=False)
        self.v_projection = nn.Linear(emsize, num_kv_heads * self.head_dim, bias=False)
        self.out_projection = nn.Linear(num_heads * self.head_dim, emsize, bias=False)
        self.softmax_scaling_layer = None

    def forward(self, x_BRE, single_eval_pos=None, cached_kv: KVCacheEntry | None = None, return_kv=False):
        B, R, _ = x_BRE.shape

        q = self.q_projection(x_BRE).view(B, R, self.num_heads, self.head_dim)

        if cached_kv is not None:
            k = cached_kv.key
            v = cached_kv.value
            if k.dtype != q.dtype:
                k = k.to(q.dtype)
                v = v.to(q.dtype)
            if self.num_kv_heads_test is not None:
                nh_test_heads = self.num_kv_heads_test
                assert k.shape[2] == nh_test_heads, "cached key has wrong num heads"
            out = _batched_scaled_dot_product_attention(q, k, v, softmax_scaling_layer=self.softmax_scaling_layer)
        else:
            N = R if single_eval_pos is None else single_eval_pos
            x_train = x_BRE[:, :N]
            k = self.k_projection(x_train).view(B, N, self.num_kv_heads, self.head_dim)
            v = self.v_projection(x_train).view(B, N, self.num_kv_heads, self.head_dim)

            if self.num_kv_heads_test is not None and single_eval_pos is not None and N < R:
                out_train = _batched_scaled_dot_product_attention(
                    q[:, :N], k, v, softmax_scaling_layer=self.softmax_scaling_layer
                )
                nh_test_heads = self.num_kv_heads_test
                out_test = _batched_scaled_dot_product_attention(
                    q[:, N:],
                    k[:, :, :nh_test_heads],
                    v[:, :, :nh_test_heads],
                    softmax_scaling_layer=self.softmax_scaling_layer,
                )
                out = torch.cat([out_train, out_test], dim=1)
            else:
                out = _batched_scaled_dot_product_attention(q, k, v, softmax_scaling_layer=self.softmax_scaling_layer)

        result = self.out_projection(out.reshape(B, R, self.head_dim * self.num_heads))

        kv_entry: KVCacheEntry | None = None
        if return_kv:
            # Only cache the KV heads used for test<-train attention to save
            # memory. When num_kv_heads_test is set, test rows use fewer heads.
            k_cache, v_cache = k, v
            if self.num_kv_heads_test is not None:
                nh_test_heads = self.num_kv_heads_test
                k_cache = k_cache[:, :, :nh_test_heads]  # want: A
                v_cache = v_cache[:, :, :nh_test_heads]  # want: A
            kv_entry = KVCacheEntry(key=k_cache.detach(), value=v_cache.detach())  # want: A
        return result, kv_entry


class ICLAttentionFixed(ICLAttention):
    """Post-fix cache construction (look-alike, correct)."""

    def build_entry(self, k, v):
        k_cache, v_cache = k, v
        if self.num_kv_heads_test is not None:
            nh_test_heads = self.num_kv_heads_test
            k_cache = k_cache[:, :, :nh_test_heads].contiguous()
            v_cache = v_cache[:, :, :nh_test_heads].contiguous()
        return KVCacheEntry(key=k_cache.detach(), value=v_cache.detach())


class TransformerBlock(nn.Module):
    def __init__(self, emsize, nhead, num_kv_heads, num_kv_heads_test):
        super().__init__()
        self.icl_attention = ICLAttention(emsize, nhead, num_kv_heads, num_kv_heads_test)
        self.layernorm = nn.LayerNorm(emsize)

    def forward(self, x_BRE, single_eval_pos, save_peak_memory_factor=None, *, cached_kv=None, return_kv=False):
        kv_entry = None
        if return_kv:
            attn_out, kv_entry = self.icl_attention(self.layernorm(x_BRE), single_eval_pos=single_eval_pos, return_kv=True)
            x_BRE = x_BRE + attn_out
        elif cached_kv is not None:
            out, _ = self.icl_attention(self.layernorm(x_BRE), single_eval_pos=single_eval_pos, cached_kv=cached_kv)
            x_BRE = x_BRE + out
        else:
            out, _ = self.icl_attention(self.layernorm(x_BRE), single_eval_pos=single_eval_pos)
            x_BRE = x_BRE + out
        return x_BRE, kv_entry


class TabPFNV3Icl(nn.Module):
    def __init__(self, emsize=32, nhead=4, num_kv_heads=4, num_kv_heads_test=1, nlayers=2):
        super().__init__()
        self.icl_blocks = nn.ModuleList(
            [TransformerBlock(emsize, nhead, num_kv_heads, num_kv_heads_test) for _ in range(nlayers)]
        )

    def forward(self, x_BRiD, num_train, kv_cache: KVCache | None = None, return_kv_cache=False):
        icl_cache_out: KVCache | None = None
        if kv_cache is not None and kv_cache.is_populated():
            for layer_idx, block in enumerate(self.icl_blocks):
                x_BRiD, _ = block(x_BRiD, 0, cached_kv=kv_cache.kv[layer_idx])
        elif return_kv_cache:
            icl_cache_out = KVCache()
            for layer_idx, block in enumerate(self.icl_blocks):
                x_BRiD, kv_entry = block(x_BRiD, num_train, return_kv=True)
                icl_cache_out.kv[layer_idx] = kv_entry
        else:
            for block in self.icl_blocks:
                x_BRiD, _ = block(x_BRiD, num_train)
        return x_BRiD, icl_cache_out


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TabPFNV3Icl().eval()
    x = torch.randn(2, 300, 32)
    with torch.no_grad():
        _, cache = model(x, num_train=256, return_kv_cache=True)  # fit_with_cache
        entry = cache.kv[0]
        kept = entry.key.numel() * entry.key.element_size()
        held = entry.key.untyped_storage().nbytes()
        print(f"cached key: {kept} bytes logical, {held} bytes storage held")
        assert held > kept

        fixed = ICLAttentionFixed(32, 4, 4, 1).build_entry(torch.randn(2, 256, 4, 8), torch.randn(2, 256, 4, 8))
        assert fixed.key.untyped_storage().nbytes() == fixed.key.numel() * fixed.key.element_size()

        out, _ = model(x[:, 256:], num_train=0, kv_cache=cache)  # predict with cache
        print("predict with cache:", tuple(out.shape))
