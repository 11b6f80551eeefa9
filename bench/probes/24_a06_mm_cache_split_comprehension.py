# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/39120 (also PR #38353) — the multimodal embedding cache admitted per-item embeddings that were torch.split views of one combined encoder output; each cached view kept the whole batched allocation alive while the LRU counted only the view's bytes, so real memory overran the cache budget; fix: clone admitted tensors whose storage is larger than their payload
from collections import OrderedDict
from dataclasses import dataclass
from typing import Dict, List

import torch
from torch import nn


@dataclass
class MultimodalDataItem:
    hash: int
    feature: torch.Tensor  # [num_patches, in_dim]


class MultiModalCache:
    def __init__(self, max_size: int):
        self.max_size = max_size
        self.current_size = 0
        self.mm_cache: "OrderedDict[int, torch.Tensor]" = OrderedDict()

    @staticmethod
    def _nbytes(t: torch.Tensor) -> int:
        return t.numel() * t.element_size()

    def put_many(self, entries: Dict[int, torch.Tensor]) -> None:
        for h, emb in entries.items():
            while self.mm_cache and self.current_size + self._nbytes(emb) > self.max_size:
                _, old = self.mm_cache.popitem(last=False)
                self.current_size -= self._nbytes(old)
            self.mm_cache[h] = emb  # want: A
            self.current_size += self._nbytes(emb)

    def get(self, h: int):
        return self.mm_cache.get(h)


def get_embedding_and_cache(items: List[MultimodalDataItem], encoder: nn.Module, cache: MultiModalCache):
    missing = [it for it in items if cache.get(it.hash) is None]
    if missing:
        with torch.no_grad():
            combined = encoder(torch.cat([it.feature for it in missing]))
        sizes = [it.feature.shape[0] for it in missing]
        cache.put_many({it.hash: emb for it, emb in zip(missing, torch.split(combined, sizes))})  # maybe: A (the caller that admits the split views; the store itself is in put_many, where sglang's fix clones)
    return torch.cat([cache.get(it.hash) for it in items])


def get_embedding_and_cache_fixed(items: List[MultimodalDataItem], encoder: nn.Module, cache: MultiModalCache):
    missing = [it for it in items if cache.get(it.hash) is None]
    if missing:
        with torch.no_grad():
            combined = encoder(torch.cat([it.feature for it in missing]))
        per_item = torch.split(combined, [it.feature.shape[0] for it in missing])
        cache.put_many({it.hash: emb.clone() for it, emb in zip(missing, per_item)})
    return torch.cat([cache.get(it.hash) for it in items])


if __name__ == "__main__":
    torch.manual_seed(0)
    encoder = nn.Linear(12, 32)
    items = [MultimodalDataItem(h, torch.randn(n, 12)) for h, n in [(1, 64), (2, 16), (3, 100), (4, 20)]]
    cache, cache_fixed = MultiModalCache(max_size=1 << 20), MultiModalCache(max_size=1 << 20)
    out = get_embedding_and_cache(items, encoder, cache)
    out_fixed = get_embedding_and_cache_fixed(items, encoder, cache_fixed)
    assert torch.equal(out, out_fixed)
    combined_bytes = 200 * 32 * 4
    assert cache.current_size == combined_bytes  # what the LRU thinks it holds
    assert all(e.untyped_storage().nbytes() == combined_bytes for e in cache.mm_cache.values())
    assert cache_fixed.get(2).untyped_storage().nbytes() == 16 * 32 * 4
    print("ok: every cached item pinned the whole combined encoder output")
