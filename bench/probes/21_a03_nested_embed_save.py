# source: YalaLab/pillar-pretrain https://github.com/YalaLab/pillar-pretrain/issues/12 (fix PR #13) — _encode_texts put row views embeddings_on_cpu[i] into the per-study dict it returned and _save_embedding torch.saved each dict, so every .pt held the whole [batch, dim] storage (16x-128x bloat); fix: clone before saving
import hashlib
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn


class CachedTextEmbedding:
    def __init__(self, encoder: nn.Module, tokenize, cache_dir: str, normalize: bool = True):
        self.encoder = encoder
        self.tokenize = tokenize
        self.normalize = normalize
        self.embeddings_dir = Path(cache_dir) / "embeddings"
        self.embeddings_dir.mkdir(parents=True, exist_ok=True)
        self.text_to_path = {}

    @torch.no_grad()
    def _encode_texts(self, items: list) -> dict:
        texts, where = [], []
        for item in items:
            for category, text in item["category_findings"].items():
                texts.append(text)
                where.append((item["study_id"], category))
        hidden = self.encoder(self.tokenize(texts))
        pooled = hidden.mean(dim=1)
        if self.normalize:
            pooled = F.normalize(pooled, p=2, dim=1)
        embeddings_on_cpu = pooled.cpu()
        by_study = {}
        for i, (study_id, category) in enumerate(where):
            by_study.setdefault(study_id, {})[category] = embeddings_on_cpu[i]  # maybe: A (a returned dict of row views: whether it outlives the batch is up to the caller)
        return by_study

    def _save_embedding(self, cache_key: str, per_category: dict) -> Path:
        path = self.embeddings_dir / f"{cache_key}.pt"
        torch.save(per_category, path)  # want: A
        self.text_to_path[cache_key] = str(path)
        return path

    def _save_compact(self, cache_key: str, per_category: dict) -> Path:
        path = self.embeddings_dir / f"{cache_key}.pt"
        torch.save({k: v.clone() for k, v in per_category.items()}, path)
        return path

    def cache_texts_batch(self, items: list) -> list:
        paths = []
        for study_id, per_category in self._encode_texts(items).items():
            key = hashlib.sha256(str(study_id).encode()).hexdigest()
            paths.append(self._save_embedding(key, per_category))  # maybe: A (the call site hands the row-view dicts to the saving helper; reporting here or in the helper are both fair)
        return paths

    def embedding_norms(self, items: list) -> dict:
        out = {}
        for study_id, per_category in self._encode_texts(items).items():
            out[study_id] = {k: float(v.norm()) for k, v in per_category.items()}
        return out


def _toy_tokenize(texts, length=8):
    rows = [[(ord(ch) % 97) for ch in t[:length].ljust(length)] for t in texts]
    return torch.tensor(rows)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        cte = CachedTextEmbedding(nn.Embedding(97, 64), _toy_tokenize, tmp)
        items = [{"study_id": i, "category_findings": {"all_findings": f"finding {i}"}} for i in range(16)]
        paths = cte.cache_texts_batch(items)
        loaded = torch.load(paths[3])["all_findings"]
        assert loaded.untyped_storage().nbytes() == 16 * 64 * 4  # the whole batch, not one row
        compact = torch.load(cte._save_compact("x", cte._encode_texts(items[:4])[0]))["all_findings"]
        assert compact.untyped_storage().nbytes() == 64 * 4
        assert len(cte.embedding_norms(items[:2])) == 2
    print("ok")
