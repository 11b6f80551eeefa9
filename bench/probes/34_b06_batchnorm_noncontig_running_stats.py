# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/38040 — the cuDNN batch_norm dispatch passed `running_mean.contiguous()` / `running_var.contiguous()` to a kernel that updates the running stats in place; for non-contiguous buffers that is a fresh copy and the updates were silently discarded (issue #33867). The fix copies the updated stats back into the caller's buffers.
import torch
import torch.nn as nn


def cudnn_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    # stand-in for the backend kernel: normalizes and updates running stats *in place*
    dims = [0] + list(range(2, input.dim()))
    if training:
        mean = input.mean(dims)
        var = input.var(dims, unbiased=False)
        n = input.numel() / input.size(1)
        with torch.no_grad():
            running_mean.mul_(1 - momentum).add_(mean, alpha=momentum)
            running_var.mul_(1 - momentum).add_(var * n / (n - 1), alpha=momentum)
    else:
        mean, var = running_mean, running_var
    shape = [1, -1] + [1] * (input.dim() - 2)
    out = (input - mean.view(shape)) / torch.sqrt(var.view(shape) + eps)
    return out * weight.view(shape) + bias.view(shape)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, use_cudnn=True):
    if use_cudnn and eps >= 1e-5:
        return cudnn_batch_norm(
            input.contiguous(), weight.contiguous(), bias.contiguous(),
            running_mean.contiguous() if running_mean is not None else running_mean,  # want: B
            running_var.contiguous() if running_var is not None else running_var,  # want: B
            training, momentum, eps,
        )
    raise NotImplementedError


def batch_norm_fixed(input, weight, bias, running_mean, running_var, training, momentum, eps, use_cudnn=True):
    if use_cudnn and eps >= 1e-5:
        rm = running_mean.contiguous() if running_mean is not None else running_mean
        rv = running_var.contiguous() if running_var is not None else running_var
        out = cudnn_batch_norm(input.contiguous(), weight.contiguous(), bias.contiguous(), rm, rv, training, momentum, eps)
        # Not all implementations of batch norm do inplace modifications of mean and var
        if training and running_mean is not None:
            running_mean.copy_(rm)
            running_var.copy_(rv)
        return out
    raise NotImplementedError


class InterleavedStatsBatchNorm(nn.Module):
    """BatchNorm whose running mean/var live interleaved in one (C, 2) buffer -> strided views."""

    bn_fn = staticmethod(batch_norm)

    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        stats = torch.zeros(num_features, 2)
        stats[:, 1] = 1.0
        self.register_buffer("stats", stats)
        self.momentum, self.eps = momentum, eps

    def forward(self, x):
        running_mean, running_var = self.stats[:, 0], self.stats[:, 1]
        return self.bn_fn(x, self.weight, self.bias, running_mean, running_var, self.training, self.momentum, self.eps)


class InterleavedStatsBatchNormFixed(InterleavedStatsBatchNorm):
    bn_fn = staticmethod(batch_norm_fixed)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(16, 8, 4, 4) * 3 + 2
    for cls in (InterleavedStatsBatchNorm, InterleavedStatsBatchNormFixed):
        bn = cls(8).train()
        for _ in range(5):
            bn(x)
        print(f"{cls.__name__:32s} running_mean[:3] = {bn.stats[:3, 0].tolist()}")
    bn = InterleavedStatsBatchNorm(8).train()
    bn(x)
    assert bn.stats[:, 0].abs().sum() == 0
