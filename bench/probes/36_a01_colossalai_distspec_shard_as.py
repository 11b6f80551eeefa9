# source: hpcaitech/ColossalAI https://github.com/hpcaitech/ColossalAI/pull/1045 — DistSpecManager._shard_as narrowed the replicated tensor to this rank's shard and returned `chunk.detach().contiguous()`; a narrow along dim 0 is already contiguous, so the "shard" stayed a view and `ColoTensor.convert_to_dist_spec_` stored it in `self.data`, keeping the full replicated storage alive (the PR's test asserts memory_allocated == orig_mem // world_size). The fix returns `chunk.clone().detach().contiguous()`.
from dataclasses import dataclass, field
from math import prod

import torch


@dataclass
class _DistSpec:
    placement: str                      # 'r' (replicate) or 's' (shard)
    dims: list = field(default_factory=list)
    num_partitions: list = field(default_factory=list)
    rank: int = 0


def divide(a, b):
    assert a % b == 0
    return a // b


class DistSpecManager:
    @staticmethod
    def _shard_as(tensor, old_dist_spec, dist_spec):
        chunk = tensor
        idx = dist_spec.rank
        num_parts = prod(dist_spec.num_partitions)
        for i, dim in enumerate(dist_spec.dims):
            num_parts //= dist_spec.num_partitions[i]
            chunk_size = divide(tensor.size(dim), dist_spec.num_partitions[i])
            chunk = chunk.narrow(dim, idx // num_parts * chunk_size, chunk_size)
            idx %= num_parts
        return chunk.detach().contiguous()  # want: A

    @classmethod
    def _r2s(cls, tensor, old_dist_spec, dist_spec):
        return cls._shard_as(tensor, old_dist_spec, dist_spec)

    @classmethod
    def handle_trans_spec(cls, tensor, old_dist_spec, dist_spec):
        fn = getattr(cls, f"_{old_dist_spec.placement}2{dist_spec.placement}")
        return fn(tensor, old_dist_spec, dist_spec)


class DistSpecManagerFixed(DistSpecManager):
    @staticmethod
    def _shard_as(tensor, old_dist_spec, dist_spec):
        chunk = tensor
        idx = dist_spec.rank
        num_parts = prod(dist_spec.num_partitions)
        for i, dim in enumerate(dist_spec.dims):
            num_parts //= dist_spec.num_partitions[i]
            chunk_size = divide(tensor.size(dim), dist_spec.num_partitions[i])
            chunk = chunk.narrow(dim, idx // num_parts * chunk_size, chunk_size)
            idx %= num_parts
        return chunk.clone().detach().contiguous()


class ColoParameter(torch.nn.Parameter):
    """Stand-in for ColoTensor: convert_to_dist_spec_ rebinds .data in place."""

    def convert_to_dist_spec_(self, manager, old_spec, dist_spec):
        with torch.no_grad():
            self.data = manager.handle_trans_spec(self, old_spec, dist_spec)


def shard_weight(manager, world_size=4, rank=1):
    torch.manual_seed(0)
    w = ColoParameter(torch.randn(1024, 256), requires_grad=False)
    w.convert_to_dist_spec_(manager, _DistSpec("r"), _DistSpec("s", [0], [world_size], rank))
    return w


if __name__ == "__main__":
    buggy = shard_weight(DistSpecManager)
    fixed = shard_weight(DistSpecManagerFixed)
    assert torch.equal(buggy.data, fixed.data)
    shard_bytes = fixed.numel() * fixed.element_size()
    print("buggy storage bytes:", buggy.untyped_storage().nbytes(), "shard bytes:", shard_bytes)
    print("fixed storage bytes:", fixed.untyped_storage().nbytes())
    assert buggy.untyped_storage().nbytes() == 4 * shard_bytes   # whole replicated weight pinned
    assert fixed.untyped_storage().nbytes() == shard_bytes
