# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/32498 — On a multimodal embedding cache miss the encoder could return a list of per-item tensors; mm_utils concatenated them into one flat tensor and then cached the torch.split pieces per item hash. Every cached piece is a view of the flat concatenation, so each cache entry pins the whole batch's embeddings while the cache only accounts for the piece. The fix handles list outputs directly so each cached embedding owns its own storage.
from typing import Callable, Dict, List, Optional

import torch


class MultimodalDataItem:
    def __init__(self, hash: int, num_tokens: int, feature: torch.Tensor):
        self.hash = hash
        self.num_tokens = num_tokens
        self.feature = feature


class MultiModalCache:
    def __init__(self, max_size: int):
        self.max_size = max_size
        self.current_size = 0
        self.mm_cache: Dict[int, torch.Tensor] = {}

    def get(self, mm_hash: int) -> Optional[torch.Tensor]:
        return self.mm_cache.get(mm_hash)

    def put(self, mm_hash: int, embedding: torch.Tensor) -> bool:
        data_size = embedding.numel() * embedding.element_size()
        if self.current_size + data_size > self.max_size:
            return False
        self.mm_cache[mm_hash] = embedding
        self.current_size += data_size
        return True


def get_embedding_and_mask(
    data_embedding_func: Callable[[List[MultimodalDataItem]], object],
    embedding_items: List[MultimodalDataItem],
    embedding_cache: MultiModalCache,
) -> torch.Tensor:
    item_hashes = [item.hash for item in embedding_items]
    cached = [embedding_cache.get(h) for h in item_hashes]
    if all(c is not None for c in cached):
        return torch.cat(cached)
    embedding = data_embedding_func(embedding_items)
    if isinstance(embedding, list):
        embedding = torch.cat(embedding, dim=0)
    item_lens = [item.num_tokens for item in embedding_items]
    for item_hash, item_embedding in zip(item_hashes, torch.split(embedding, item_lens)):  # maybe: A (split views of the flat concatenation are made here)
        embedding_cache.put(item_hash, item_embedding)  # want: A
    return embedding


def get_embedding_and_mask_fixed(
    data_embedding_func: Callable[[List[MultimodalDataItem]], object],
    embedding_items: List[MultimodalDataItem],
    embedding_cache: MultiModalCache,
) -> torch.Tensor:
    item_hashes = [item.hash for item in embedding_items]
    cached = [embedding_cache.get(h) for h in item_hashes]
    if all(c is not None for c in cached):
        return torch.cat(cached)
    embedding = data_embedding_func(embedding_items)
    if isinstance(embedding, list):
        per_item = embedding
    else:
        item_lens = [item.num_tokens for item in embedding_items]
        per_item = [e.clone() for e in torch.split(embedding, item_lens)]
    for item_hash, item_embedding in zip(item_hashes, per_item):
        embedding_cache.put(item_hash, item_embedding)
    return torch.cat(per_item, dim=0)


def vision_tower(items: List[MultimodalDataItem]) -> List[torch.Tensor]:
    proj = torch.arange(16, dtype=torch.float32).reshape(4, 4) / 16
    return [item.feature @ proj for item in items]


if __name__ == "__main__":
    torch.manual_seed(0)
    items = [MultimodalDataItem(hash=i, num_tokens=64, feature=torch.randn(64, 4)) for i in range(8)]

    cache = MultiModalCache(max_size=1 << 30)
    out = get_embedding_and_mask(vision_tower, items, cache)
    entry = cache.get(3)
    assert entry.untyped_storage().nbytes() > entry.numel() * entry.element_size()
    assert entry.untyped_storage().nbytes() == out.numel() * out.element_size()

    cache_fixed = MultiModalCache(max_size=1 << 30)
    out_fixed = get_embedding_and_mask_fixed(vision_tower, items, cache_fixed)
    entry_fixed = cache_fixed.get(3)
    assert entry_fixed.untyped_storage().nbytes() == entry_fixed.numel() * entry_fixed.element_size()
    assert torch.equal(out, out_fixed) and torch.equal(entry, entry_fixed)
    print("ok")
