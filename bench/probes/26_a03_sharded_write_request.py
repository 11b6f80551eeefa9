# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/79400 — _prepare_sharded_tensor_write put `shard.tensor.detach()` (a view into a fused torchrec parameter) straight into the TensorWriteRequest dataclass that the storage writer later torch.save's, so each shard file contained the whole fused storage; the fix wrapped it as tensor.detach().clone() (later _trim()).
import hashlib
import os
import tempfile
from dataclasses import dataclass
from typing import Dict, List, Tuple

import torch


@dataclass
class ShardMetadata:
    shard_offsets: List[int]
    shard_sizes: List[int]


@dataclass
class Shard:
    tensor: torch.Tensor
    metadata: ShardMetadata


@dataclass
class TensorWriteRequest:
    tensor: torch.Tensor
    storage_key: str


@dataclass
class ShardStorageMetadata:
    shard_metadata: ShardMetadata
    storage_key: str


@dataclass
class ShardedTensorStorageMetadata:
    storage_metadata: List[ShardStorageMetadata]


class ShardedTensor:
    def __init__(self, local_shards: List[Shard], shards_metadata: List[ShardMetadata]):
        self._local_shards = local_shards
        self._shards_metadata = shards_metadata

    def local_shards(self) -> List[Shard]:
        return self._local_shards

    def shards_metadata(self) -> List[ShardMetadata]:
        return self._shards_metadata


STORAGE_KEY_SEPARATOR = "$"


def _create_storage_key(storage_key_to_fqn: Dict[str, str], fqn: str) -> str:
    storage_key = hashlib.sha256(bytes(fqn, "utf-8")).hexdigest()
    counter = 0
    while storage_key in storage_key_to_fqn:
        storage_key = hashlib.sha256(bytes(f"{fqn}{counter}", "utf-8")).hexdigest()
        counter += 1
    storage_key_to_fqn[storage_key] = fqn
    return storage_key


def _get_shard_key(shard: ShardMetadata) -> str:
    return "_".join(str(i) for i in shard.shard_offsets)


def _get_shard_storage_key(tensor_storage_key: str, shard: ShardMetadata,
                           storage_key_to_fqn: Dict[str, str]) -> str:
    shard_key = f"{tensor_storage_key}{STORAGE_KEY_SEPARATOR}{_get_shard_key(shard)}"
    return _create_storage_key(storage_key_to_fqn, shard_key)


def _compute_sharded_tensor_md(tensor: ShardedTensor, shard_to_storage_key: Dict[str, str]):
    smd = []
    for shard_md in tensor.shards_metadata():
        smd.append(ShardStorageMetadata(shard_metadata=shard_md,
                                        storage_key=shard_to_storage_key[_get_shard_key(shard_md)]))
    return ShardedTensorStorageMetadata(storage_metadata=smd)


def _prepare_sharded_tensor_write(
    sharded_tensor: ShardedTensor,
    storage_key: str,
    storage_key_to_fqn: Dict[str, str],
) -> Tuple[List[TensorWriteRequest], ShardedTensorStorageMetadata]:
    write_requests = []
    shard_to_storage_key: Dict[str, str] = dict()

    for shard_md in sharded_tensor.shards_metadata():
        shard_storage_key = _get_shard_storage_key(storage_key, shard_md, storage_key_to_fqn)
        shard_to_storage_key[_get_shard_key(shard_md)] = shard_storage_key

    for shard in sharded_tensor.local_shards():
        tensor = shard.tensor.detach()
        shard_storage_key = shard_to_storage_key[_get_shard_key(shard.metadata)]

        wr = TensorWriteRequest(
            tensor=tensor,  # want: A
            storage_key=shard_storage_key,
        )
        write_requests.append(wr)
    return write_requests, _compute_sharded_tensor_md(sharded_tensor, shard_to_storage_key)


def _prepare_sharded_tensor_write_fixed(sharded_tensor, storage_key, storage_key_to_fqn):
    write_requests = []
    shard_to_storage_key: Dict[str, str] = dict()
    for shard_md in sharded_tensor.shards_metadata():
        shard_storage_key = _get_shard_storage_key(storage_key, shard_md, storage_key_to_fqn)
        shard_to_storage_key[_get_shard_key(shard_md)] = shard_storage_key
    for shard in sharded_tensor.local_shards():
        tensor = shard.tensor.detach()
        shard_storage_key = shard_to_storage_key[_get_shard_key(shard.metadata)]
        wr = TensorWriteRequest(
            tensor=tensor.detach().clone(),
            storage_key=shard_storage_key,
        )
        write_requests.append(wr)
    return write_requests, _compute_sharded_tensor_md(sharded_tensor, shard_to_storage_key)


def _trim(tensor: torch.Tensor) -> torch.Tensor:
    tensor = tensor.detach()
    if tensor.untyped_storage().nbytes() != tensor.numel() * tensor.element_size():
        return tensor.clone()
    return tensor


def _prepare_sharded_tensor_write_trim(sharded_tensor, storage_key, storage_key_to_fqn):
    write_requests = []
    for shard in sharded_tensor.local_shards():
        tensor = shard.tensor.detach()
        wr = TensorWriteRequest(
            tensor=_trim(tensor),
            storage_key=_get_shard_storage_key(storage_key, shard.metadata, storage_key_to_fqn),
        )
        write_requests.append(wr)
    return write_requests


class FileSystemWriter:
    def __init__(self, path: str):
        self.path = path

    def write_tensors(self, requests: List[TensorWriteRequest]) -> None:
        for req in requests:
            torch.save(req.tensor, os.path.join(self.path, req.storage_key))


def make_fused_sharded_table(num_rows=4096, dim=16, rows_per_shard=512) -> ShardedTensor:
    # torchrec fuses all embedding tables of a rank into one weight; shards are views of it
    fused_weight = torch.randn(num_rows * 2, dim)
    shards, mds = [], []
    for off in range(0, num_rows, rows_per_shard):
        md = ShardMetadata(shard_offsets=[off, 0], shard_sizes=[rows_per_shard, dim])
        shards.append(Shard(tensor=fused_weight.narrow(0, off, rows_per_shard), metadata=md))
        mds.append(md)
    return ShardedTensor(shards, mds)


if __name__ == "__main__":
    st = make_fused_sharded_table()
    for prep in (_prepare_sharded_tensor_write, _prepare_sharded_tensor_write_fixed):
        with tempfile.TemporaryDirectory() as d:
            reqs, md = prep(st, "emb.t0.weight", {})
            FileSystemWriter(d).write_tensors(reqs)
            total = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
            print(prep.__name__, len(reqs), "files,", total, "bytes")
    with tempfile.TemporaryDirectory() as d:
        FileSystemWriter(d).write_tensors(_prepare_sharded_tensor_write_trim(st, "emb.t0.weight", {}))
        print("trim", sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)), "bytes")
