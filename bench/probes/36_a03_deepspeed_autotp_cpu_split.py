# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/pull/4353 — AutoTP._replace split the full Linear weight with `child.weight.data.split(...)` and kept `data[mp_replace.gpu_index].to(get_accelerator().current_device_name())`; when loading the model partition on CPU that `.to()` is a no-op, so the per-rank LinearAllreduce/LinearLayer Parameter was a view pinning the whole unsplit weight ("loading the model partition on the CPU with AutoTP will OOM ... the tensor on the CPU will not automatically free MEM after splitting"). The fix uses `.to(...).clone().detach()` and `del data`.
from types import SimpleNamespace

import torch
import torch.nn as nn


class _CpuAccelerator:
    def current_device_name(self):
        return "cpu"


def get_accelerator():
    return _CpuAccelerator()


class LinearAllreduce(nn.Module):
    def __init__(self, weight, bias=None, mp_group=None):
        super().__init__()
        self.weight, self.bias, self.mp_group = weight, bias, mp_group


class LinearLayer(nn.Module):
    def __init__(self, weight, bias=None):
        super().__init__()
        self.weight, self.bias = weight, bias


class AutoTP:
    def __init__(self, mp_size, mp_group=None):
        self.mp_size, self.mp_group = mp_size, mp_group
        self.conv_linear_layer = False

    def _replace(self, child, name, mp_replace, all_reduce_linears=("o_proj", "down_proj")):
        weight_shape = child.weight.shape
        if name in all_reduce_linears:
            data = child.weight.data.split(weight_shape[1] // self.mp_size, dim=1)
            data = data[mp_replace.gpu_index].to(get_accelerator().current_device_name())  # want: A
            setattr(child, "replaced", True)
            return LinearAllreduce(nn.Parameter(data, requires_grad=False), child.bias, self.mp_group)  # maybe: A (Parameter wraps the view from the line above)
        data = child.weight.data.split(weight_shape[0] // self.mp_size, dim=0)
        data = data[mp_replace.gpu_index].to(get_accelerator().current_device_name())  # want: A
        setattr(child, "replaced", True)
        return LinearLayer(weight=nn.Parameter(data.to(get_accelerator().current_device_name()), requires_grad=False))  # maybe: A (same view, .to() is a no-op on CPU)


class AutoTPFixed(AutoTP):
    def _replace(self, child, name, mp_replace, all_reduce_linears=("o_proj", "down_proj")):
        weight_shape = child.weight.shape
        if name in all_reduce_linears:
            data = child.weight.data.split(weight_shape[1] // self.mp_size, dim=1)
            data_dc = data[mp_replace.gpu_index].to(get_accelerator().current_device_name()).clone().detach()
            del data
            setattr(child, "replaced", True)
            return LinearAllreduce(nn.Parameter(data_dc, requires_grad=False), child.bias, self.mp_group)
        data = child.weight.data.split(weight_shape[0] // self.mp_size, dim=0)
        data_dc = data[mp_replace.gpu_index].to(get_accelerator().current_device_name()).clone().detach()
        del data
        setattr(child, "replaced", True)
        return LinearLayer(weight=nn.Parameter(data_dc.to(get_accelerator().current_device_name()), requires_grad=False))


def partition(tp_cls):
    torch.manual_seed(0)
    model = nn.ModuleDict({"q_proj": nn.Linear(256, 1024, bias=False), "o_proj": nn.Linear(1024, 256, bias=False)})
    tp, mp_replace = tp_cls(mp_size=4), SimpleNamespace(gpu_index=2)
    out = {name: tp._replace(child, name, mp_replace) for name, child in model.items()}
    del model  # the unsplit HF model is dropped after injection
    return out


if __name__ == "__main__":
    buggy, fixed = partition(AutoTP), partition(AutoTPFixed)
    for name in ("q_proj", "o_proj"):
        wb, wf = buggy[name].weight, fixed[name].weight
        assert torch.equal(wb, wf)
        print(name, "buggy storage:", wb.untyped_storage().nbytes(), "fixed storage:", wf.untyped_storage().nbytes())
        assert wb.untyped_storage().nbytes() == 4 * wf.untyped_storage().nbytes()
