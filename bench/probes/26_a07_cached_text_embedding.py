# source: YalaLab/pillar-pretrain https://github.com/YalaLab/pillar-pretrain/issues/12 — _encode_texts stored per-sample rows embeddings_on_cpu[i] of the [batch, dim] output in a nested {study_id: {category: tensor}} dict that cache_texts_batch handed to _save_embedding, whose torch.save persisted the whole batch storage in every .pt; the fix (PR #13) cloned/compacted each tensor before torch.save.
import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


class ToyTokenizer:
    pad_token = "[PAD]"

    def __call__(self, texts, padding=True, truncation=True, max_length=512, return_tensors="pt"):
        n = min(max(len(t) for t in texts), max_length)
        ids = torch.zeros(len(texts), n, dtype=torch.long)
        mask = torch.zeros(len(texts), n, dtype=torch.long)
        for i, t in enumerate(texts):
            codes = [ord(c) % 500 for c in t][:n]
            ids[i, : len(codes)] = torch.tensor(codes)
            mask[i, : len(codes)] = 1
        return {"input_ids": ids, "attention_mask": mask}


class _Out:
    def __init__(self, last_hidden_state):
        self.last_hidden_state = last_hidden_state


class ToyModel(nn.Module):
    def __init__(self, dim=1024):
        super().__init__()
        self.emb = nn.Embedding(500, dim)

    def forward(self, input_ids, attention_mask):
        return _Out(self.emb(input_ids))


class CachedTextEmbedding:
    def __init__(self, model_name: str, cache_dir: str = "./embeddings_cache", batch_size: int = 32,
                 max_length: int = 512, device: str = "cpu", normalize_embeddings: bool = True,
                 categories: List[str] = ["all_findings"], **model_kwargs):
        self.model_name = model_name
        self.cache_dir = Path(cache_dir)
        self.batch_size = batch_size
        self.max_length = max_length
        self.normalize_embeddings = normalize_embeddings
        self.categories = categories
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self.device = device
        self.model = None
        self.tokenizer = None
        self.model_kwargs = model_kwargs
        self.embeddings_dir = self.cache_dir / "embeddings"
        self.embeddings_dir.mkdir(parents=True, exist_ok=True)
        self.metadata_file = self.cache_dir / "metadata.json"
        self.metadata = {"model_name": self.model_name, "text_to_path": {}, "embedding_dim": None}

    def _init_model(self):
        if self.model is None:
            self.tokenizer = ToyTokenizer()
            self.model = ToyModel()
            self.model.to(self.device)
            self.model.eval()

    def _save_metadata(self):
        with open(self.metadata_file, 'w') as f:
            json.dump(self.metadata, f, indent=2)

    def _get_cache_key(self, text: Dict[str, Any], key: str = "study_id") -> str:
        cache_text = str(text[key])
        return hashlib.sha256(cache_text.encode()).hexdigest()

    def _get_tensor_path(self, cache_key: str) -> Path:
        return self.embeddings_dir / f"{cache_key}.pt"

    def _save_embedding(self, cache_key: str, embedding: Dict[str, torch.Tensor], update_metadata: bool = True) -> Path:
        """Save an embedding tensor to cache and return its path."""
        tensor_path = self._get_tensor_path(cache_key)

        # Save tensor
        torch.save(embedding, tensor_path)  # want: A

        if update_metadata:
            relative_path = tensor_path.relative_to(self.cache_dir)
            self.metadata["text_to_path"][cache_key] = str(relative_path)
        return tensor_path

    def _encode_texts(self, texts: List[Dict[str, Any]]) -> Dict[int, Dict[str, torch.Tensor]]:
        self._init_model()
        captions_key = "category_findings"
        study_id_key = "study_id"
        all_finding_texts = []
        mapping_info = []
        for text_item in texts:
            study_id = text_item.get(study_id_key)
            findings = text_item.get(captions_key)
            if findings is not None:
                findings = {k: v for k, v in findings.items() if k in self.categories}
            else:
                findings = {}
            for category, finding_text in findings.items():
                if isinstance(finding_text, str):
                    all_finding_texts.append(finding_text)
                    mapping_info.append({'study_id': study_id, 'category': category})
        if not all_finding_texts:
            return {}
        inputs = self.tokenizer(all_finding_texts, padding=True, truncation=True,
                                max_length=self.max_length, return_tensors="pt")
        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        with torch.no_grad():
            outputs = self.model(**inputs)
            embeddings = outputs.last_hidden_state
            attention_mask = inputs['attention_mask'].unsqueeze(-1).expand(embeddings.size()).float()
            embeddings = torch.sum(embeddings * attention_mask, 1) / torch.clamp(attention_mask.sum(1), min=1e-9)
        if self.normalize_embeddings:
            embeddings = torch.nn.functional.normalize(embeddings, p=2, dim=1)

        embeddings_on_cpu = embeddings.cpu()

        # Reconstruct the nested dictionary
        output_dict = {}
        for i, info in enumerate(mapping_info):
            study_id = info['study_id']
            category = info['category']
            embedding = embeddings_on_cpu[i]
            if study_id not in output_dict:
                output_dict[study_id] = {}
            output_dict[study_id][category] = embedding
        return output_dict

    def cache_texts_batch(self, texts: Iterable[Dict[str, Any]], force_regenerate: bool = False,
                          update_metadata: bool = True) -> List[str]:
        paths = []
        texts_to_process = list(texts)
        indices_to_process = list(range(len(texts_to_process)))
        paths = [None] * len(texts_to_process)
        batches = [texts_to_process[i:i + self.batch_size] for i in range(0, len(texts_to_process), self.batch_size)]
        processed_count = 0
        for batch_texts in batches:
            embeddings_by_study_id = self._encode_texts(batch_texts)
            if not embeddings_by_study_id:
                processed_count += len(batch_texts)
                continue
            for j, text_item in enumerate(batch_texts):
                study_id = text_item.get("study_id")
                if study_id in embeddings_by_study_id:
                    embedding_dict = embeddings_by_study_id[study_id]
                    original_idx = indices_to_process[processed_count + j]
                    cache_key = self._get_cache_key(text_item)
                    tensor_path = self._save_embedding(cache_key, embedding_dict, update_metadata=update_metadata)
                    paths[original_idx] = str(tensor_path)
                else:
                    logger.warning(f"Embedding not generated for study_id: {study_id}")
            processed_count += len(batch_texts)
        if update_metadata and texts_to_process:
            self._save_metadata()
        return paths


class CompactCachedTextEmbedding(CachedTextEmbedding):
    """_save_embedding as changed by the fix."""

    def _save_embedding(self, cache_key, embedding, update_metadata=True):
        tensor_path = self._get_tensor_path(cache_key)

        def _compact(t):
            return t.detach().cpu().clone().contiguous() if torch.is_tensor(t) else t
        if isinstance(embedding, dict):
            embedding = {k: _compact(v) for k, v in embedding.items()}
        else:
            embedding = _compact(embedding)

        torch.save(embedding, tensor_path)
        if update_metadata:
            self.metadata["text_to_path"][cache_key] = str(tensor_path.relative_to(self.cache_dir))
        return tensor_path


if __name__ == "__main__":
    torch.manual_seed(0)
    texts = [{"study_id": i, "category_findings": {"all_findings": f"finding text number {i} " * 3,
                                                    "other": "ignored"}} for i in range(32)]
    for cls in (CachedTextEmbedding, CompactCachedTextEmbedding):
        with tempfile.TemporaryDirectory() as d:
            cte = cls("toy/model", cache_dir=d, batch_size=16)
            paths = cte.cache_texts_batch(texts)
            print(cls.__name__, sorted({os.path.getsize(p) for p in paths}))
