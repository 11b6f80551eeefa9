# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/146273 — torch.distributed.checkpoint's FileSystemWriter used _SerialCpuLoader (thread_count > 1), which yielded tensor.cpu() as-is; for CPU tensors that is the same view, so a state_dict entry that views a larger flat buffer was torch.save'd with its whole storage; the fix applies the _OverlappingCpuLoader check and clones tensors whose storage is larger than their data.
import io
from dataclasses import dataclass

import torch


@dataclass
class WriteItem:
    index: str
    size: int


class _SerialCpuLoader:
    def __init__(self, resolve_fun):
        self.resolve_fun = resolve_fun
        self.items = []

    def add(self, size, obj):
        self.items.append((size, obj))

    def start_loading(self):
        pass

    def values(self):
        for _, obj in self.items:
            tensor = self.resolve_fun(obj).detach()
            tensor = tensor.cpu()  # want: A
            yield tensor, obj


class _SerialCpuLoaderFixed(_SerialCpuLoader):
    def values(self):
        for _, obj in self.items:
            tensor = self.resolve_fun(obj).detach()
            tensor = tensor.cpu()
            if tensor.untyped_storage().nbytes() != tensor.numel() * tensor.element_size():
                tensor = tensor.clone()
            yield tensor, obj


def _write_item(stream, data, write_item):
    offset = stream.tell()
    torch.save(data, stream)
    length = stream.tell() - offset
    return write_item.index, offset, length


def _write_files_from_queue(stream, state_dict, write_items, loader_cls):
    loader = loader_cls(lambda item: state_dict[item.index])
    for item in write_items:
        loader.add(item.size, item)
    loader.start_loading()
    return [_write_item(stream, tensor, item) for tensor, item in loader.values()]


def _local_shard_state_dict(num_params=16, numel=2048):
    # FSDP-style: each rank's original params are views into one flat parameter shard
    flat = torch.randn(num_params * numel)
    return {f"layers.{i}.weight": flat.narrow(0, i * numel, numel) for i in range(num_params)}


if __name__ == "__main__":
    sd = _local_shard_state_dict()
    items = [WriteItem(k, v.numel() * v.element_size()) for k, v in sd.items()]
    for cls in (_SerialCpuLoader, _SerialCpuLoaderFixed):
        stream = io.BytesIO()
        _write_files_from_queue(stream, sd, items, cls)
        print(cls.__name__, "bytes written", stream.tell(), "payload", sum(i.size for i in items))
    assert stream.tell() < 2 * sum(i.size for i in items)
