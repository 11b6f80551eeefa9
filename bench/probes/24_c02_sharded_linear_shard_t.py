# source: pytorch/pytorch PR #78598 ("Remove call to .contiguous() for local_shard_t") — the ShardedTensor handler for F.linear materialized `local_shard.t().contiguous()`, a full transposed copy of the rank's weight shard, on every forward call
from typing import Callable, Dict, List

import torch
import torch.nn.functional as F
from torch import nn

_SHARDED_OPS: Dict[Callable, Callable] = {}


def sharded_op_impl(func):
    def decorator_sharded_func(wrapped_func):
        _SHARDED_OPS[func] = wrapped_func
        return wrapped_func

    return decorator_sharded_func


class Shard:
    def __init__(self, tensor: torch.Tensor, offset: int):
        self.tensor = tensor
        self.offset = offset


class ShardedTensor:
    """Single-process stand-in: a weight split into row (dim 0) or column (dim 1) chunks, one per rank."""

    def __init__(self, full: torch.Tensor, dim: int, world_size: int, rank: int):
        self._full_size = full.size()
        self.dim = dim
        chunks = full.chunk(world_size, dim=dim)
        offset = sum(c.size(dim) for c in chunks[:rank])
        self._local_shards: List[Shard] = [Shard(nn.Parameter(chunks[rank].clone()), offset)]

    def local_shards(self) -> List[Shard]:
        return self._local_shards

    def size(self):
        return self._full_size

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _SHARDED_OPS:
            return _SHARDED_OPS[func](types, args, kwargs, None)
        raise RuntimeError(f"torch function '{func.__name__}' not supported for ShardedTensor")


@sharded_op_impl(F.linear)
def sharded_linear(types, args, kwargs, pg):
    input, weight = args[0], args[1]
    bias = args[2] if len(args) > 2 else kwargs.get("bias")
    if input.size()[-1] != weight.size()[1]:
        raise ValueError(f"Input dim: {input.size()[-1]} does not match appropriate weight dim: {weight.size()[1]}")
    if len(weight.local_shards()) != 1:
        raise ValueError("Only one local shard supported!")

    local_shard = weight.local_shards()[0].tensor
    local_shard_t = local_shard.t().contiguous()  # want: C
    if weight.dim == 0:
        return _handle_col_wise_sharding(input, weight, local_shard_t, bias)
    return _handle_row_wise_sharding(input, weight, local_shard_t, bias)


def _handle_col_wise_sharding(input, weight, local_shard_t, bias):
    # each rank owns a block of output features; the real code all-gathers the input first
    shard = weight.local_shards()[0]
    out = input.matmul(local_shard_t)
    n = out.size(-1)
    return out + bias[shard.offset:shard.offset + n]


def _handle_row_wise_sharding(input, weight, local_shard_t, bias):
    # each rank owns a block of input features: it needs the matching slice of the (all-to-all'd) input
    shard = weight.local_shards()[0]
    k = local_shard_t.size(0)
    inp = input.narrow(-1, shard.offset, k)
    partial = inp.matmul(local_shard_t)
    # the partial sums go through reduce_scatter, which wants contiguous buffers
    partial = partial.transpose(0, 1).contiguous()  # a fresh layout for the collective: not the weight
    return partial.transpose(0, 1) + bias  # single process: the reduction over ranks is the identity here


class ShardedLinear(nn.Module):
    def __init__(self, in_features, out_features, dim, world_size=1, rank=0):
        super().__init__()
        dense = nn.Linear(in_features, out_features)
        self.weight = ShardedTensor(dense.weight.detach(), dim, world_size, rank)
        self.bias = nn.Parameter(dense.bias.detach().clone())
        self.dense = dense

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


@sharded_op_impl(F.embedding)
def sharded_embedding(types, args, kwargs, pg):
    input, weight = args[0], args[1]
    return F.embedding(input, weight.local_shards()[0].tensor)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(3, 5, 8)
    for dim in (0, 1):
        layer = ShardedLinear(8, 6, dim=dim)
        with torch.no_grad():
            for _ in range(3):  # each forward re-materializes the transposed shard
                y = layer(x)
            ref = layer.dense(x)
        assert torch.allclose(y, ref, atol=1e-6), dim
    w = layer.weight.local_shards()[0].tensor
    assert not w.t().is_contiguous() and w.t().contiguous().data_ptr() != w.data_ptr()
    print("ok: matmul accepts the transposed view; .contiguous() copies the weight shard every call")
