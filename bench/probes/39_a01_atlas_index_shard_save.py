# source: facebookresearch/atlas https://github.com/facebookresearch/atlas/pull/23 — DistributedIndex.save_index wrote each shard with torch.save(self.embeddings[:, shard_start:shard_end]), a column slice of the whole [dim, n_passages] embedding matrix. torch.save serializes the slice's entire backing storage, so every shard file carried the full index (a 101 MB shard took 13 GB, the MS MARCO index 1.6 TB). The fix clones the shard before saving so each file only holds its own columns.
import math
import os
import pickle
import tempfile
from typing import Optional

import torch

EMBEDDINGS_DIM: int = 768


class dist_utils:
    @staticmethod
    def get_rank():
        return 0

    @staticmethod
    def get_world_size():
        return 1


class DistributedIndex(object):
    def __init__(self):
        self.embeddings = None
        self.doc_map = dict()
        self.is_in_gpu = False

    def init_embeddings(self, passages, dim: Optional[int] = EMBEDDINGS_DIM):
        self.doc_map = {i: doc for i, doc in enumerate(passages)}
        self.embeddings = torch.zeros(dim, (len(passages)), dtype=torch.float16)
        if self.is_in_gpu:
            self.embeddings = self.embeddings.cuda()

    def _get_saved_embedding_path(self, save_dir: str, shard: int) -> str:
        return os.path.join(save_dir, f"embeddings.{shard}.pt")

    def _get_saved_passages_path(self, save_dir: str, shard: int) -> str:
        return os.path.join(save_dir, f"passages.{shard}.pt")

    def save_index(self, path: str, total_saved_shards: int, overwrite_saved_passages: bool = False) -> None:
        assert self.embeddings is not None
        rank = dist_utils.get_rank()
        ws = dist_utils.get_world_size()
        assert total_saved_shards % ws == 0, f"N workers must be a multiple of shards to save"
        shards_per_worker = total_saved_shards // ws
        n_embeddings = self.embeddings.shape[1]
        embeddings_per_shard = math.ceil(n_embeddings / shards_per_worker)
        assert n_embeddings == len(self.doc_map), len(self.doc_map)
        for shard_ind, (shard_start) in enumerate(range(0, n_embeddings, embeddings_per_shard)):
            shard_end = min(shard_start + embeddings_per_shard, n_embeddings)
            shard_id = shard_ind + rank * shards_per_worker  # get global shard number
            passage_shard_path = self._get_saved_passages_path(path, shard_id)
            if not os.path.exists(passage_shard_path) or overwrite_saved_passages:
                passage_shard = [self.doc_map[i] for i in range(shard_start, shard_end)]
                with open(passage_shard_path, "wb") as fobj:
                    pickle.dump(passage_shard, fobj, protocol=pickle.HIGHEST_PROTOCOL)
            embeddings_shard = self.embeddings[:, shard_start:shard_end]  # want: A
            embedding_shard_path = self._get_saved_embedding_path(path, shard_id)
            torch.save(embeddings_shard, embedding_shard_path)  # want: A

    def load_index(self, path: str, total_saved_shards: int):
        rank = dist_utils.get_rank()
        ws = dist_utils.get_world_size()
        shards_per_worker = total_saved_shards // ws
        passages, embeddings = [], []
        for shard_id in range(rank * shards_per_worker, (rank + 1) * shards_per_worker):
            with open(self._get_saved_passages_path(path, shard_id), "rb") as fobj:
                passages.append(pickle.load(fobj))
            embeddings.append(torch.load(self._get_saved_embedding_path(path, shard_id), map_location="cpu"))
        self.doc_map = {}
        n_passages = 0
        for chunk in passages:
            for p in chunk:
                self.doc_map[n_passages] = p
                n_passages += 1
        self.embeddings = torch.concat(embeddings, dim=1)


class DistributedIndexFixed(DistributedIndex):
    def save_index(self, path: str, total_saved_shards: int, overwrite_saved_passages: bool = False) -> None:
        assert self.embeddings is not None
        rank = dist_utils.get_rank()
        ws = dist_utils.get_world_size()
        assert total_saved_shards % ws == 0, f"N workers must be a multiple of shards to save"
        shards_per_worker = total_saved_shards // ws
        n_embeddings = self.embeddings.shape[1]
        embeddings_per_shard = math.ceil(n_embeddings / shards_per_worker)
        assert n_embeddings == len(self.doc_map), len(self.doc_map)
        for shard_ind, (shard_start) in enumerate(range(0, n_embeddings, embeddings_per_shard)):
            shard_end = min(shard_start + embeddings_per_shard, n_embeddings)
            shard_id = shard_ind + rank * shards_per_worker  # get global shard number
            passage_shard_path = self._get_saved_passages_path(path, shard_id)
            if not os.path.exists(passage_shard_path) or overwrite_saved_passages:
                passage_shard = [self.doc_map[i] for i in range(shard_start, shard_end)]
                with open(passage_shard_path, "wb") as fobj:
                    pickle.dump(passage_shard, fobj, protocol=pickle.HIGHEST_PROTOCOL)
            embeddings_shard = self.embeddings[:, shard_start:shard_end].clone()
            embedding_shard_path = self._get_saved_embedding_path(path, shard_id)
            torch.save(embeddings_shard, embedding_shard_path)

if __name__ == "__main__":
    torch.manual_seed(0)
    passages = [{"id": i, "text": f"passage {i}"} for i in range(400)]
    sizes = {}
    for cls in (DistributedIndex, DistributedIndexFixed):
        index = cls()
        index.init_embeddings(passages, dim=64)
        index.embeddings.copy_(torch.randn(64, 400).half())
        reference = index.embeddings.clone()
        with tempfile.TemporaryDirectory() as d:
            index.save_index(d, total_saved_shards=4)
            sizes[cls.__name__] = os.path.getsize(index._get_saved_embedding_path(d, 0))
            reloaded = cls()
            reloaded.load_index(d, total_saved_shards=4)
            assert torch.equal(reloaded.embeddings, reference)
    shard_bytes = 64 * 100 * 2
    assert sizes["DistributedIndex"] > 3 * shard_bytes, sizes
    assert sizes["DistributedIndexFixed"] < 2 * shard_bytes, sizes
    print("ok", sizes)
