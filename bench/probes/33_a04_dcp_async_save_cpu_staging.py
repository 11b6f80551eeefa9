# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/145408 — DCP async_save staged the state dict with _offload_state_dict_to_cpu, whose `.to(cpu)` is a no-op for tensors already on CPU, so the "staged" copy aliased the live CPU parameters and optimizer updates made before the background write leaked into the checkpoint (issue #144657); the fix stages with _copy_state_dict into freshly allocated CPU tensors.
import io
import threading
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn


def _iterate_state_dict(iter_object, tensor_func):
    if isinstance(iter_object, torch.Tensor):
        return tensor_func(iter_object)
    if isinstance(iter_object, dict):
        return {k: _iterate_state_dict(v, tensor_func) for k, v in iter_object.items()}
    if isinstance(iter_object, (list, tuple)):
        return type(iter_object)(_iterate_state_dict(v, tensor_func) for v in iter_object)
    return iter_object


def _offload_state_dict_to_cpu(state_dict, type_check=True):
    cpu_device = torch.device("cpu")
    return _iterate_state_dict(state_dict, lambda t: t.to(cpu_device))  # maybe: A (helper is fine for GPU offload; the misuse is below)


def _create_cpu_state_dict(state_dict):
    return _iterate_state_dict(state_dict, lambda t: torch.empty(t.size(), dtype=t.dtype, device="cpu"))


def _copy_state_dict(state_dict, copy_state_dict, type_check=True):
    for k, v in state_dict.items():
        if isinstance(v, dict):
            _copy_state_dict(v, copy_state_dict[k], type_check)
        elif isinstance(v, torch.Tensor):
            copy_state_dict[k].copy_(v)
    return copy_state_dict


class FileSystemWriter:
    def __init__(self, gate):
        self.gate = gate
        self.blob = None

    def write(self, state_dict):
        self.gate.wait()
        buf = io.BytesIO()
        torch.save(state_dict, buf)
        self.blob = buf.getvalue()


_executor = ThreadPoolExecutor(max_workers=1)


def async_save(state_dict, storage_writer):
    staged_state_dict = _offload_state_dict_to_cpu(state_dict, type_check=False)  # want: A
    return _executor.submit(storage_writer.write, staged_state_dict)


def async_save_fixed(state_dict, storage_writer):
    staged_state_dict = _create_cpu_state_dict(state_dict)
    _copy_state_dict(state_dict, staged_state_dict, type_check=False)
    return _executor.submit(storage_writer.write, staged_state_dict)


if __name__ == "__main__":
    for fn in (async_save, async_save_fixed):
        model = nn.Linear(1, 1, bias=False)
        nn.init.ones_(model.weight)
        opt = torch.optim.SGD(model.parameters(), lr=1.0)
        writer = FileSystemWriter(threading.Event())
        fut = fn({"model": model.state_dict()}, writer)
        for _ in range(3):  # trainer keeps stepping while the save is in flight
            opt.zero_grad()
            model(torch.ones(1, 1)).sum().backward()
            opt.step()
        writer.gate.set()
        fut.result()
        saved = torch.load(io.BytesIO(writer.blob))["model"]["weight"].item()
        print(f"{fn.__name__}: saved weight={saved} (expected 1.0)")
