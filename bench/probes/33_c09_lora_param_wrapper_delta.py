# source: huggingface/peft https://github.com/huggingface/peft/pull/3577 — LoRA's ParamWrapper for fused 3-D MoE expert parameters registered a parametrization returning W + delta_weight, where delta_weight = einsum(B, A) * scaling materialised a second expert-stack-sized tensor (plus a scaled copy) on every forward; the PR keeps the low-rank factors and folds them in with one torch.baddbmm(W, lhs, rhs, alpha=scaling).
from contextlib import contextmanager

import torch
from torch import nn


class GroupedExperts(nn.Module):
    def __init__(self, num_experts=8, in_features=64, out_features=96):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_experts, in_features, out_features) * 0.02)

    def forward(self, x):  # x: (E, tokens, in)
        return torch.bmm(x, self.weight)


class _LoraParameterProxy(nn.Module):
    def __init__(self, delta_weight):
        super().__init__()
        self.delta_weight = delta_weight

    def forward(self, W):
        with nn.utils.parametrize.cached():
            return W + self.delta_weight  # maybe: C (adds the materialised delta; the fix fuses it into baddbmm)


class ParamWrapper(nn.Module):
    def __init__(self, base_layer, parameter_name="weight", r=4, lora_alpha=8, adapter_name="default"):
        super().__init__()
        self.base_layer = base_layer
        self.parameter_name = parameter_name
        self.num_experts, self.in_features, self.out_features = getattr(base_layer, parameter_name).shape
        self.lora_A = nn.ModuleDict({adapter_name: nn.Linear(self.in_features, r * self.num_experts, bias=False)})
        self.lora_B = nn.ModuleDict({adapter_name: nn.Linear(r * self.num_experts, self.out_features, bias=False)})
        nn.init.normal_(self.lora_B[adapter_name].weight, std=0.02)
        self.scaling = {adapter_name: lora_alpha / r}
        self.active_adapters = [adapter_name]

    def get_param(self):
        return getattr(self.base_layer, self.parameter_name)

    def get_delta_weight(self, adapter_name):
        weight_A = self.lora_A[adapter_name].weight
        weight_B = self.lora_B[adapter_name].weight
        # shape: experts x rank x in_features
        weight_A = weight_A.reshape(self.num_experts, -1, weight_A.shape[-1])
        # shape: out_features x rank x experts
        weight_B = weight_B.reshape(weight_B.shape[0], -1, self.num_experts)
        delta_weight = torch.einsum("o r e, e r i -> e i o", weight_B, weight_A) * self.scaling[adapter_name]  # want: C
        param = self.get_param()
        return delta_weight.to(param.device, param.dtype)

    def _make_proxy(self, adapter_name):
        return _LoraParameterProxy(self.get_delta_weight(adapter_name))

    @contextmanager
    def _activate_lora(self, active_adapters):
        proxy = self._make_proxy(active_adapters[0])
        requires_grad_before = self.get_param().requires_grad
        nn.utils.parametrize.register_parametrization(self.base_layer, self.parameter_name, proxy)
        self.base_layer.parametrizations[self.parameter_name].original.requires_grad_(requires_grad_before)
        try:
            yield
        finally:
            nn.utils.parametrize.remove_parametrizations(self.base_layer, self.parameter_name, leave_parametrized=False)

    def forward(self, x, *args, **kwargs):
        with self._activate_lora(self.active_adapters):
            return self.base_layer(x, *args, **kwargs)


class _LoraParameterProxyFixed(nn.Module):
    def __init__(self, delta_factors):
        super().__init__()
        self.delta_factors = delta_factors

    def forward(self, W):
        with nn.utils.parametrize.cached():
            lhs, rhs, scaling = self.delta_factors
            return torch.baddbmm(W, lhs, rhs, alpha=scaling)


class ParamWrapperFixed(ParamWrapper):
    def _make_proxy(self, adapter_name):
        weight_A = self.lora_A[adapter_name].weight
        weight_B = self.lora_B[adapter_name].weight
        lhs = weight_A.view(self.num_experts, -1, self.in_features).transpose(1, 2)  # (E, in, r)
        rhs = weight_B.view(self.out_features, -1, self.num_experts).permute(2, 1, 0)  # (E, r, out)
        return _LoraParameterProxyFixed((lhs, rhs, self.scaling[adapter_name]))


if __name__ == "__main__":
    torch.manual_seed(0)
    base_b, base_f = GroupedExperts(), GroupedExperts()
    base_f.load_state_dict(base_b.state_dict())
    buggy, fixed = ParamWrapper(base_b), ParamWrapperFixed(base_f)
    fixed.lora_A.load_state_dict(buggy.lora_A.state_dict())
    fixed.lora_B.load_state_dict(buggy.lora_B.state_dict())
    x = torch.randn(8, 32, 64)
    y_b, y_f = buggy(x), fixed(x)
    assert torch.allclose(y_b, y_f, atol=1e-5)
    y_b.sum().backward()
    y_f.sum().backward()
    assert torch.allclose(buggy.lora_A["default"].weight.grad, fixed.lora_A["default"].weight.grad, atol=1e-4)
    delta = buggy.get_delta_weight("default")
    print("expert stack bytes:", base_b.weight.untyped_storage().nbytes(),
          "| extra delta materialised per forward (buggy):", delta.untyped_storage().nbytes())
