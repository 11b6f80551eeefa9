# source: pytorch/executorch https://github.com/pytorch/executorch/pull/1687 — when a constant weight was a view of a larger blob (e.g. one slice of a fused/stacked parameter), the emitter kept `tensor.untyped_storage()` of that view on the TensorSpec and serialized the whole storage into the program's constant buffer, disagreeing with the spec's logical nbytes; the fix clones view weights before taking their storage.
import ctypes
import typing

import torch
from torch import nn


class TensorSpec:
    def __init__(self, dtype, shape, const):
        self.dtype = dtype
        self.shape = tuple(shape)
        self.const = const
        self.storage = None
        self.allocated_memory = 0

    @property
    def nbytes(self):
        n = 1
        for s in self.shape:
            n *= s
        return n * torch.empty((), dtype=self.dtype).element_size()

    @classmethod
    def from_tensor(cls, tensor, const=False):
        spec = cls(tensor.dtype, tensor.shape, const)
        if const:
            spec.storage = tensor.untyped_storage()  # want: A
            spec.allocated_memory = spec.nbytes
        return spec


class TensorSpecFixed(TensorSpec):
    @classmethod
    def from_tensor(cls, tensor, const=False):
        spec = cls(tensor.dtype, tensor.shape, const)
        if const:
            if tensor._base is not None or tensor.untyped_storage().nbytes() != spec.nbytes:
                tensor = tensor.clone()
            spec.storage = tensor.untyped_storage()
            spec.allocated_memory = spec.nbytes
        return spec


class _Emitter:
    def __init__(self, spec_cls):
        self.spec_cls = spec_cls
        self.constant_buffer = []
        self.specs = []

    def _save_new_const_tensor(self, spec):
        spec_array_type = ctypes.c_char * typing.cast(torch.UntypedStorage, spec.storage).nbytes()
        buffer_data = (
            bytes(
                ctypes.cast(
                    typing.cast(torch.UntypedStorage, spec.storage).data_ptr(),
                    ctypes.POINTER(spec_array_type),
                ).contents
            )
            if spec.allocated_memory != 0
            else b""
        )
        self.constant_buffer.append(buffer_data)
        return len(self.constant_buffer) - 1

    def emit_params(self, named_params):
        for name, p in named_params:
            spec = self.spec_cls.from_tensor(p.detach(), const=True)
            self.specs.append(spec)
            self._save_new_const_tensor(spec)


class ExpertBank(nn.Module):
    def __init__(self, n_experts=8, dim=64):
        super().__init__()
        self.stacked = nn.Parameter(torch.randn(n_experts, dim, dim))

    def expert_weights(self):
        return [(f"expert_{i}", self.stacked[i]) for i in range(self.stacked.shape[0])]


if __name__ == "__main__":
    bank = ExpertBank()
    for spec_cls in (TensorSpec, TensorSpecFixed):
        em = _Emitter(spec_cls)
        em.emit_params(bank.expert_weights())
        logical = sum(s.nbytes for s in em.specs)
        written = sum(len(b) for b in em.constant_buffer)
        print(f"{spec_cls.__name__:16s} logical={logical:8d} B  serialized={written:8d} B")
