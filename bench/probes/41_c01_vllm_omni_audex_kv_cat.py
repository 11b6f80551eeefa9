# source: vllm-project/vllm-omni https://github.com/vllm-project/vllm-omni/pull/5970 — Audex's streaming causal speech decoder kept a per-layer KV cache in `CausalCodecDecoderCache` and `update` appended every decoded chunk with `torch.cat([prev_key, key], dim=2)` in every transformer layer, so each chunk re-copied the whole K/V history (quadratic cumulative copy traffic, issue #5964). The PR replaces the concatenation with per-layer geometrically growing K/V buffers and copies only the new chunk into them on the steady-state path.
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


class CausalCodecDecoderCache:
    """Per-request KV cache for streaming causal decoding."""

    def __init__(self) -> None:
        self.key_values: dict[int, tuple[Tensor, Tensor]] = {}
        self.position = 0

    def input_positions(self, length: int, device: torch.device) -> Tensor:
        return torch.arange(self.position, self.position + length, device=device).unsqueeze(0)

    def update(self, layer_idx: int, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        if layer_idx in self.key_values:
            prev_key, prev_value = self.key_values[layer_idx]
            key = torch.cat([prev_key, key], dim=2)  # want: C
            value = torch.cat([prev_value, value], dim=2)  # want: C
        self.key_values[layer_idx] = (key, value)
        return key, value

    def advance(self, length: int) -> None:
        self.position += length


@dataclass
class _LayerKVCache:
    key: Tensor
    value: Tensor
    length: int


class CausalCodecDecoderCacheFixed(CausalCodecDecoderCache):
    """Per-request growable KV cache for streaming causal decoding."""

    def __init__(self, initial_capacity: int = 16) -> None:
        super().__init__()
        self._initial_capacity = initial_capacity
        self._layers: dict[int, _LayerKVCache] = {}

    def update(self, layer_idx: int, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
        chunk_length = key.size(2)
        required_capacity = self.position + chunk_length
        layer = self._layers.get(layer_idx)
        if layer is None:
            capacity = self._next_capacity(0, required_capacity)
            cache_shape = (*key.shape[:2], capacity, key.shape[3])
            layer = _LayerKVCache(key=key.new_empty(cache_shape), value=value.new_empty(cache_shape), length=0)
            self._layers[layer_idx] = layer
        if required_capacity > layer.key.size(2):
            capacity = self._next_capacity(layer.key.size(2), required_capacity)
            cache_shape = (*layer.key.shape[:2], capacity, layer.key.shape[3])
            new_key = layer.key.new_empty(cache_shape)
            new_value = layer.value.new_empty(cache_shape)
            new_key[:, :, : self.position].copy_(layer.key[:, :, : self.position])
            new_value[:, :, : self.position].copy_(layer.value[:, :, : self.position])
            layer.key = new_key
            layer.value = new_value
        layer.key[:, :, self.position : required_capacity].copy_(key)
        layer.value[:, :, self.position : required_capacity].copy_(value)
        layer.length = required_capacity
        return layer.key[:, :, :required_capacity], layer.value[:, :, :required_capacity]

    def _next_capacity(self, current_capacity: int, required_capacity: int) -> int:
        capacity = max(current_capacity, self._initial_capacity)
        while capacity < required_capacity:
            capacity *= 2
        return capacity


class Attention(nn.Module):
    def __init__(self, dim: int, n_heads: int, layer_idx: int):
        super().__init__()
        self.n_heads = n_heads
        self.layer_idx = layer_idx
        self.c_attn = nn.Linear(dim, 3 * dim, bias=False)
        self.c_proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x: Tensor, cache: CausalCodecDecoderCache, input_pos: Tensor) -> Tensor:
        batch_size, seq_len, _ = x.shape
        qkv = self.c_attn(x)
        head_dim = qkv.size(-1) // (3 * self.n_heads)
        qkv = qkv.view(batch_size, seq_len, 3, self.n_heads, head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        k, v = cache.update(self.layer_idx, k, v)
        key_pos = torch.arange(k.size(2), device=x.device).view(1, 1, 1, -1)
        attn_mask = key_pos <= input_pos.view(input_pos.size(0), 1, -1, 1)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        return self.c_proj(y.transpose(1, 2).contiguous().view(batch_size, seq_len, -1))


def decode_stream(attn: Attention, chunks, cache: CausalCodecDecoderCache):
    outs, key_ptrs = [], []
    for chunk in chunks:
        input_pos = cache.input_positions(chunk.size(1), chunk.device).expand(chunk.size(0), -1)
        outs.append(attn(chunk, cache, input_pos))
        if isinstance(cache, CausalCodecDecoderCacheFixed):
            key_ptrs.append(cache._layers[attn.layer_idx].key.data_ptr())
        else:
            key_ptrs.append(cache.key_values[attn.layer_idx][0].data_ptr())
        cache.advance(chunk.size(1))
    return torch.cat(outs, dim=1), key_ptrs


if __name__ == "__main__":
    torch.manual_seed(0)
    attn = Attention(dim=32, n_heads=4, layer_idx=0).eval()
    chunks = [torch.randn(1, 2, 32) for _ in range(6)]
    with torch.no_grad():
        out_a, ptrs_a = decode_stream(attn, chunks, CausalCodecDecoderCache())
        out_b, ptrs_b = decode_stream(attn, chunks, CausalCodecDecoderCacheFixed(initial_capacity=16))
    assert torch.allclose(out_a, out_b, atol=1e-5)
    assert len(set(ptrs_a)) == len(chunks)  # a fresh full-history copy every chunk
    assert len(set(ptrs_b)) == 1  # new chunks are written into the same buffer
    print("ok")
