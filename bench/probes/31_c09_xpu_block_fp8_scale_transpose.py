# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/48334 — XPUFp8BlockScaledMMKernel.apply_block_scaled_mm transposed the block weight scales from checkpoint layout [N/128, K/128] to oneDNN layout with `Bs.t().contiguous()` on every linear call; the fix restores process_weights_after_loading to store `weight_scale_inv` already transposed once at load time and passes it straight through.
import torch
from torch import nn


def onednn_block_scaled_mm(a, b, scale_a, scale_b, block_size, out_dtype):
    # stand-in for torch._scaled_mm on XPU: b is [K, N] (column-major view), scale_b must be row-major [K/bs, N/bs]
    assert scale_b.is_contiguous(), "oneDNN needs row-major contiguous scales"
    K, N = b.shape
    assert scale_b.shape == (K // block_size, N // block_size)
    a_deq = (a.unflatten(-1, (-1, block_size)) * scale_a.unsqueeze(-1)).flatten(-2)
    out = a_deq @ b
    col_scale = scale_b.amax(dim=0)  # coarse stand-in for the per-block weight dequant
    out = (out.unflatten(-1, (-1, block_size)) * col_scale.unsqueeze(-1)).flatten(-2)
    return out.to(out_dtype)


class XPUFp8BlockScaledMMKernel:
    def __init__(self, block_size=128):
        self.block_size = block_size

    def process_weights_after_loading(self, layer):
        pass

    def apply_block_scaled_mm(self, A, B, As, Bs):
        return onednn_block_scaled_mm(
            A,
            B.t(),
            scale_a=As,
            scale_b=Bs.t().contiguous(),  # want: C
            block_size=self.block_size,
            out_dtype=torch.float32,
        )

    def apply_weights(self, layer, x, As):
        return self.apply_block_scaled_mm(x, layer.weight, As, layer.weight_scale_inv)


class XPUFp8BlockScaledMMKernelFixed(XPUFp8BlockScaledMMKernel):
    def process_weights_after_loading(self, layer):
        # checkpoint layout [N/128, K/128] -> oneDNN layout [K/128, N/128], once
        layer.weight_scale_inv = nn.Parameter(layer.weight_scale_inv.data.t().contiguous(), requires_grad=False)

    def apply_block_scaled_mm(self, A, B, As, Bs):
        return onednn_block_scaled_mm(
            A,
            B.t(),
            scale_a=As,
            scale_b=Bs,
            block_size=self.block_size,
            out_dtype=torch.float32,
        )


class Fp8LinearLayer(nn.Module):
    def __init__(self, in_features, out_features, block_size=128):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features), requires_grad=False)
        self.weight_scale_inv = nn.Parameter(
            torch.rand(out_features // block_size, in_features // block_size) + 0.5, requires_grad=False
        )


if __name__ == "__main__":
    torch.manual_seed(0)
    layer_b, layer_f = Fp8LinearLayer(512, 1024), Fp8LinearLayer(512, 1024)
    layer_f.load_state_dict(layer_b.state_dict())
    kb, kf = XPUFp8BlockScaledMMKernel(), XPUFp8BlockScaledMMKernelFixed()
    kb.process_weights_after_loading(layer_b)
    kf.process_weights_after_loading(layer_f)
    x = torch.randn(8, 512)
    As = torch.rand(8, 512 // 128) + 0.5
    for _ in range(3):
        torch.testing.assert_close(kb.apply_weights(layer_b, x, As), kf.apply_weights(layer_f, x, As))
    per_call = layer_b.weight_scale_inv.t().contiguous()
    print("buggy: new scale tensor per call:", per_call.data_ptr() != layer_b.weight_scale_inv.data_ptr())
    print("fixed: scales already in oneDNN layout:", layer_f.weight_scale_inv.is_contiguous())
