# source: NVIDIA/TensorRT-LLM https://github.com/NVIDIA/TensorRT-LLM/pull/15734 — the new multimodal encoder cache stored the per-item embeddings produced by torch.split of a request-level encoder output, so each cached item retained the entire batch allocation while the byte budget only charged its logical size; review flagged it and the merged code clones each item before inserting it.
from collections import OrderedDict

import torch


class MultimodalEncoderCache:
    def __init__(self, max_bytes):
        self._entries = OrderedDict()
        self._max_bytes = max_bytes
        self._cur_bytes = 0

    def get(self, key):
        emb = self._entries.get(key)
        if emb is not None:
            self._entries.move_to_end(key)
        return emb

    def put(self, key, emb):
        nbytes = emb.numel() * emb.element_size()
        if nbytes > self._max_bytes or key in self._entries:
            return False
        while self._cur_bytes + nbytes > self._max_bytes:
            _, old = self._entries.popitem(last=False)
            self._cur_bytes -= old.numel() * old.element_size()
        self._entries[key] = emb
        self._cur_bytes += nbytes
        return True


class MultimodalModelMixin:
    def __init__(self, encoder, cache_bytes):
        self.encoder = encoder
        self._multimodal_encoder_cache = MultimodalEncoderCache(cache_bytes)

    def _store_items(self, hashes, per_item):
        for mm_hash, item in zip(hashes, per_item):
            self._multimodal_encoder_cache.put(mm_hash, item)  # want: A

    def get_multimodal_embeddings(self, items):
        # items: list of (mm_hash, pixel_tensor[num_patches, in_dim])
        cache = self._multimodal_encoder_cache
        results = {h: cache.get(h) for h, _ in items}
        misses = [(h, x) for h, x in items if results[h] is None]
        if misses:
            lengths = [x.shape[0] for _, x in misses]
            embeddings = self.encoder(torch.cat([x for _, x in misses], dim=0))
            per_item = torch.split(embeddings, lengths, dim=0)
            self._store_items([h for h, _ in misses], per_item)
            for (h, _), emb in zip(misses, per_item):
                results[h] = emb
        return torch.cat([results[h] for h, _ in items], dim=0)


class MultimodalModelMixinFixed(MultimodalModelMixin):
    def _store_items(self, hashes, per_item):
        for mm_hash, item in zip(hashes, per_item):
            # Per-item embeddings are views of the request-level encoder output; clone so a
            # cached item neither aliases caller output nor retains the whole batch allocation.
            self._multimodal_encoder_cache.put(mm_hash, item.clone())


def _retained_bytes(cache):
    storages = {}
    for t in cache._entries.values():
        storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    return sum(storages.values())


if __name__ == "__main__":
    torch.manual_seed(0)
    encoder = torch.nn.Linear(32, 256)
    with torch.no_grad():
        for cls in (MultimodalModelMixin, MultimodalModelMixinFixed):
            model = cls(encoder, cache_bytes=64 * 1024)
            for step in range(6):
                batch = [(f"img{step}-{i}", torch.randn(16, 32)) for i in range(8)]
                model.get_multimodal_embeddings(batch)
            cache = model._multimodal_encoder_cache
            print(cls.__name__, "accounted", cache._cur_bytes, "actually retained", _retained_bytes(cache))
        assert _retained_bytes(cache) == cache._cur_bytes
