# source: huggingface/peft https://github.com/huggingface/peft/pull/2611 — For compiled models, hotswap_adapter_from_state_dict swapped LoRA weights with `old_val.data = new_val.data`, which rebinds the parameter to the new adapter's storage. The CUDA graphs recorded by torch.compile (mode="reduce-overhead") had captured the old storage, so the swapped-in weights never reached the recorded graphs and they had to be re-recorded. The fix ("FIX Avoid CUDA Graph re-record with hotswap") writes into the existing storage with `old_val.data.copy_(new_val.data)`.
from operator import attrgetter

import torch
import torch.nn as nn


class LoraLinear(nn.Module):
    def __init__(self, base_layer, adapter_name="default", r=4, lora_alpha=8):
        super().__init__()
        self.base_layer = base_layer
        self.lora_A = nn.ModuleDict({adapter_name: nn.Linear(base_layer.in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({adapter_name: nn.Linear(r, base_layer.out_features, bias=False)})
        self.scaling = {adapter_name: lora_alpha / r}
        nn.init.normal_(self.lora_B[adapter_name].weight)

    def forward(self, x):
        out = self.base_layer(x)
        for name in self.lora_A:
            out = out + self.lora_B[name](self.lora_A[name](x)) * self.scaling[name]
        return out


class CapturedGraph:
    """Stands in for a CUDA graph recorded by torch.compile(mode="reduce-overhead")."""

    def __init__(self, layer, adapter_name="default"):
        self.base_w = layer.base_layer.weight.data
        self.a = layer.lora_A[adapter_name].weight.data
        self.b = layer.lora_B[adapter_name].weight.data
        self.scaling = layer.scaling[adapter_name]

    def replay(self, x):
        return x @ self.base_w.T + (x @ self.a.T) @ self.b.T * self.scaling


def hotswap_adapter_from_state_dict(model, state_dict, adapter_name, config, parameter_prefix="lora_"):
    is_compiled = hasattr(model, "_orig_mod")
    is_compiled_inplace = bool(getattr(model, "_compiled_call_impl", None))
    for key, new_val in state_dict.items():
        module_name = ".".join(key.split(".")[:-3])
        module = model.get_submodule(module_name)
        module.scaling[adapter_name] = config["lora_alpha"] / config["r"]

        old_val = attrgetter(key)(model)
        new_val = new_val.to(old_val.data.device)
        if not is_compiled and not is_compiled_inplace:
            try:
                torch.utils.swap_tensors(old_val, new_val)
                continue
            except RuntimeError:
                is_compiled = True
        if old_val.shape == new_val.shape:
            old_val.data = new_val.data  # want: B
        else:
            if old_val.shape[0] > new_val.shape[0]:
                old_val.data.fill_(0)
                old_val.data[: new_val.shape[0]] = new_val.data
            elif old_val.shape[1] > new_val.shape[1]:
                old_val.data.fill_(0)
                old_val.data[:, : new_val.shape[1]] = new_val.data


def hotswap_adapter_from_state_dict_fixed(model, state_dict, adapter_name, config, parameter_prefix="lora_"):
    is_compiled = hasattr(model, "_orig_mod")
    is_compiled_inplace = bool(getattr(model, "_compiled_call_impl", None))
    for key, new_val in state_dict.items():
        module_name = ".".join(key.split(".")[:-3])
        module = model.get_submodule(module_name)
        module.scaling[adapter_name] = config["lora_alpha"] / config["r"]

        old_val = attrgetter(key)(model)
        new_val = new_val.to(old_val.data.device)
        if not is_compiled and not is_compiled_inplace:
            try:
                torch.utils.swap_tensors(old_val, new_val)
                continue
            except RuntimeError:
                is_compiled = True
        if old_val.shape == new_val.shape:
            old_val.data.copy_(new_val.data)
        else:
            if old_val.shape[0] > new_val.shape[0]:
                old_val.data.fill_(0)
                old_val.data[: new_val.shape[0]].copy_(new_val.data)
            elif old_val.shape[1] > new_val.shape[1]:
                old_val.data.fill_(0)
                old_val.data[:, : new_val.shape[1]].copy_(new_val.data)


def _run(hotswap_fn):
    torch.manual_seed(0)
    model = nn.Sequential()
    model.add_module("proj", LoraLinear(nn.Linear(6, 6, bias=False)))
    model._compiled_call_impl = model._call_impl  # what model.compile() sets
    graph = CapturedGraph(model.proj)
    new_sd = {
        "proj.lora_A.default.weight": torch.randn(4, 6),
        "proj.lora_B.default.weight": torch.randn(6, 4),
    }
    with torch.no_grad():
        hotswap_fn(model, new_sd, "default", {"r": 4, "lora_alpha": 8})
        x = torch.randn(3, 6)
        return graph.replay(x), model(x)


if __name__ == "__main__":
    replayed, eager = _run(hotswap_adapter_from_state_dict)
    assert not torch.allclose(replayed, eager), "buggy: captured graph still runs the old adapter"
    replayed, eager = _run(hotswap_adapter_from_state_dict_fixed)
    assert torch.allclose(replayed, eager, atol=1e-5), "fixed: captured storage holds the new adapter"
    print("ok")
