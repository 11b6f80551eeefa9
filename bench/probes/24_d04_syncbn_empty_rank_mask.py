# source: pytorch/pytorch issue #78549 (regression from PR #74944; the fix skips the masking while a CUDA graph is capturing, FIXME issue #78656) — SyncBatchNorm's autograd Function forward dropped the stats of ranks with empty input via `count_all = count_all[mask]`, a boolean-mask index whose output size depends on device data: a host sync every training step, which also broke CUDA-graph capture
import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import Function


def _batch_norm_stats(x, eps):
    """CPU stand-in for torch.batch_norm_stats (CUDA-only): per-channel mean and 1/std."""
    dims = [0] + list(range(2, x.dim()))
    mean = x.mean(dims)
    var = x.var(dims, unbiased=False)
    return mean, torch.rsqrt(var + eps)


def _gather_stats_with_counts(mean_all, invstd_all, count_all, running_mean, running_var, momentum, eps):
    """CPU stand-in for torch.batch_norm_gather_stats_with_counts."""
    total = count_all.sum()
    mean = (mean_all * count_all[:, None]).sum(0) / total
    var_all = invstd_all.pow(-2) - eps
    var = ((var_all + (mean_all - mean).pow(2)) * count_all[:, None]).sum(0) / total
    if running_mean is not None:
        running_mean.mul_(1 - momentum).add_(mean, alpha=momentum)
        running_var.mul_(1 - momentum).add_(var * total / (total - 1), alpha=momentum)
    return mean, torch.rsqrt(var + eps)


class FakeGroup:
    """Single-process stand-in for a process group: `peers` are the other ranks' packed stats."""

    def __init__(self, peers):
        self.peers = peers

    def all_gather(self, combined):
        return torch.stack([combined] + [p.to(combined.dtype) for p in self.peers])


class SyncBatchNormFn(Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum, process_group):
        input = input.contiguous()
        num_channels = input.shape[1]
        if input.numel() > 0:
            mean, invstd = _batch_norm_stats(input, eps)
            count = torch.full((1,), input.numel() // input.size(1), dtype=mean.dtype, device=mean.device)
            # C, C, 1 -> (2C + 1)
            combined = torch.cat([mean, invstd, count], dim=0)
        else:
            # empty input still joins the collective, with zero count, and is filtered out below
            combined = torch.zeros(2 * num_channels + 1, dtype=input.dtype, device=input.device)

        combined = process_group.all_gather(combined)  # world_size x (2C + 1)
        mean_all, invstd_all, count_all = torch.split(combined, num_channels, dim=1)

        # remove stats from empty inputs
        mask = count_all.squeeze(-1) >= 1
        count_all = count_all[mask]  # want: D
        mean_all = mean_all[mask]  # want: D
        invstd_all = invstd_all[mask]  # want: D

        mean, invstd = _gather_stats_with_counts(mean_all, invstd_all, count_all.view(-1), running_mean,
                                                 running_var, momentum, eps)
        ctx.save_for_backward(input, weight, mean, invstd)
        shape = [1, -1] + [1] * (input.dim() - 2)
        out = (input - mean.view(shape)) * invstd.view(shape)
        return out * weight.view(shape) + bias.view(shape)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, mean, invstd = ctx.saved_tensors
        shape = [1, -1] + [1] * (input.dim() - 2)
        dims = [0] + list(range(2, input.dim()))
        xhat = (input - mean.view(shape)) * invstd.view(shape)
        grad_weight = (grad_output * xhat).sum(dims)
        grad_bias = grad_output.sum(dims)
        n = input.numel() // input.size(1)
        g = grad_output * weight.view(shape)
        grad_input = invstd.view(shape) / n * (n * g - g.sum(dims, keepdim=True) - xhat * (g * xhat).sum(dims, keepdim=True))
        return grad_input, grad_weight, grad_bias, None, None, None, None, None


def gather_stats_masked_free(mean_all, invstd_all, count_all, eps):
    """Sync-free variant: zero-count rows already contribute nothing to count-weighted sums."""
    c = count_all.view(-1)
    safe_invstd = torch.where(c[:, None] > 0, invstd_all, torch.ones_like(invstd_all))
    return _gather_stats_with_counts(mean_all, safe_invstd, c, None, None, 0.0, eps)


class SyncBatchNorm(nn.BatchNorm2d):
    def __init__(self, num_features, process_group):
        super().__init__(num_features)
        self.process_group = process_group

    def forward(self, x):
        if not self.training:
            return super().forward(x)
        return SyncBatchNormFn.apply(x, self.weight, self.bias, self.running_mean, self.running_var, self.eps,
                                     self.momentum, self.process_group)


if __name__ == "__main__":
    torch.manual_seed(0)
    c = 3
    other = torch.randn(4, c, 5, 5) + 2.0
    m, i = _batch_norm_stats(other, 1e-5)
    peer_full = torch.cat([m, i, torch.tensor([4.0 * 25])])
    peer_empty = torch.zeros(2 * c + 1)  # a rank whose micro-batch was empty this step
    bn = SyncBatchNorm(c, FakeGroup([peer_full, peer_empty]))
    net = nn.Sequential(nn.Conv2d(c, c, 1), bn)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for step in range(3):
        x = torch.randn(2, c, 5, 5)
        loss = net(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    ref = F.batch_norm(torch.cat([x.new_zeros(0, c, 5, 5), other]), None, None, training=True)
    both = torch.cat([net[0](x).detach(), other])
    mean_all = torch.stack([_batch_norm_stats(net[0](x).detach(), 1e-5)[0], m, torch.zeros(c)])
    inv_all = torch.stack([_batch_norm_stats(net[0](x).detach(), 1e-5)[1], i, torch.zeros(c)])
    counts = torch.tensor([[50.0], [100.0], [0.0]])
    g_mean, _ = gather_stats_masked_free(mean_all, inv_all, counts, 1e-5)
    assert torch.allclose(g_mean, both.mean((0, 2, 3)), atol=1e-5) and ref.shape == other.shape
    print("ok: masked indexing and the count-weighted sums agree; only the former waits on the device")
