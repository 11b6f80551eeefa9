# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/22673 — GemmaRMSNorm.forward_hip and forward_with_allreduce_fusion passed `self.weight.data + 1.0` to the plain RMSNorm kernels, allocating a fresh (1 + w) weight tensor in every layer on every forward; the fix reuses a `gemma_weight` computed once after weight loading.
import torch
from torch import nn


def rms_norm(x, weight, eps):
    # stand-in for the AITER / sgl-kernel rmsnorm
    var = x.float().pow(2).mean(-1, keepdim=True)
    return (x.float() * torch.rsqrt(var + eps)).to(x.dtype) * weight


def fused_add_rms_norm(x, residual, weight, eps):
    # stand-in for the in-place fused kernel
    residual.add_(x)
    x.copy_(rms_norm(residual, weight, eps))


def allreduce_residual_rmsnorm(x, residual, weight, eps):
    # stand-in for the flashinfer allreduce + residual + rmsnorm fusion (single rank)
    residual = residual + x
    return rms_norm(residual, weight, eps), residual


class GemmaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(hidden_size))
        self.variance_epsilon = eps

    def forward_hip(self, x, residual=None):
        if residual is not None:
            fused_add_rms_norm(x, residual, self.weight.data + 1.0, self.variance_epsilon)  # want: C
            return x, residual
        return rms_norm(x, self.weight.data + 1.0, self.variance_epsilon)  # want: C

    def forward_with_allreduce_fusion(self, x, residual=None):
        if residual is not None:
            return allreduce_residual_rmsnorm(x, residual, self.weight + 1.0, self.variance_epsilon)  # want: C
        return self.forward_hip(x)


class GemmaRMSNormFixed(GemmaRMSNorm):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__(hidden_size, eps)
        self.gemma_weight = None

    def process_weights_after_loading(self):
        self.gemma_weight = self.weight.data + 1.0

    def forward_hip(self, x, residual=None):
        if residual is not None:
            fused_add_rms_norm(x, residual, self.gemma_weight, self.variance_epsilon)
            return x, residual
        return rms_norm(x, self.gemma_weight, self.variance_epsilon)

    def forward_with_allreduce_fusion(self, x, residual=None):
        if residual is not None:
            return allreduce_residual_rmsnorm(x, residual, self.gemma_weight, self.variance_epsilon)
        return self.forward_hip(x)


if __name__ == "__main__":
    torch.manual_seed(0)
    layers_b = [GemmaRMSNorm(256) for _ in range(4)]
    layers_f = [GemmaRMSNormFixed(256) for _ in range(4)]
    for lb, lf in zip(layers_b, layers_f):
        with torch.no_grad():
            lb.weight.normal_()
        lf.load_state_dict(lb.state_dict())
        lf.process_weights_after_loading()
    x = torch.randn(8, 256)
    hb = hf = x
    rb, rf = torch.zeros_like(x), torch.zeros_like(x)
    with torch.no_grad():
        for lb, lf in zip(layers_b, layers_f):
            hb, rb = lb.forward_with_allreduce_fusion(hb, rb)
            hf, rf = lf.forward_with_allreduce_fusion(hf, rf)
        torch.testing.assert_close(hb, hf)
        torch.testing.assert_close(layers_b[0].forward_hip(x.clone()), layers_f[0].forward_hip(x.clone()))
    w = layers_b[0].weight
    print("buggy: allocates", w.numel() * w.element_size(), "bytes of (w + 1) per layer per forward")
    ptrs = {layers_f[0].gemma_weight.data_ptr() for _ in range(3)}
    print("fixed: one cached gemma_weight per layer:", len(ptrs) == 1)
