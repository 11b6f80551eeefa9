# source: dmlc/dgl https://github.com/dmlc/dgl/pull/6863 — GraphBolt's `unique_and_compact_csc_formats` (and `compact_csc_format`) asserted `csc_format.indptr[-1] == len(csc_format.indices)` for every edge type on every sampled minibatch, and `MiniBatch.blocks` built `torch.arange(0, indptr[-1])`; with CUDA tensors both read a device scalar back to the host and stalled the sampling pipeline (issue #6862 shows the gaps in the profile). The fix moved the check into the `CSCFormatBase` constructor, skipped it for CUDA tensors, and used `len(indices)` for the arange bound.
from collections import defaultdict
from dataclasses import dataclass

import torch

def etype_str_to_tuple(c_etype):
    return tuple(c_etype.split(":"))

@dataclass
class CSCFormatBase:
    indptr: torch.Tensor = None
    indices: torch.Tensor = None

def unique_and_compact_csc_formats(csc_formats, unique_dst_nodes):
    is_homogeneous = not isinstance(csc_formats, dict)
    if is_homogeneous:
        csc_formats = {"_N:_E:_N": csc_formats}
        unique_dst_nodes = {"_N": unique_dst_nodes}

    indices = defaultdict(list)
    device = None
    for etype, csc_format in csc_formats.items():
        if device is None:
            device = csc_format.indices.device
        assert csc_format.indptr[-1] == len(  # want: D
            csc_format.indices
        ), "The last element of indptr should be the same as the length of indices."
        src_type, _, dst_type = etype_str_to_tuple(etype)
        assert len(unique_dst_nodes.get(dst_type, [])) + 1 == len(
            csc_format.indptr
        ), "The seed nodes should correspond to indptr."
        indices[src_type].append(csc_format.indices)
    indices = {ntype: torch.cat(nodes) for ntype, nodes in indices.items()}

    unique_nodes, compacted_indices = {}, {}
    for ntype, indice in indices.items():
        unique_dst = unique_dst_nodes.get(ntype, indice.new_empty(0))
        uniq, inverse = torch.unique(torch.cat([unique_dst, indice]), return_inverse=True)
        unique_nodes[ntype] = uniq
        compacted_indices[ntype] = inverse[unique_dst.numel():]

    compacted_csc_formats = {}
    for etype, csc_format in csc_formats.items():
        num_elem = csc_format.indices.size(0)
        src_type, _, _ = etype_str_to_tuple(etype)
        indice = compacted_indices[src_type][:num_elem]
        compacted_csc_formats[etype] = CSCFormatBase(indptr=csc_format.indptr, indices=indice)
        compacted_indices[src_type] = compacted_indices[src_type][num_elem:]

    if is_homogeneous:
        compacted_csc_formats = list(compacted_csc_formats.values())[0]
        unique_nodes = list(unique_nodes.values())[0]
    return unique_nodes, compacted_csc_formats

def blocks_sampled_csc(sampled_csc):
    return {
        etype_str_to_tuple(etype): (
            "csc",
            (v.indptr, v.indices,
             torch.arange(0, v.indptr[-1], device=v.indptr.device, dtype=v.indptr.dtype)),  # want: D
        )
        for etype, v in sampled_csc.items()
    }

@dataclass
class CSCFormatBaseFixed:
    indptr: torch.Tensor = None
    indices: torch.Tensor = None

    def __init__(self, indptr: torch.Tensor, indices: torch.Tensor):
        self.indptr = indptr
        self.indices = indices
        if not indptr.is_cuda:
            assert self.indptr[-1] == len(
                self.indices
            ), "The last element of indptr should be the same as the length of indices."

def unique_and_compact_csc_formats_fixed(csc_formats, unique_dst_nodes):
    indices = defaultdict(list)
    for etype, csc_format in csc_formats.items():
        src_type, _, dst_type = etype_str_to_tuple(etype)
        assert len(unique_dst_nodes.get(dst_type, [])) + 1 == len(
            csc_format.indptr
        ), "The seed nodes should correspond to indptr."
        indices[src_type].append(csc_format.indices)
    indices = {ntype: torch.cat(nodes) for ntype, nodes in indices.items()}
    unique_nodes = {}
    for ntype, indice in indices.items():
        unique_dst = unique_dst_nodes.get(ntype, indice.new_empty(0))
        unique_nodes[ntype] = torch.unique(torch.cat([unique_dst, indice]))
    return unique_nodes

def blocks_sampled_csc_fixed(sampled_csc):
    return {
        etype_str_to_tuple(etype): (
            "csc",
            (v.indptr, v.indices,
             torch.arange(0, len(v.indices), device=v.indptr.device, dtype=v.indptr.dtype)),
        )
        for etype, v in sampled_csc.items()
    }

if __name__ == "__main__":
    indptr = torch.tensor([0, 2, 4, 6, 7, 10])
    idx = torch.tensor([2, 3, 1, 4, 5, 2, 5, 1, 4, 4])
    seeds = torch.tensor([1, 3, 5, 2, 6])
    csc = {"n:e:n": CSCFormatBase(indptr=indptr, indices=idx)}
    uniq, _ = unique_and_compact_csc_formats(csc, {"n": seeds})
    csc_fixed = {"n:e:n": CSCFormatBaseFixed(indptr=indptr, indices=idx)}
    uniq_fixed = unique_and_compact_csc_formats_fixed(csc_fixed, {"n": seeds})
    assert torch.equal(uniq["n"], uniq_fixed["n"])
    a = blocks_sampled_csc(csc)[("n", "e", "n")][1][2]
    b = blocks_sampled_csc_fixed(csc_fixed)[("n", "e", "n")][1][2]
    assert torch.equal(a, b)
    print("ok")
