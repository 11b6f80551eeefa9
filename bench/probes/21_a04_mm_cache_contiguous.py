# source: ai-dynamo/dynamo https://github.com/ai-dynamo/dynamo/pull/14452 — the vLLM encode worker cached CachedEmbedding(tensor=item.embeddings.contiguous()); the items are torch.split views of one encoder output and .contiguous() returns an already-contiguous view itself, so each entry pinned the whole batch while the LRU charged only its own bytes; fix: clone(memory_format=torch.contiguous_format)
from collections import OrderedDict
from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn


@dataclass
class CachedEmbedding:
    tensor: torch.Tensor
    image_grid_thw: list


@dataclass
class EmbeddingItem:
    key: Optional[str]
    image_grid_thw: list
    embeddings: torch.Tensor


class EmbeddingCacheManager:
    def __init__(self, capacity_bytes: int):
        self.capacity_bytes = capacity_bytes
        self.used_bytes = 0
        self._entries: "OrderedDict[str, CachedEmbedding]" = OrderedDict()

    @staticmethod
    def _size(entry: CachedEmbedding) -> int:
        return entry.tensor.numel() * entry.tensor.element_size()

    def get(self, key: str) -> Optional[CachedEmbedding]:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def set(self, key: str, entry: CachedEmbedding) -> None:
        size = self._size(entry)
        while self._entries and self.used_bytes + size > self.capacity_bytes:
            _, old = self._entries.popitem(last=False)
            self.used_bytes -= self._size(old)
        self._entries[key] = entry
        self.used_bytes += size


class EncodeWorkerHandler:
    def __init__(self, vision_encoder: nn.Module, capacity_gb: float = 1.0):
        self.vision_encoder = vision_encoder
        self.embedding_cache_manager = EmbeddingCacheManager(int(capacity_gb * 1024**3))

    def _store_embedding_item(self, item: EmbeddingItem) -> None:
        if item.key is None:
            return
        self.embedding_cache_manager.set(item.key, CachedEmbedding(tensor=item.embeddings.contiguous(), image_grid_thw=item.image_grid_thw))  # want: A

    def _store_embedding_item_owned(self, item: EmbeddingItem) -> None:
        if item.key is None:
            return
        owned = item.embeddings.clone(memory_format=torch.contiguous_format)
        self.embedding_cache_manager.set(item.key, CachedEmbedding(tensor=owned, image_grid_thw=item.image_grid_thw))

    @torch.no_grad()
    def encode(self, keys: list, pixel_values: torch.Tensor, grids: list) -> list:
        tokens_per_image = [t * h * w for t, h, w in grids]
        combined = self.vision_encoder(pixel_values)
        items = [
            EmbeddingItem(key, grid, emb)
            for key, grid, emb in zip(keys, grids, combined.split(tokens_per_image, dim=0))
        ]
        for item in items:
            self._store_embedding_item(item)
        return items


if __name__ == "__main__":
    worker = EncodeWorkerHandler(nn.Linear(8, 16))
    grids = [(1, 2, 2), (1, 2, 4), (1, 4, 4)]
    pixels = torch.randn(sum(t * h * w for t, h, w in grids), 8)
    worker.encode(["a", "b", "c"], pixels, grids)
    cached = worker.embedding_cache_manager.get("a").tensor
    assert cached.is_contiguous()
    assert cached.untyped_storage().nbytes() == pixels.shape[0] * 16 * 4  # the whole encoder output
    assert worker.embedding_cache_manager.used_bytes == 28 * 16 * 4  # but charged for its own rows only
    worker._store_embedding_item_owned(EmbeddingItem("a2", grids[0], cached))
    owned = worker.embedding_cache_manager.get("a2").tensor
    assert owned.untyped_storage().nbytes() == owned.numel() * 4
    print("ok")
