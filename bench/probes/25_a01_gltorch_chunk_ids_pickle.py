# source: alibaba/graphlearn-for-pytorch https://github.com/alibaba/graphlearn-for-pytorch/pull/44 (fixes #42) — PartitionerBase._partition_and_save_node_feat/_edge_feat built FeaturePartitionData(ids=chunk) from torch.chunk views of the per-partition id tensor, and save_feature_partition_chunk pickle.dump'ed each one, so every appended ids record carried the whole id tensor; fix: ids=chunk.clone()
import io
import os
import pickle
import tempfile
from typing import NamedTuple, Optional

import torch


class FeaturePartitionData(NamedTuple):
    feats: Optional[torch.Tensor]
    ids: Optional[torch.Tensor]
    cache_feats: Optional[torch.Tensor]
    cache_ids: Optional[torch.Tensor]


def append_tensor_to_file(filename, tensor):
    with open(filename, "ab") as f:
        pickle.dump(tensor, f)


def load_and_concatenate_tensors(filename):
    parts = []
    with open(filename, "rb") as f:
        while True:
            try:
                parts.append(pickle.load(f))
            except EOFError:
                break
    return torch.cat(parts)


def save_feature_partition_chunk(output_dir, partition_idx, feature_partition, group="node_feat"):
    subdir = os.path.join(output_dir, f"part{partition_idx}", group)
    os.makedirs(subdir, exist_ok=True)
    append_tensor_to_file(os.path.join(subdir, "feats.pkl"), feature_partition.feats)
    append_tensor_to_file(os.path.join(subdir, "ids.pkl"), feature_partition.ids)


class RandomPartitioner:
    def __init__(self, output_dir, node_feat, edge_feat, num_parts=2, chunk_size=8):
        self.output_dir = output_dir
        self.node_feat = node_feat
        self.edge_feat = edge_feat
        self.num_parts = num_parts
        self.chunk_size = chunk_size

    def _num_chunks(self, n):
        return (n + self.chunk_size - 1) // self.chunk_size

    def _partition_and_save_node_feat(self, node_ids_list):
        for pidx in range(self.num_parts):
            n_ids = node_ids_list[pidx]
            for chunk in torch.chunk(n_ids, chunks=self._num_chunks(n_ids.shape[0])):
                p_node_feat_chunk = FeaturePartitionData(
                    feats=self.node_feat[chunk],  # advanced indexing: a fresh tensor
                    ids=chunk,  # want: A
                    cache_feats=None,
                    cache_ids=None,
                )
                save_feature_partition_chunk(self.output_dir, pidx, p_node_feat_chunk, group="node_feat")

    def _partition_and_save_edge_feat(self, eids_list):
        for pidx in range(self.num_parts):
            eids = eids_list[pidx]
            eids_chunks = torch.chunk(eids, chunks=self._num_chunks(eids.shape[0]))
            for chunk in eids_chunks:
                p_edge_feat_chunk = FeaturePartitionData(
                    feats=self.edge_feat[chunk],
                    ids=chunk,  # want: A
                    cache_feats=None,
                    cache_ids=None,
                )
                save_feature_partition_chunk(self.output_dir, pidx, p_edge_feat_chunk, group="edge_feat")


class RandomPartitionerFixed(RandomPartitioner):
    def _partition_and_save_node_feat(self, node_ids_list):
        for pidx in range(self.num_parts):
            n_ids = node_ids_list[pidx]
            for chunk in torch.chunk(n_ids, chunks=self._num_chunks(n_ids.shape[0])):
                p_node_feat_chunk = FeaturePartitionData(
                    feats=self.node_feat[chunk], ids=chunk.clone(), cache_feats=None, cache_ids=None
                )
                save_feature_partition_chunk(self.output_dir, pidx, p_node_feat_chunk, group="node_feat")

    def save_partition_book(self, node_ids_list):
        # every chunk of a partition goes into one file together: the shared storage is written once
        buf = io.BytesIO()
        torch.save(list(torch.chunk(node_ids_list[0], 4)), buf)
        return buf.getbuffer().nbytes


if __name__ == "__main__":
    num_nodes = 8192
    node_feat = torch.randn(num_nodes, 4)
    perm = torch.randperm(num_nodes)
    node_ids_list = [perm[: num_nodes // 2].clone(), perm[num_nodes // 2 :].clone()]
    with tempfile.TemporaryDirectory() as d_bug, tempfile.TemporaryDirectory() as d_fix:
        RandomPartitioner(d_bug, node_feat, None, chunk_size=64)._partition_and_save_node_feat(node_ids_list)
        RandomPartitionerFixed(d_fix, node_feat, None, chunk_size=64)._partition_and_save_node_feat(node_ids_list)
        f_bug = os.path.join(d_bug, "part0", "node_feat", "ids.pkl")
        f_fix = os.path.join(d_fix, "part0", "node_feat", "ids.pkl")
        assert torch.equal(load_and_concatenate_tensors(f_bug), load_and_concatenate_tensors(f_fix))
        # 64 chunks of 64 ids, each pickled with the whole 4096-id storage
        assert os.path.getsize(f_bug) > 10 * os.path.getsize(f_fix)
        chunk = torch.chunk(node_ids_list[0], 64)[3]
        assert chunk.untyped_storage().nbytes() > chunk.numel() * chunk.element_size()
    print("ok: each pickled id chunk carried the whole partition id tensor")
