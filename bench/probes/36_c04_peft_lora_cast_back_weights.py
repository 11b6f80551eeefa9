# source: huggingface/peft https://github.com/huggingface/peft/pull/3396 — LoRA `Linear.get_delta_weight` upcast bf16/fp16 adapter weights to fp32 on CPU for the matmul and then "cast back the weights" with `self.lora_A[adapter].weight.data = weight_A.to(dtype)`; the originals were never modified, so this made a float32 copy and then another half-precision copy and swapped it in as the parameter storage on every merge/unmerge. The fix removed the cast-back lines.
import torch
from torch import nn


def transpose(weight, fan_in_fan_out):
    return weight.T if fan_in_fan_out else weight


class LoraLinear(nn.Module):
    def __init__(self, base_layer, r=4, lora_alpha=8, fan_in_fan_out=False):
        super().__init__()
        self.base_layer = base_layer
        self.fan_in_fan_out = fan_in_fan_out
        self.lora_A = nn.ModuleDict({"default": nn.Linear(base_layer.in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({"default": nn.Linear(r, base_layer.out_features, bias=False)})
        nn.init.normal_(self.lora_B["default"].weight)
        self.scaling = {"default": lora_alpha / r}

    def get_delta_weight(self, adapter):
        device = self.lora_B[adapter].weight.device
        dtype = self.lora_B[adapter].weight.dtype
        # some CPUs have slow bf16/fp16 matmuls, so compute the merge in float32
        cast_to_fp32 = device.type == "cpu" and (dtype == torch.float16 or dtype == torch.bfloat16)
        weight_A = self.lora_A[adapter].weight
        weight_B = self.lora_B[adapter].weight
        if cast_to_fp32:
            weight_A = weight_A.float()
            weight_B = weight_B.float()
        output_tensor = transpose(weight_B @ weight_A, self.fan_in_fan_out) * self.scaling[adapter]
        if cast_to_fp32:
            output_tensor = output_tensor.to(dtype=dtype)
            # cast back the weights
            self.lora_A[adapter].weight.data = weight_A.to(dtype)  # want: C
            self.lora_B[adapter].weight.data = weight_B.to(dtype)  # want: C
        return output_tensor

    def get_delta_weight_fixed(self, adapter):
        device = self.lora_B[adapter].weight.device
        dtype = self.lora_B[adapter].weight.dtype
        cast_to_fp32 = device.type == "cpu" and (dtype == torch.float16 or dtype == torch.bfloat16)
        weight_A = self.lora_A[adapter].weight
        weight_B = self.lora_B[adapter].weight
        if cast_to_fp32:
            weight_A = weight_A.float()
            weight_B = weight_B.float()
        output_tensor = transpose(weight_B @ weight_A, self.fan_in_fan_out) * self.scaling[adapter]
        if cast_to_fp32:
            output_tensor = output_tensor.to(dtype=dtype)
        return output_tensor

    def merge(self, use_fixed=False):
        base_layer = self.base_layer
        get = self.get_delta_weight_fixed if use_fixed else self.get_delta_weight
        with torch.no_grad():
            base_layer.weight.data += get("default")


if __name__ == "__main__":
    torch.manual_seed(0)
    bug = LoraLinear(nn.Linear(32, 48, bias=False)).to(torch.bfloat16)
    fix = LoraLinear(nn.Linear(32, 48, bias=False)).to(torch.bfloat16)
    fix.load_state_dict(bug.state_dict())
    ptr_bug = bug.lora_A["default"].weight.data_ptr()
    ptr_fix = fix.lora_A["default"].weight.data_ptr()
    bug.merge()
    fix.merge(use_fixed=True)
    assert torch.equal(bug.base_layer.weight, fix.base_layer.weight)
    assert torch.equal(bug.lora_A["default"].weight, fix.lora_A["default"].weight)
    assert bug.lora_A["default"].weight.data_ptr() != ptr_bug  # parameter storage replaced by a copy
    assert fix.lora_A["default"].weight.data_ptr() == ptr_fix
    print("buggy merge re-allocated the LoRA A/B parameter storage; fixed merge left it alone")
