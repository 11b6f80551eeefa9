# source: AgileRL/AgileRL https://github.com/AgileRL/AgileRL/pull/623 — With fp32 LoRA adapters on a bf16 base, PEFT's LoRA Linear ran `x.to(fp32)` on every wrapped linear's input even inside the bf16 autocast region, building a 2x-size copy that stays live through backward although F.linear autocasts it straight back to bf16; the fix makes LLMAlgorithm._amp_ctx suppress that input cast for the duration of autocast.
import contextlib

import torch
import torch.nn as nn


class LoraLinear(nn.Module):
    def __init__(self, base_layer, r=8, lora_alpha=16):
        super().__init__()
        self.base_layer = base_layer
        in_f, out_f = base_layer.in_features, base_layer.out_features
        self.lora_A = nn.ModuleDict({"default": nn.Linear(in_f, r, bias=False)})
        self.lora_B = nn.ModuleDict({"default": nn.Linear(r, out_f, bias=False)})
        self.lora_dropout = nn.ModuleDict({"default": nn.Identity()})
        self.scaling = {"default": lora_alpha / r}
        self.active_adapters = ["default"]
        self.cast_input_dtype_enabled = True

    def _cast_input_dtype(self, x, dtype):
        if (not self.cast_input_dtype_enabled) or x.dtype == dtype:
            return x
        return x.to(dtype=dtype)  # want: C

    def forward(self, x):
        result = self.base_layer(x)
        torch_result_dtype = result.dtype
        for active_adapter in self.active_adapters:
            lora_A = self.lora_A[active_adapter]
            lora_B = self.lora_B[active_adapter]
            dropout = self.lora_dropout[active_adapter]
            scaling = self.scaling[active_adapter]
            x = self._cast_input_dtype(x, lora_A.weight.dtype)
            result = result + lora_B(lora_A(dropout(x))) * scaling
        return result.to(torch_result_dtype)


@contextlib.contextmanager
def disable_input_dtype_casting(model):
    layers = [m for m in model.modules() if isinstance(m, LoraLinear)]
    for m in layers:
        m.cast_input_dtype_enabled = False
    try:
        yield
    finally:
        for m in layers:
            m.cast_input_dtype_enabled = True


class LLMAlgorithm:
    def __init__(self, actor, device):
        self.actor = actor
        self.device = torch.device(device)

    def _amp_ctx(self):
        return torch.autocast(device_type=self.device.type, dtype=torch.bfloat16)

    def forward_actor(self, x):
        with self._amp_ctx():
            return self.actor(x)


class LLMAlgorithmFixed(LLMAlgorithm):
    @contextlib.contextmanager
    def _amp_ctx(self):
        # Under bf16 autocast F.linear casts both operands to bf16 anyway, so the
        # fp32 copy of every LoRA input buys nothing.
        with torch.autocast(device_type=self.device.type, dtype=torch.bfloat16):
            with disable_input_dtype_casting(self.actor):
                yield


if __name__ == "__main__":
    torch.manual_seed(0)
    actor = nn.Sequential(
        LoraLinear(nn.Linear(256, 256).to(torch.bfloat16)),
        nn.GELU(),
        LoraLinear(nn.Linear(256, 256).to(torch.bfloat16)),
    )
    seen = []
    for m in actor.modules():
        if isinstance(m, LoraLinear):
            m.lora_A["default"].register_forward_pre_hook(lambda mod, args: seen.append(args[0].dtype))

    x = torch.randn(8, 64, 256, dtype=torch.bfloat16)
    seen.clear()
    out_b = LLMAlgorithm(actor, "cpu").forward_actor(x)
    buggy_seen = list(seen)
    seen.clear()
    out_f = LLMAlgorithmFixed(actor, "cpu").forward_actor(x)
    fixed_seen = list(seen)
    print("LoRA input dtypes buggy:", buggy_seen, "fixed:", fixed_seen)
    assert all(d == torch.float32 for d in buggy_seen) and all(d == torch.bfloat16 for d in fixed_seen)
    assert torch.equal(out_b, out_f)
