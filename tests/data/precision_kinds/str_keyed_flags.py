# VL403: per-adapter flags in a dict a mixin base class declares (`self.lora_bias: dict[str, bool]`), read with
# a string key: no tensor, whatever the `_bias` suffix suggests (peft tuners/lora/layer.py:1041)
import torch
from torch import nn


class LoraLayer:
    def __init__(self) -> None:
        self.lora_bias: dict[str, bool] = {}
        self.scaling: dict[str, float] = {}


class Linear(nn.Module, LoraLayer):
    def __init__(self) -> None:
        nn.Module.__init__(self)
        LoraLayer.__init__(self)
        self.weight = nn.Parameter(torch.randn(4, 4))

    def forward(self, x: torch.Tensor, adapter) -> torch.Tensor:
        out = x @ self.weight
        if self.lora_bias[adapter]:
            out = out + 1.0
        return out

    def route(self, x: torch.Tensor, name: str) -> torch.Tensor:
        if self.adapter_bias[name]:  # a tensor refuses a string key: what it indexes is a dict
            x = x * 2.0
        return x

    def __call__(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return self.route(self.forward(x, name), name)
