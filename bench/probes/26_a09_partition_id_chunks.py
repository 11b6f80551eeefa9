# source: alibaba/graphlearn-for-pytorch https://github.com/alibaba/graphlearn-for-pytorch/pull/44 — the partitioner split each partition's id tensor with torch.chunk and put each chunk view into a FeaturePartitionData NamedTuple whose .ids was pickle.dump'ed (appended) to ids.pkl, so every chunk record serialized the entire id tensor; the fix used ids=chunk.clone().
import os
import pickle
import tempfile
from abc import ABC
from typing import List, NamedTuple, Optional, Union

import torch


class FeaturePartitionData(NamedTuple):
    r""" Data and indexing info of a node/edge feature partition."""
    # node/edge feature tensor
    feats: Optional[torch.Tensor]
    # node/edge ids tensor corresponding to `feats`
    ids: Optional[torch.Tensor]
    # feature cache tensor
    cache_feats: Optional[torch.Tensor]
    # cached node/edge ids tensor corresponding to `cache_feats`
    cache_ids: Optional[torch.Tensor]


class GraphPartitionData(NamedTuple):
    edge_index: tuple
    eids: torch.Tensor


def ensure_dir(d):
    os.makedirs(d, exist_ok=True)


# Append a tensor to a file using pickle
def append_tensor_to_file(filename, tensor):
    try:
        with open(filename, 'ab') as f:
            pickle.dump(tensor, f)
    except Exception as e:
        print('Error:', e)


def load_and_concatenate_tensors(filename):
    with open(filename, 'rb') as f:
        tensor_list = []
        while True:
            try:
                tensor_list.append(pickle.load(f))
            except EOFError:
                break
    return torch.cat(tensor_list)


def save_feature_partition_chunk(output_dir: str, partition_idx: int, feature_partition: FeaturePartitionData,
                                 group: str = 'node_feat', graph_type=None):
    r""" Append a chunk of a feature partition to files in the output directory."""
    subdir = os.path.join(output_dir, f'part{partition_idx}', group)
    if graph_type is not None:
        subdir = os.path.join(subdir, str(graph_type))
    ensure_dir(subdir)
    append_tensor_to_file(os.path.join(subdir, 'feats.pkl'), feature_partition.feats)
    append_tensor_to_file(os.path.join(subdir, 'ids.pkl'), feature_partition.ids)


def save_feature_partition_cache(output_dir: str, partition_idx: int, feature_partition: FeaturePartitionData,
                                 group: str = 'node_feat', graph_type=None):
    subdir = os.path.join(output_dir, f'part{partition_idx}', group)
    ensure_dir(subdir)
    if feature_partition.cache_feats is not None:
        torch.save(feature_partition.cache_feats, os.path.join(subdir, 'cache_feats.pt'))
        torch.save(feature_partition.cache_ids, os.path.join(subdir, 'cache_ids.pt'))


class PartitionerBase(ABC):
    def __init__(self, output_dir: str, num_parts: int, node_feat: torch.Tensor, edge_feat: torch.Tensor,
                 chunk_size: int = 64):
        self.output_dir = output_dir
        self.num_parts = num_parts
        self.node_feat = node_feat
        self.edge_feat = edge_feat
        self.chunk_size = chunk_size

    def get_node_feat(self, ntype=None):
        return self.node_feat

    def get_edge_feat(self, etype=None):
        return self.edge_feat

    def _cache_node(self, ntype=None):
        return [None] * self.num_parts

    def _partition_node(self):
        assign = torch.randint(0, self.num_parts, (self.node_feat.size(0),))
        return [torch.nonzero(assign == p).view(-1) for p in range(self.num_parts)]

    def _partition_and_save_node_feat(self, node_ids_list: List[torch.Tensor], ntype=None):
        node_feat = self.get_node_feat(ntype)
        if node_feat is None:
            return
        cache_node_ids_list = self._cache_node(ntype)
        for pidx in range(self.num_parts):
            # save partitioned node feature cache
            cache_n_ids = cache_node_ids_list[pidx]
            p_node_cache_feat = FeaturePartitionData(
                feats=None,
                ids=None,
                cache_feats=(node_feat[cache_n_ids] if cache_n_ids is not None else None),
                cache_ids=cache_n_ids
            )
            save_feature_partition_cache(self.output_dir, pidx, p_node_cache_feat,
                                         group='node_feat', graph_type=ntype)
            # save partitioned node feature chunk
            n_ids = node_ids_list[pidx]
            n_ids_chunks = torch.chunk(n_ids, chunks=((n_ids.shape[0] + self.chunk_size - 1) // self.chunk_size))
            for chunk in n_ids_chunks:
                p_node_feat_chunk = FeaturePartitionData(
                    feats=node_feat[chunk],
                    ids=chunk,  # want: A
                    cache_feats=None,
                    cache_ids=None
                )
                save_feature_partition_chunk(self.output_dir, pidx, p_node_feat_chunk,
                                             group='node_feat', graph_type=ntype)

    def _partition_and_save_edge_feat(self, graph_list: List[GraphPartitionData], etype=None):
        edge_feat = self.get_edge_feat(etype)
        if edge_feat is None:
            return
        for pidx in range(self.num_parts):
            eids = graph_list[pidx].eids
            eids_chunks = torch.chunk(eids, chunks=((eids.shape[0] + self.chunk_size - 1) // self.chunk_size))
            for chunk in eids_chunks:
                p_edge_feat_chunk = FeaturePartitionData(
                    feats=edge_feat[chunk],
                    ids=chunk,  # want: A
                    cache_feats=None,
                    cache_ids=None
                )
                save_feature_partition_chunk(self.output_dir, pidx, p_edge_feat_chunk,
                                             group='edge_feat', graph_type=etype)

    def partition(self):
        node_ids_list = self._partition_node()
        self._partition_and_save_node_feat(node_ids_list)
        n_edges = self.edge_feat.size(0)
        graph_list = [GraphPartitionData(edge_index=(None, None),
                                         eids=torch.arange(p, n_edges, self.num_parts)) for p in range(self.num_parts)]
        self._partition_and_save_edge_feat(graph_list)


class FixedPartitioner(PartitionerBase):
    def _partition_and_save_node_feat(self, node_ids_list, ntype=None):
        node_feat = self.get_node_feat(ntype)
        for pidx in range(self.num_parts):
            n_ids = node_ids_list[pidx]
            n_ids_chunks = torch.chunk(n_ids, chunks=((n_ids.shape[0] + self.chunk_size - 1) // self.chunk_size))
            for chunk in n_ids_chunks:
                p_node_feat_chunk = FeaturePartitionData(
                    feats=node_feat[chunk],
                    ids=chunk.clone(),
                    cache_feats=None,
                    cache_ids=None
                )
                save_feature_partition_chunk(self.output_dir, pidx, p_node_feat_chunk, group='node_feat')


if __name__ == "__main__":
    torch.manual_seed(0)
    node_feat = torch.randn(20000, 4)
    edge_feat = torch.randn(40000, 2)
    for cls in (PartitionerBase, FixedPartitioner):
        with tempfile.TemporaryDirectory() as d:
            p = cls(d, num_parts=2, node_feat=node_feat, edge_feat=edge_feat, chunk_size=1024)
            torch.manual_seed(1)
            p.partition()
            ids_file = os.path.join(d, 'part0', 'node_feat', 'ids.pkl')
            print(cls.__name__, "node ids.pkl bytes:", os.path.getsize(ids_file),
                  "ids:", load_and_concatenate_tensors(ids_file).numel())
