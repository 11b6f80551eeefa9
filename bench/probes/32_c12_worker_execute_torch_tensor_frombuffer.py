# source: CrayLabs/SmartSim https://github.com/CrayLabs/SmartSim/pull/661 — TorchWorker.execute rebuilt each batched input with `torch.tensor(np.frombuffer(mem_view, dtype).reshape(dims))`, which always copies the whole request batch out of the shared memory allocation before the model runs; the fix ("Use `torch.from_numpy` instead of `torch.tensor` to reduce a copy") wraps the buffer zero-copy.
from dataclasses import dataclass, field

import numpy as np
import torch


class MemoryAlloc:
    # stand-in for dragon.managed_memory.MemoryAlloc
    def __init__(self, nbytes):
        self._buf = bytearray(nbytes)

    def get_memview(self):
        return memoryview(self._buf)

    def free(self):
        pass


@dataclass
class TransformInputResult:
    transformed: list
    slices: list
    dims: list
    dtypes: list


@dataclass
class ExecuteResult:
    predictions: list
    slices: list
    inputs: list = field(default_factory=list)


class TorchWorker:
    @staticmethod
    def execute(model, transform_result, device):
        device_to_torch = {"cpu": "cpu", "gpu": "cuda"}
        for old, new in device_to_torch.items():
            device = device.replace(old, new)

        tensors = []
        for mem_alloc, dims, dtype in zip(transform_result.transformed, transform_result.dims, transform_result.dtypes):
            itemsize = np.empty((1), dtype=dtype).itemsize
            tensors.append(
                torch.tensor(  # want: C
                    np.frombuffer(mem_alloc.get_memview()[0 : np.prod(dims) * itemsize], dtype=dtype).reshape(dims)
                )
            )

        with torch.no_grad():
            model.eval()
            results = [model(*[tensor.to(device, non_blocking=True).detach() for tensor in tensors])]
        return ExecuteResult(results, transform_result.slices, tensors)


class TorchWorkerFixed(TorchWorker):
    @staticmethod
    def execute(model, transform_result, device):
        device_to_torch = {"cpu": "cpu", "gpu": "cuda"}
        for old, new in device_to_torch.items():
            device = device.replace(old, new)

        tensors = []
        for mem_alloc, dims, dtype in zip(transform_result.transformed, transform_result.dims, transform_result.dtypes):
            itemsize = np.empty((1), dtype=dtype).itemsize
            tensors.append(
                torch.from_numpy(
                    np.frombuffer(mem_alloc.get_memview()[0 : np.prod(dims) * itemsize], dtype=dtype).reshape(dims)
                )
            )

        with torch.no_grad():
            model.eval()
            results = [model(*[tensor.to(device, non_blocking=True).detach() for tensor in tensors])]
        return ExecuteResult(results, transform_result.slices, tensors)


if __name__ == "__main__":
    torch.manual_seed(0)
    dims = [256, 64]
    payload = np.random.rand(*dims).astype("float32")
    mem_alloc = MemoryAlloc(payload.nbytes)
    mem_alloc.get_memview()[:] = payload.tobytes()
    transform_result = TransformInputResult([mem_alloc], [slice(0, 128), slice(128, 256)], [dims], ["float32"])
    buffer_addr = np.frombuffer(mem_alloc.get_memview(), dtype="float32").ctypes.data

    model = torch.nn.Linear(64, 8)
    res_b = TorchWorker.execute(model, transform_result, "cpu")
    res_f = TorchWorkerFixed.execute(model, transform_result, "cpu")
    print("buggy input aliases shared buffer:", res_b.inputs[0].data_ptr() == buffer_addr)
    print("fixed input aliases shared buffer:", res_f.inputs[0].data_ptr() == buffer_addr)
    assert res_f.inputs[0].data_ptr() == buffer_addr and res_b.inputs[0].data_ptr() != buffer_addr
    assert torch.equal(res_b.predictions[0], res_f.predictions[0])
