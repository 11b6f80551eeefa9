# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/34305 — The storage-only WeightOnlyFP8Linear re-materialised the full weight on every forward (`weight.to(bf16) * scale`, then F.linear), a full-matrix cast copy per linear per call; the fix dequantises once on the first device-resident forward and replaces the FP8 parameter, so later forwards run a plain compute-dtype GEMM.
import torch
import torch.nn as nn
import torch.nn.functional as F

FP8_WEIGHT_DTYPE = torch.float8_e4m3fn


def dequantize_rowwise_fp8_weight(weight, weight_scale, dtype):
    if weight.ndim != 2:
        raise ValueError(f"FP8 linear weight must be 2-D, got shape {weight.shape}")
    if weight_scale.ndim != 1 or weight_scale.shape[0] != weight.shape[0]:
        raise ValueError(
            "FP8 row-wise scale must have shape (out_features,), "
            f"got weight={tuple(weight.shape)} scale={tuple(weight_scale.shape)}"
        )
    return weight.to(dtype) * weight_scale.to(dtype).unsqueeze(1)


class WeightOnlyFP8Linear(nn.Module):
    """Storage-only e4m3 FP8 linear with row-wise dequantization before matmul."""

    def __init__(self, in_features, out_features, bias=True, compute_dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.compute_dtype = compute_dtype
        self.weight = nn.Parameter(
            torch.empty(out_features, in_features, dtype=FP8_WEIGHT_DTYPE),
            requires_grad=False,
        )
        self.weight_scale = nn.Parameter(torch.empty(out_features, dtype=torch.float32), requires_grad=False)
        if bias:
            self.bias = nn.Parameter(
                torch.empty(out_features, dtype=compute_dtype or torch.get_default_dtype()),
                requires_grad=False,
            )
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        compute_dtype = self.compute_dtype or x.dtype
        weight = dequantize_rowwise_fp8_weight(self.weight, self.weight_scale, compute_dtype)  # want: C
        bias = self.bias.to(compute_dtype) if self.bias is not None else None
        return F.linear(x.to(compute_dtype), weight, bias)


class WeightOnlyFP8LinearFixed(WeightOnlyFP8Linear):
    def __init__(self, in_features, out_features, bias=True, compute_dtype=None):
        super().__init__(in_features, out_features, bias=bias, compute_dtype=compute_dtype)
        self._weight_dequantized = False

    def _dequantize_weight_once(self, compute_dtype):
        if self._weight_dequantized:
            return
        weight = dequantize_rowwise_fp8_weight(self.weight, self.weight_scale, compute_dtype)
        self.weight = nn.Parameter(weight, requires_grad=False)
        self._weight_dequantized = True

    def forward(self, x):
        compute_dtype = self.compute_dtype or x.dtype
        self._dequantize_weight_once(compute_dtype)
        bias = self.bias.to(compute_dtype) if self.bias is not None else None
        return F.linear(x.to(compute_dtype), self.weight, bias)


if __name__ == "__main__":
    torch.manual_seed(0)
    calls = []
    _orig = dequantize_rowwise_fp8_weight

    def dequantize_rowwise_fp8_weight(weight, weight_scale, dtype):
        calls.append(weight.numel())
        return _orig(weight, weight_scale, dtype)

    w = torch.randn(256, 128)
    scale = w.abs().amax(dim=1) / 448.0
    layers = []
    for cls in (WeightOnlyFP8Linear, WeightOnlyFP8LinearFixed):
        layer = cls(128, 256, bias=True, compute_dtype=torch.bfloat16)
        with torch.no_grad():
            layer.weight.copy_((w / scale[:, None]).to(FP8_WEIGHT_DTYPE))
            layer.weight_scale.copy_(scale)
            layer.bias.zero_()
        layers.append(layer)

    x = torch.randn(4, 128, dtype=torch.bfloat16)
    outs = []
    for layer in layers:
        calls.clear()
        with torch.no_grad():
            for _ in range(5):
                y = layer(x)
        outs.append(y)
        print(type(layer).__name__, "dequantised full weight", len(calls), "times over 5 forwards")
    assert torch.equal(outs[0], outs[1])
