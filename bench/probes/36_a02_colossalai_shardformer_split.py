# source: hpcaitech/ColossalAI https://github.com/hpcaitech/ColossalAI/pull/5122 — "fixed memory usage of shardformer module replacement": the d_tensor comm_spec `_split` returned `torch.narrow(tensor, dim, start, length).contiguous()` and shardformer's `_split` returned `torch.split(...)[rank].contiguous()`; for row shards both are already contiguous views, so `Linear1D_Col` (via shard_rowwise -> distribute_tensor -> sharded_tensor_to_existing_param: `param.data = dtensor`) kept the whole unsharded HF weight alive on every TP rank. The fix adds `.clone()` before `.contiguous()` in both helpers.
from types import SimpleNamespace

import torch
import torch.nn as nn


def _split(tensor, comm_spec):  # colossalai/tensor/d_tensor/comm_spec.py
    dim = comm_spec.shard_dim
    length = tensor.shape[comm_spec.shard_dim] // comm_spec.world_size
    start = length * comm_spec.rank
    output = torch.narrow(tensor, dim, start, length).contiguous()  # want: A
    return output


def _split_activation(input_, dim, world_size, rank):  # colossalai/shardformer/layer/_operation.py
    dim_size = input_.size(dim)
    tensor_list = torch.split(input_, dim_size // world_size, dim=dim)
    output = tensor_list[rank].contiguous()  # want: A
    return output


def _split_fixed(tensor, comm_spec):
    dim = comm_spec.shard_dim
    length = tensor.shape[comm_spec.shard_dim] // comm_spec.world_size
    start = length * comm_spec.rank
    return torch.narrow(tensor, dim, start, length).clone().contiguous()


def _split_activation_fixed(input_, dim, world_size, rank):
    tensor_list = torch.split(input_, input_.size(dim) // world_size, dim=dim)
    return tensor_list[rank].clone().contiguous()


def distribute_tensor(tensor, comm_spec, split_fn):
    sharded = split_fn(tensor, comm_spec)
    sharded.dist_layout = comm_spec
    return sharded


def sharded_tensor_to_existing_param(dtensor, param):
    param.data = dtensor
    param.dist_layout = dtensor.dist_layout


class Linear1D_Col(nn.Module):
    def __init__(self, in_features, out_features, weight, process_group, split_fn):
        super().__init__()
        self.process_group = process_group
        self.weight = weight
        spec = SimpleNamespace(shard_dim=0, world_size=process_group.size, rank=process_group.rank)
        sharded_weight = distribute_tensor(self.weight.data, spec, split_fn)   # shard_rowwise
        sharded_tensor_to_existing_param(sharded_weight, self.weight)

    @staticmethod
    def from_native_module(module, process_group, split_fn):
        return Linear1D_Col(module.in_features, module.out_features, module.weight, process_group, split_fn)

    def forward(self, x):
        return x @ self.weight.t()


if __name__ == "__main__":
    pg = SimpleNamespace(size=8, rank=3)
    torch.manual_seed(0)
    buggy = Linear1D_Col.from_native_module(nn.Linear(512, 2048, bias=False), pg, _split)
    torch.manual_seed(0)
    fixed = Linear1D_Col.from_native_module(nn.Linear(512, 2048, bias=False), pg, _split_fixed)
    assert torch.equal(buggy.weight, fixed.weight)
    shard = fixed.weight.numel() * fixed.weight.element_size()
    print("buggy param storage:", buggy.weight.untyped_storage().nbytes(), "shard:", shard)
    assert buggy.weight.untyped_storage().nbytes() == 8 * shard
    assert fixed.weight.untyped_storage().nbytes() == shard

    hidden = torch.randn(1, 64, 1024)  # batch 1, sequence-parallel split on the seq dim
    a = _split_activation(hidden, 1, 8, 3)
    b = _split_activation_fixed(hidden, 1, 8, 3)
    print("activation split storage buggy/fixed:", a.untyped_storage().nbytes(), b.untyped_storage().nbytes())
    assert a.untyped_storage().nbytes() == 8 * b.untyped_storage().nbytes()
