# source: ai-dynamo/dynamo https://github.com/ai-dynamo/dynamo/pull/14452 — the vLLM encode worker cached each image's embedding as item.embeddings.contiguous(), but those are torch.split views of one encoder output and .contiguous() on an already-contiguous view returns the view itself, so every cache entry pinned the whole batch's storage while being charged only for its slice; the fix stores item.embeddings.clone(memory_format=torch.contiguous_format).
import hashlib
from collections import OrderedDict
from dataclasses import dataclass

import torch


@dataclass
class EmbeddingItem:
    # None when the item has no stable identity
    key: "str | None"
    image_grid_thw: list
    embeddings: torch.Tensor


@dataclass
class CachedEmbedding:
    tensor: torch.Tensor
    image_grid_thw: "list | None" = None


class MultimodalEmbeddingCacheManager:
    """Capacity-bounded LRU cache that sizes an entry by its own element count."""

    def __init__(self, capacity_bytes: int):
        self.capacity_bytes = capacity_bytes
        self._entries: "OrderedDict[str, CachedEmbedding]" = OrderedDict()
        self._used = 0

    @staticmethod
    def _entry_bytes(entry: CachedEmbedding) -> int:
        assert entry.tensor.is_contiguous(), "cache entries must be contiguous"
        return entry.tensor.numel() * entry.tensor.element_size()

    def get(self, key):
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def set(self, key, entry: CachedEmbedding) -> bool:
        size = self._entry_bytes(entry)
        if size > self.capacity_bytes:
            return False
        while self._used + size > self.capacity_bytes and self._entries:
            _, old = self._entries.popitem(last=False)
            self._used -= self._entry_bytes(old)
        self._entries[key] = entry
        self._used += size
        return True

    def accounted_bytes(self):
        return self._used

    def retained_storage_bytes(self):
        seen = {}
        for e in self._entries.values():
            st = e.tensor.untyped_storage()
            seen[st.data_ptr()] = st.nbytes()
        return sum(seen.values())


def get_embedding_hash(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


class EncodeWorkerHandler:
    def __init__(self, hidden=64, merge_size=2, capacity_gb=1.0):
        self.vision_encoder = torch.nn.Linear(16, hidden)
        self.vision_encoder.spatial_merge_size = merge_size
        self.embedding_cache_manager = MultimodalEmbeddingCacheManager(int(capacity_gb * 1024**3))
        self.send_complete_queue = []

    def _lookup_embedding_item(self, key):
        if self.embedding_cache_manager is None or key is None:
            return None
        cached = self.embedding_cache_manager.get(key)
        if cached is None:
            return None
        return EmbeddingItem(key, cached.image_grid_thw or [], cached.tensor)

    def _store_embedding_item(self, item: EmbeddingItem) -> None:
        """Cache one freshly encoded embedding. Unkeyed items are skipped."""
        if self.embedding_cache_manager is None or item.key is None:
            return
        # The manager asserts contiguity when sizing an entry. These tensors are
        # split views sharing one encoder output's storage, so sizing is per view.
        self.embedding_cache_manager.set(
            item.key,
            CachedEmbedding(
                tensor=item.embeddings.contiguous(),  # want: A
                image_grid_thw=item.image_grid_thw,
            ),
        )

    def _store_embedding_item_fixed(self, item: EmbeddingItem) -> None:
        """Post-fix version (look-alike, correct)."""
        if self.embedding_cache_manager is None or item.key is None:
            return
        self.embedding_cache_manager.set(
            item.key,
            CachedEmbedding(
                tensor=item.embeddings.clone(memory_format=torch.contiguous_format),
                image_grid_thw=item.image_grid_thw,
            ),
        )

    def encode_image_embeddings(self, pixel_patches):
        with torch.no_grad():
            return self.vision_encoder(pixel_patches).unsqueeze(0)  # [1, total_tokens, hidden]

    def generate(self, image_urls, image_grid_thw, fixed=False):
        need_encode_indexes = []
        embedding_lists = [None] * len(image_urls)
        for idx, url in enumerate(image_urls):
            embedding_key = get_embedding_hash(url)
            cached_item = self._lookup_embedding_item(embedding_key)
            if cached_item is not None:
                embedding_lists[idx] = cached_item
            else:
                need_encode_indexes.append((idx, embedding_key))

        if need_encode_indexes:
            grid = torch.tensor([image_grid_thw[i] for i, _ in need_encode_indexes])
            merge_size = self.vision_encoder.spatial_merge_size
            total = int(grid.prod(-1).sum())
            embeddings = self.encode_image_embeddings(torch.randn(total // (merge_size * merge_size), 16))
            # Split concatenated embeddings for each image item.
            sizes = (grid.prod(-1) // merge_size // merge_size).tolist()
            splitted_embeddings = embeddings.squeeze(0).split(sizes)

            for split_idx, (list_idx, key) in enumerate(need_encode_indexes):
                item = EmbeddingItem(
                    key,
                    [image_grid_thw[list_idx]],
                    splitted_embeddings[split_idx].unsqueeze(0),
                )
                embedding_lists[list_idx] = item
                if fixed:
                    self._store_embedding_item_fixed(item)
                else:
                    self._store_embedding_item(item)

        transfer_tensors = [item.embeddings for item in embedding_lists]
        for transfer_tensor in transfer_tensors:
            # Keep the transfer buffer alive until the transfer completes.
            self.send_complete_queue.append(("future", transfer_tensor))
        shapes = [tuple(t.shape) for t in transfer_tensors]
        self.send_complete_queue.clear()  # transfers complete
        return shapes


if __name__ == "__main__":
    torch.manual_seed(0)
    urls = [f"http://img/{i}.png" for i in range(8)]
    grids = [[1, 16, 16]] * 8

    worker = EncodeWorkerHandler()
    # one request caches 8 images; only the first is kept warm, the rest get evicted later by policy
    worker.generate(urls, grids)
    mgr = worker.embedding_cache_manager
    print("buggy: accounted", mgr.accounted_bytes(), "retained", mgr.retained_storage_bytes())
    assert mgr.retained_storage_bytes() == mgr.accounted_bytes()  # 8 views of one batch: equal overall
    # evict all but one entry -> the survivor still pins the whole batch
    for k in list(mgr._entries)[1:]:
        e = mgr._entries.pop(k)
        mgr._used -= mgr._entry_bytes(e)
    print("buggy after eviction: accounted", mgr.accounted_bytes(), "retained", mgr.retained_storage_bytes())
    assert mgr.retained_storage_bytes() == 8 * mgr.accounted_bytes()

    worker2 = EncodeWorkerHandler()
    worker2.generate(urls, grids, fixed=True)
    m2 = worker2.embedding_cache_manager
    assert m2.retained_storage_bytes() == m2.accounted_bytes()
    print("fixed: accounted", m2.accounted_bytes(), "retained", m2.retained_storage_bytes())
