# source: vllm-project/vllm-ascend https://github.com/vllm-project/vllm-ascend/pull/15666 — AscendUnquantizedLinearMethod.process_weights_after_loading built a precast fp32 copy of the weight for DeepSeek V4 and stored it with `layer.weight_fp32 = new_fp32`. In graph mode the captured ACL graph holds the weight tensor by reference, so when RL weight updates call process_weights_after_loading again the new values land in a fresh tensor and the graph keeps using the stale one. The fix copies into the existing `weight_fp32` with `copy_` when one already exists and only creates/assigns otherwise.
import torch
from torch import nn


def maybe_trans_nz(weight: torch.Tensor) -> torch.Tensor:
    return weight


class UnquantizedLinearMethod:
    def create_weights(self, layer, input_size, output_size, params_dtype):
        layer.register_parameter(
            "weight", nn.Parameter(torch.empty(output_size, input_size, dtype=params_dtype), requires_grad=False)
        )

    def process_weights_after_loading(self, layer):
        pass

    def apply(self, layer, x):
        return x @ layer.weight.t()


class AscendUnquantizedLinearMethod(UnquantizedLinearMethod):
    def process_weights_after_loading(self, layer):
        super().process_weights_after_loading(layer)
        if getattr(layer, "precast_fp32_weight", False):
            keep_nd_weight = getattr(layer, "keep_nd_weight", True)
            weight_fp32 = layer.weight.data.to(torch.float32)
            new_fp32 = weight_fp32 if keep_nd_weight else maybe_trans_nz(weight_fp32)
            layer.weight_fp32 = new_fp32  # want: B

    def apply(self, layer, x):
        if getattr(layer, "precast_fp32_weight", False):
            return (x.float() @ layer.weight_fp32.t()).to(x.dtype)
        return super().apply(layer, x)


class AscendUnquantizedLinearMethodFixed(AscendUnquantizedLinearMethod):
    def process_weights_after_loading(self, layer):
        UnquantizedLinearMethod.process_weights_after_loading(self, layer)
        if getattr(layer, "precast_fp32_weight", False):
            keep_nd_weight = getattr(layer, "keep_nd_weight", True)
            weight_fp32 = layer.weight.data.to(torch.float32)
            new_fp32 = weight_fp32 if keep_nd_weight else maybe_trans_nz(weight_fp32)
            old_fp32 = getattr(layer, "weight_fp32", None)
            if old_fp32 is not None and old_fp32.shape == new_fp32.shape and old_fp32.dtype == new_fp32.dtype:
                old_fp32.copy_(new_fp32)
            else:
                layer.weight_fp32 = new_fp32


class LinearBase(nn.Module):
    def __init__(self, input_size, output_size, quant_method):
        super().__init__()
        self.quant_method = quant_method
        self.precast_fp32_weight = True
        self.quant_method.create_weights(self, input_size, output_size, torch.bfloat16)

    def forward(self, x):
        return self.quant_method.apply(self, x)


def update_weights(layer, new_weight):
    with torch.no_grad():
        layer.weight.copy_(new_weight)
    layer.quant_method.process_weights_after_loading(layer)


if __name__ == "__main__":
    for method_cls, expect_stale in ((AscendUnquantizedLinearMethod, True), (AscendUnquantizedLinearMethodFixed, False)):
        torch.manual_seed(0)
        layer = LinearBase(8, 4, method_cls())
        update_weights(layer, torch.randn(4, 8, dtype=torch.bfloat16))
        graph_weight = layer.weight_fp32  # what the captured graph reads
        snapshot = graph_weight.clone()
        update_weights(layer, torch.randn(4, 8, dtype=torch.bfloat16))
        assert not torch.equal(layer.weight_fp32, snapshot)
        assert torch.equal(graph_weight, snapshot) == expect_stale
        assert torch.equal(graph_weight, layer.weight.float()) == (not expect_stale)
    print("ok")
