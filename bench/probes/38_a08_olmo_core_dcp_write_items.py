# source: allenai/OLMo-core https://github.com/allenai/OLMo-core/pull/690 — The custom distributed-checkpoint writer `_write_items` resolved each tensor write item through the planner and `torch.save`d the resulting tensor straight into the .distcp shard. When the resolved tensor was a view (e.g. a slice of a flat parameter/optimizer buffer), torch.save serialized its entire backing storage, silently bloating every shard. The fix clones the tensor before saving and raises OLMoCheckpointError if the written length exceeds `data.nbytes` by more than 1 MiB.
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List

import torch
from torch.distributed.checkpoint.filesystem import WriteResult
from torch.distributed.checkpoint.metadata import MetadataIndex
from torch.distributed.checkpoint.planner import WriteItem, WriteItemType


class OLMoCheckpointError(Exception): ...


@dataclass
class _StorageInfo:
    relative_path: str
    offset: int
    length: int


class FlatStatePlanner:
    """Stand-in SavePlanner: the local state dict holds views into one flat buffer."""

    def __init__(self, state_dict: Dict[str, torch.Tensor]):
        self.state_dict = state_dict

    def resolve_data(self, write_item: WriteItem):
        return self.state_dict[write_item.index.fqn]


def _write_items(path: str, storage_key: str, items: List[WriteItem], planner) -> List[WriteResult]:
    results: List[WriteResult] = []

    tmp_file = tempfile.NamedTemporaryFile(mode="w+b", suffix=".distcp", dir=Path(path).parent, delete=False)
    tmp_path = Path(tmp_file.name)
    try:
        for write_item in items:
            offset = tmp_file.tell()
            data = planner.resolve_data(write_item)

            assert isinstance(data, torch.Tensor)
            data = data.cpu()  # should already be on CPU, but just in case
            torch.save(data, tmp_file)  # want: A

            length = tmp_file.tell() - offset

            storage_data = _StorageInfo(storage_key, offset, length)
            results.append(WriteResult(index=write_item.index, size_in_bytes=length, storage_data=storage_data))

        tmp_file.flush()
        tmp_file.close()
        tmp_path.replace(path)
    finally:
        tmp_file.close()
        tmp_path.unlink(missing_ok=True)

    return results


def _write_items_fixed(path: str, storage_key: str, items: List[WriteItem], planner) -> List[WriteResult]:
    results: List[WriteResult] = []

    tmp_file = tempfile.NamedTemporaryFile(mode="w+b", suffix=".distcp", dir=Path(path).parent, delete=False)
    tmp_path = Path(tmp_file.name)
    try:
        for write_item in items:
            offset = tmp_file.tell()
            data = planner.resolve_data(write_item)

            assert isinstance(data, torch.Tensor)
            data = data.cpu()  # should already be on CPU, but just in case
            data = data.clone()  # avoid serializing unrelated shared storage
            torch.save(data, tmp_file)

            length = tmp_file.tell() - offset

            if isinstance(data, torch.Tensor) and (length - data.nbytes) > 1024 * 1024:
                raise OLMoCheckpointError(
                    f"Written byte size mismatch for index {write_item.index}: "
                    f"expected {data.nbytes}, got {length}. "
                    "The data might be a view or sharing underlying storage with something else."
                )

            storage_data = _StorageInfo(storage_key, offset, length)
            results.append(WriteResult(index=write_item.index, size_in_bytes=length, storage_data=storage_data))

        tmp_file.flush()
        tmp_file.close()
        tmp_path.replace(path)
    finally:
        tmp_file.close()
        tmp_path.unlink(missing_ok=True)

    return results


if __name__ == "__main__":
    flat = torch.randn(1 << 20)  # 4 MiB flat buffer
    state = {"w1": flat[:4096].view(64, 64), "w2": flat[4096:8192], "w3": flat[8192:8704]}
    items = [WriteItem(index=MetadataIndex(k), type=WriteItemType.TENSOR) for k in state]
    planner = FlatStatePlanner(state)
    with tempfile.TemporaryDirectory() as d:
        bad = _write_items(os.path.join(d, "__0_0.distcp"), "__0_0.distcp", items, planner)
        good = _write_items_fixed(os.path.join(d, "__1_0.distcp"), "__1_0.distcp", items, planner)
        for r in bad:
            assert r.size_in_bytes > flat.nbytes, r.size_in_bytes
        for r, (k, v) in zip(good, state.items()):
            assert r.size_in_bytes < v.nbytes + 4096, (k, r.size_in_bytes)
        assert os.path.getsize(os.path.join(d, "__0_0.distcp")) > 3 * flat.nbytes
        assert os.path.getsize(os.path.join(d, "__1_0.distcp")) < flat.nbytes // 10
    print("ok")
