# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/13276 — group offloading moved weights with `param.data = ...`; for TorchAO quantized tensor subclasses the .data setter only replaces the outer wrapper and the real payload (`qdata`, `scale`) is never updated, so weights silently stayed where they were; the fix swaps the whole tensor (torch.utils.swap_tensors) on onload and re-sets the inner tensors on offload.
import torch
import torch.nn as nn


class AffineQuantizedTensor(torch.Tensor):
    """Minimal wrapper subclass in the style of torchao: payload lives in attributes."""

    @staticmethod
    def __new__(cls, qdata, scale):
        return torch.Tensor._make_wrapper_subclass(
            cls, qdata.shape, dtype=torch.float32, device=qdata.device, requires_grad=False)

    def __init__(self, qdata, scale):
        self.qdata = qdata
        self.scale = scale

    def __tensor_flatten__(self):
        return ["qdata", "scale"], None

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (torch.ops.aten.detach.default, torch.ops.aten.alias.default):
            return cls(args[0].qdata, args[0].scale)
        if func is torch.ops.aten._to_copy.default:
            dev = kwargs.get("device", args[0].device)
            return cls(args[0].qdata.to(dev), args[0].scale.to(dev))
        raise NotImplementedError(func)


def quantize_(linear):
    w = linear.weight.detach()
    scale = w.abs().amax(dim=1) / 127
    q = torch.round(w / scale[:, None]).to(torch.int8)
    linear.weight = nn.Parameter(AffineQuantizedTensor(q, scale), requires_grad=False)


class ModuleGroup:
    def __init__(self, modules, offload_device, onload_device, non_blocking=False):
        self.modules = modules
        self.offload_device = offload_device
        self.onload_device = onload_device
        self.non_blocking = non_blocking
        self.cpu_param_dict = {p: p.data.to(offload_device) for m in modules for p in m.parameters()}

    def onload_(self):
        for group_module in self.modules:
            for param in group_module.parameters():
                param.data = param.data.to(self.onload_device, non_blocking=self.non_blocking)  # want: B

    def offload_(self):
        for group_module in self.modules:
            for param in group_module.parameters():
                param.data = self.cpu_param_dict[param]  # want: B


class ModuleGroupFixed(ModuleGroup):
    def onload_(self):
        for group_module in self.modules:
            for param in group_module.parameters():
                torch.utils.swap_tensors(param, param.to(self.onload_device, non_blocking=self.non_blocking))

    def offload_(self):
        for group_module in self.modules:
            for param in group_module.parameters():
                source = self.cpu_param_dict[param]
                for attr in source.__tensor_flatten__()[0]:
                    setattr(param, attr, getattr(source, attr))


def run(group_cls):
    torch.manual_seed(0)
    block = nn.Sequential(nn.Linear(8, 8, bias=False), nn.Linear(8, 8, bias=False))
    for lin in block:
        quantize_(lin)
    group = group_cls(list(block), offload_device="cpu", onload_device="cpu")
    group.onload_()
    for lin in block:  # simulate the "onloaded" copy being replaced by another buffer
        lin.weight.qdata = lin.weight.qdata.clone()
    group.offload_()
    p = block[0].weight
    return p.qdata is group.cpu_param_dict[p].qdata


if __name__ == "__main__":
    ok = run(ModuleGroup)
    print("buggy: payload restored to offload copy:", ok)
    assert not ok
    ok = run(ModuleGroupFixed)
    print("fixed: payload restored to offload copy:", ok)
    assert ok
