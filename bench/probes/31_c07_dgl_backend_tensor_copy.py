# source: dmlc/dgl https://github.com/dmlc/dgl/pull/5028 — the PyTorch backend helper `F.tensor(data, dtype)` called `th.tensor(data, dtype=dtype, device=data.device)` when `data` was already a tensor, which always copy-constructs (and warns) even when dtype/device already match; the fix uses `th.as_tensor`, which returns the input unchanged when no conversion is needed.
import numbers
import warnings

import torch as th


def tensor(data, dtype=None):
    if isinstance(data, numbers.Number):
        data = [data]
    if isinstance(data, list) and len(data) > 0 and isinstance(data[0], th.Tensor):
        # prevent GPU->CPU->GPU copies
        if data[0].ndim == 0:
            # zero dimension scalar tensors
            return th.stack(data)
    if isinstance(data, th.Tensor):
        return th.tensor(data, dtype=dtype, device=data.device)  # want: C
    else:
        return th.tensor(data, dtype=dtype)


def tensor_fixed(data, dtype=None):
    if isinstance(data, numbers.Number):
        data = [data]
    if isinstance(data, list) and len(data) > 0 and isinstance(data[0], th.Tensor):
        # prevent GPU->CPU->GPU copies
        if data[0].ndim == 0:
            # zero dimension scalar tensors
            return th.stack(data)
    if isinstance(data, th.Tensor):
        return th.as_tensor(data, dtype=dtype, device=data.device)
    else:
        return th.as_tensor(data, dtype=dtype)


class HeteroGraphIndex:
    """Tiny stand-in for the C graph index: an edge list in COO form."""

    def __init__(self, src, dst, num_nodes):
        self.src, self.dst, self.num_nodes = src, dst, num_nodes


def find_edges(gidx, eids, to_tensor=tensor):
    # graph ops normalise user ids through the backend before indexing
    eids = to_tensor(eids, th.int64)
    return gidx.src[eids], gidx.dst[eids], eids


def in_degrees(gidx, v, to_tensor=tensor):
    v = to_tensor(v, th.int64)
    deg = th.zeros(gidx.num_nodes, dtype=th.int64).index_add_(0, gidx.dst, th.ones_like(gidx.dst))
    return deg[v]


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    n, m = 1000, 50000
    g = HeteroGraphIndex(th.randint(0, n, (m,)), th.randint(0, n, (m,)), n)
    eids = th.arange(0, m, 3, dtype=th.int64)
    _, _, e_bug = find_edges(g, eids, tensor)
    _, _, e_fix = find_edges(g, eids, tensor_fixed)
    print("buggy copies ids:", e_bug.data_ptr() != eids.data_ptr())
    print("fixed reuses ids:", e_fix.data_ptr() == eids.data_ptr())
    assert th.equal(in_degrees(g, th.arange(n), tensor), in_degrees(g, th.arange(n), tensor_fixed))
    assert th.equal(tensor(3), tensor_fixed(3))
