# source: linkedin/DuaLip https://github.com/linkedin/DuaLip/pull/66 — per-rank input args were dataclasses holding column slices of the full A / c tensors; dist.scatter_object_list pickles them, so each rank was sent the whole storage (22.8 GiB per rank); fix: clone the slices
import pickle
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class ShardInputs:
    A: torch.Tensor
    c: torch.Tensor
    col_range: tuple


def _bounds(n_cols: int, world_size: int):
    step = (n_cols + world_size - 1) // world_size
    return [(lo, min(lo + step, n_cols)) for lo in range(0, n_cols, step)]


def split_by_columns(A: torch.Tensor, c: torch.Tensor, world_size: int) -> list:
    shards = []
    for lo, hi in _bounds(A.shape[1], world_size):
        shards.append(ShardInputs(A=A[:, lo:hi], c=c[lo:hi], col_range=(lo, hi)))
    return shards


def split_by_columns_owned(A: torch.Tensor, c: torch.Tensor, world_size: int) -> list:
    return [
        ShardInputs(A=A[:, lo:hi].clone(), c=c[lo:hi].clone(), col_range=(lo, hi))
        for lo, hi in _bounds(A.shape[1], world_size)
    ]


def column_norms(A: torch.Tensor, world_size: int) -> torch.Tensor:
    out = []
    for lo, hi in _bounds(A.shape[1], world_size):
        block = A[:, lo:hi]
        out.append(block.norm(dim=0))
    return torch.cat(out)


def scatter_inputs(A: torch.Tensor, c: torch.Tensor) -> ShardInputs:
    rank, world = dist.get_rank(), dist.get_world_size()
    shards = split_by_columns(A, c, world) if rank == 0 else [None] * world
    received = [None]
    dist.scatter_object_list(received, shards, src=0)  # want: A
    return received[0]


if __name__ == "__main__":
    A = torch.randn(64, 400)
    c = torch.randn(400)
    views = split_by_columns(A, c, 4)
    owned = split_by_columns_owned(A, c, 4)
    assert len(pickle.dumps(views[0])) > 3 * len(pickle.dumps(owned[0]))  # maybe: A (demo: pickles the views on purpose, to measure them)
    assert views[0].A.untyped_storage().nbytes() == A.untyped_storage().nbytes()
    assert column_norms(A, 4).shape == (400,)
    print("ok")
