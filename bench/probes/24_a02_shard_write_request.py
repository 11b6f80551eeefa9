# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/79400 (relates to #79016) — _prepare_sharded_tensor_write built TensorWriteRequest(tensor=tensor, ...) from each local shard; with torchrec's fused embedding tables every shard is a view of one fused weight, so torch.save in the writer serialized the whole fused storage per shard; fix: tensor=tensor.detach().clone()
import io
from dataclasses import dataclass
from typing import Dict, List

import torch
from torch import nn


@dataclass
class TensorWriteRequest:
    tensor: torch.Tensor
    storage_key: str


@dataclass
class Shard:
    tensor: torch.Tensor
    offsets: tuple


class FusedEmbeddingTables(nn.Module):
    """torchrec-style: all tables of one rank live in a single fused weight; tables are row ranges of it."""

    def __init__(self, rows: Dict[str, int], dim: int):
        super().__init__()
        self.rows = rows
        self.weight = nn.Parameter(torch.randn(sum(rows.values()), dim))

    def local_shards(self) -> Dict[str, List[Shard]]:
        shards, off = {}, 0
        for name, n in self.rows.items():
            shards[name] = [Shard(self.weight.narrow(0, off, n), (off, 0))]
            off += n
        return shards


def _prepare_sharded_tensor_write(local_shards: List[Shard], storage_key_prefix: str) -> List[TensorWriteRequest]:
    write_requests = []
    for shard in local_shards:
        tensor = shard.tensor.detach()
        suffix = "_".join(str(i) for i in shard.offsets)
        wr = TensorWriteRequest(tensor=tensor, storage_key=f"{storage_key_prefix}${suffix}")  # want: A
        write_requests.append(wr)
    return write_requests


def _prepare_sharded_tensor_write_fixed(local_shards: List[Shard], storage_key_prefix: str) -> List[TensorWriteRequest]:
    return [
        TensorWriteRequest(tensor=s.tensor.detach().clone(), storage_key=f"{storage_key_prefix}${s.offsets[0]}_{s.offsets[1]}")
        for s in local_shards
    ]


class InMemoryWriter:
    def __init__(self):
        self.blobs: Dict[str, bytes] = {}

    def write(self, requests: List[TensorWriteRequest]) -> None:
        for req in requests:
            buf = io.BytesIO()
            torch.save(req.tensor, buf)
            self.blobs[req.storage_key] = buf.getvalue()


def save_state(module: FusedEmbeddingTables, writer: InMemoryWriter, prepare=_prepare_sharded_tensor_write):
    for name, shards in module.local_shards().items():
        writer.write(prepare(shards, f"tables.{name}"))


if __name__ == "__main__":
    tables = FusedEmbeddingTables({"user": 300, "item": 200, "ad": 500}, dim=8)
    w_bug, w_fix = InMemoryWriter(), InMemoryWriter()
    save_state(tables, w_bug)
    save_state(tables, w_fix, _prepare_sharded_tensor_write_fixed)
    fused_bytes = 1000 * 8 * 4
    for key in w_bug.blobs:
        assert len(w_bug.blobs[key]) > fused_bytes  # every shard file carries the whole fused table
    assert len(w_fix.blobs["tables.user$0_0"]) < fused_bytes // 2
    loaded = torch.load(io.BytesIO(w_bug.blobs["tables.ad$500_0"]), weights_only=True)
    assert loaded.shape == (500, 8) and loaded.untyped_storage().nbytes() == fused_bytes
    print("ok: each shard write request pinned and serialized the fused table")
