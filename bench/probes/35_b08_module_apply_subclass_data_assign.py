# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/111162 — nn.Module._apply converted parameters with `param.data = fn(param)`; for DTensor (a wrapper subclass whose real storage is its local shard) the .data setter does not propagate into `_local_tensor`, so `module.to(dtype)` silently left the shard unconverted; the fix swaps in a new nn.Parameter built from the converted tensor.
import torch
import torch.nn as nn


class ShardTensor(torch.Tensor):
    """DTensor-like wrapper subclass: outer metadata, real data in `_local_tensor`."""

    @staticmethod
    def __new__(cls, local_tensor, requires_grad=False):
        return torch.Tensor._make_wrapper_subclass(
            cls, local_tensor.shape, dtype=local_tensor.dtype,
            device=local_tensor.device, requires_grad=requires_grad)

    def __init__(self, local_tensor, requires_grad=False):
        self._local_tensor = local_tensor

    def __tensor_flatten__(self):
        return ["_local_tensor"], None

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (torch.ops.aten.detach.default, torch.ops.aten.alias.default):
            return cls(args[0]._local_tensor)
        if func is torch.ops.aten._to_copy.default:
            return cls(args[0]._local_tensor.to(**kwargs))
        raise NotImplementedError(func)


def distribute_module(module):
    for name, p in list(module.named_parameters(recurse=False)):
        module._parameters[name] = nn.Parameter(ShardTensor(p.detach()), requires_grad=False)
    return module


def _apply(module, fn):
    for child in module.children():
        _apply(child, fn)
    for key, param in module._parameters.items():
        if param is None:
            continue
        with torch.no_grad():
            param_applied = fn(param)
        param.data = param_applied  # want: B
    return module


def _apply_fixed(module, fn):
    for child in module.children():
        _apply_fixed(child, fn)
    for key, param in module._parameters.items():
        if param is None:
            continue
        with torch.no_grad():
            param_applied = fn(param)
        module._parameters[key] = nn.Parameter(param_applied, param.requires_grad)
    return module


def build():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    for sub in m:
        distribute_module(sub)
    return m


if __name__ == "__main__":
    to_double = lambda t: t.to(torch.float64)
    m = _apply(build(), to_double)
    w = m[0].weight
    print("buggy: outer dtype", w.dtype, "local shard dtype", w._local_tensor.dtype)
    assert w._local_tensor.dtype == torch.float32

    m2 = _apply_fixed(build(), to_double)
    w2 = m2[0].weight
    print("fixed: outer dtype", w2.dtype, "local shard dtype", w2._local_tensor.dtype)
    assert w2._local_tensor.dtype == torch.float64
