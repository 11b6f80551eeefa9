# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/36659 — SyncBatchNorm's autograd Function built its per-rank element count on the host and uploaded it (`torch.Tensor([n]).to(input.device)`), then passed the all-gathered counts to `batch_norm_gather_stats_with_counts` as `count_all.view(-1).long().tolist()`, a device-to-host copy that blocked the host thread in every forward (issue #36452); the fix fills the count on device and passes the gathered counts as a CUDA tensor.
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.autograd.function import Function


def _bn_stats(input, eps):
    if input.is_cuda:
        return torch.batch_norm_stats(input, eps)
    dims = [0] + list(range(2, input.dim()))
    return input.mean(dims), torch.rsqrt(input.var(dims, unbiased=False) + eps)


def _bn_gather_stats_with_counts(input, mean_all, invstd_all, running_mean, running_var, momentum, eps, counts):
    if input.is_cuda:
        return torch.batch_norm_gather_stats_with_counts(
            input, mean_all, invstd_all, running_mean, running_var, momentum, eps, counts)
    counts = torch.as_tensor(counts, dtype=mean_all.dtype).view(-1, 1)  # CPU reference path only
    total = counts.sum()
    mean = (mean_all * counts).sum(0) / total
    var = ((1.0 / invstd_all ** 2 - eps + (mean_all - mean) ** 2) * counts).sum(0) / total
    running_mean.mul_(1 - momentum).add_(mean * momentum)
    running_var.mul_(1 - momentum).add_(var * total / (total - 1) * momentum)
    return mean, torch.rsqrt(var + eps)


def _bn_elemt(input, weight, bias, mean, invstd):
    shape = [1, -1] + [1] * (input.dim() - 2)
    return (input - mean.view(shape)) * invstd.view(shape) * weight.view(shape) + bias.view(shape)


class SyncBatchNorm(Function):
    @staticmethod
    def forward(self, input, weight, bias, running_mean, running_var, eps, momentum, process_group, world_size):
        input = input.contiguous()

        count = torch.Tensor([input.numel() // input.size(1)]).to(input.device)  # maybe: D (pageable host-to-device upload of a host scalar; blocks the host but is not a device read)

        # calculate mean/invstd for input.
        mean, invstd = _bn_stats(input, eps)

        count_all = torch.empty(world_size, 1, dtype=count.dtype, device=count.device)
        mean_all = torch.empty(world_size, mean.size(0), dtype=mean.dtype, device=mean.device)
        invstd_all = torch.empty(world_size, invstd.size(0), dtype=invstd.dtype, device=invstd.device)

        count_l = list(count_all.unbind(0))
        mean_l = list(mean_all.unbind(0))
        invstd_l = list(invstd_all.unbind(0))

        # using all_gather instead of all reduce so we can calculate count/mean/var in one go
        count_all_reduce = dist.all_gather(count_l, count, process_group, async_op=True)
        mean_all_reduce = dist.all_gather(mean_l, mean, process_group, async_op=True)
        invstd_all_reduce = dist.all_gather(invstd_l, invstd, process_group, async_op=True)

        # wait on the async communication to finish
        count_all_reduce.wait()
        mean_all_reduce.wait()
        invstd_all_reduce.wait()

        # calculate global mean & invstd
        mean, invstd = _bn_gather_stats_with_counts(
            input, mean_all, invstd_all, running_mean, running_var, momentum, eps,
            count_all.view(-1).long().tolist()  # want: D
        )

        self.save_for_backward(input, weight, mean, invstd, count_all)
        self.process_group = process_group
        return _bn_elemt(input, weight, bias, mean, invstd)


class SyncBatchNormFixed(Function):
    @staticmethod
    def forward(self, input, weight, bias, running_mean, running_var, eps, momentum, process_group, world_size):
        input = input.contiguous()

        count = torch.empty(1, dtype=running_mean.dtype, device=input.device).fill_(input.numel() // input.size(1))

        mean, invstd = _bn_stats(input, eps)

        count_l = [torch.empty_like(count) for _ in range(world_size)]
        mean_l = [torch.empty_like(mean) for _ in range(world_size)]
        invstd_l = [torch.empty_like(invstd) for _ in range(world_size)]
        count_all_reduce = dist.all_gather(count_l, count, process_group, async_op=True)
        mean_all_reduce = dist.all_gather(mean_l, mean, process_group, async_op=True)
        invstd_all_reduce = dist.all_gather(invstd_l, invstd, process_group, async_op=True)
        count_all_reduce.wait()
        mean_all_reduce.wait()
        invstd_all_reduce.wait()
        count_all = torch.stack(count_l)
        mean_all = torch.stack(mean_l)
        invstd_all = torch.stack(invstd_l)

        # counts stay on the device: no DtoH copy before the gather-stats kernel
        mean, invstd = _bn_gather_stats_with_counts(
            input, mean_all, invstd_all, running_mean, running_var, momentum, eps, count_all.view(-1)
        )

        self.save_for_backward(input, weight, mean, invstd, count_all)
        self.process_group = process_group
        return _bn_elemt(input, weight, bias, mean, invstd)


if __name__ == "__main__":
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    torch.manual_seed(0)
    x = torch.randn(4, 3, 5, 5)
    w, b = torch.rand(3) + 0.5, torch.randn(3)
    ref_rm, ref_rv = torch.zeros(3), torch.ones(3)
    ref = F.batch_norm(x, ref_rm, ref_rv, w, b, training=True, momentum=0.1, eps=1e-5)
    for fn in (SyncBatchNorm, SyncBatchNormFixed):
        rm, rv = torch.zeros(3), torch.ones(3)
        out = fn.apply(x, w, b, rm, rv, 1e-5, 0.1, dist.group.WORLD, 1)
        assert torch.allclose(out, ref, atol=1e-4) and torch.allclose(rv, ref_rv, atol=1e-4), fn.__name__
    print("both SyncBatchNorm variants match F.batch_norm")
    dist.destroy_process_group()
