# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/pull/5115 — ZeRO's overflow check called `_has_inf_or_nan` per gradient, which did `float(x.float().sum())` (one device->host sync per tensor inside the loop); the fix returns an on-device inf/nan max and accumulates it into a device counter, syncing once.
import torch


class _Accelerator:
    def current_device_name(self):
        return "cpu"

    def ByteTensor(self, data):
        return torch.tensor(data, dtype=torch.uint8, device=self.current_device_name())


_accel = _Accelerator()


def get_accelerator():
    return _accel


class _Dist:
    class ReduceOp:
        MAX = "max"

    def all_reduce(self, tensor, op=None, group=None):
        return tensor


dist = _Dist()


class DeepSpeedZeroOptimizer:
    def __init__(self, bit16_groups, cpu_offload=False):
        self.bit16_groups = bit16_groups
        self.averaged_gradients = {i: [p.grad for p in g] for i, g in enumerate(bit16_groups)}
        self.cpu_offload = cpu_offload
        self.local_overflow = False
        self.dp_process_group = None
        self.overflow = False
        self.loss_scale = 1024.0

    def _model_parallel_all_reduce(self, tensor, op):
        dist.all_reduce(tensor, op=op)

    def _check_overflow(self, partition_gradients=True):
        self.overflow = self.has_overflow(partition_gradients)

    # `params` is a list / generator of torch.Variable
    def has_overflow_serial(self, params, is_grad_list=False):
        for p in params:
            if p.grad is not None and self._has_inf_or_nan(p.grad.data):
                return True

        return False

    def has_overflow_partitioned_grads_serial(self):
        for i in range(len(self.bit16_groups)):
            for j, grad in enumerate(self.averaged_gradients[i]):
                if grad is not None and self._has_inf_or_nan(grad.data, j):
                    return True
        return False

    def has_overflow(self, partition_gradients=True):
        if partition_gradients:
            overflow = self.local_overflow if self.cpu_offload else self.has_overflow_partitioned_grads_serial()
            overflow_gpu = get_accelerator().ByteTensor([overflow])
            dist.all_reduce(overflow_gpu, op=dist.ReduceOp.MAX, group=self.dp_process_group)

        else:
            params = []
            for group in self.bit16_groups:
                for param in group:
                    params.append(param)

            overflow = self.has_overflow_serial(params, is_grad_list=partition_gradients)
            overflow_gpu = get_accelerator().ByteTensor([overflow])

        self._model_parallel_all_reduce(tensor=overflow_gpu, op=dist.ReduceOp.MAX)

        overflow = overflow_gpu[0].item()
        return bool(overflow)

    # `x` is a torch.Tensor
    @staticmethod
    def _has_inf_or_nan(x, j=None):
        try:
            # if x is half, the .float() incurs an additional deep copy, but it's necessary if
            # Pytorch's .sum() creates a one-element tensor of the same type as x
            # (which is true for some recent version of pytorch).
            cpu_sum = float(x.float().sum())  # want: D
        except RuntimeError as instance:
            if "value cannot be converted" not in instance.args[0]:
                raise
            return True
        else:
            if cpu_sum == float('inf') or cpu_sum == -float('inf') or cpu_sum != cpu_sum:
                return True
            return False

    def step(self):
        self._check_overflow(partition_gradients=True)
        if self.overflow:
            self.loss_scale /= 2
            return False
        for group in self.bit16_groups:
            for p in group:
                p.data.add_(p.grad, alpha=-1e-3)
        return True


class DeepSpeedZeroOptimizerFixed(DeepSpeedZeroOptimizer):
    """After the fix: counts invalid grads on device, one sync at the end."""

    def has_overflow_serial(self, params):
        invalid_grad_count = torch.zeros([1], dtype=torch.float, device=get_accelerator().current_device_name())
        for p in params:
            if p.grad is not None:
                invalid_grad_count += self._has_inf_or_nan(p.grad)
        return invalid_grad_count.bool()

    def has_overflow_partitioned_grads_serial(self):
        invalid_grad_count = torch.zeros([1], dtype=torch.float, device=get_accelerator().current_device_name())
        for i in range(len(self.bit16_groups)):
            for j, grad in enumerate(self.averaged_gradients[i]):
                if grad is not None:
                    invalid_grad_count += self._has_inf_or_nan(grad)
        return invalid_grad_count.bool()

    def has_overflow(self, partition_gradients=True):
        if partition_gradients:
            overflow = self.local_overflow if self.cpu_offload else self.has_overflow_partitioned_grads_serial()
            overflow_gpu = get_accelerator().ByteTensor([overflow]) if self.cpu_offload else overflow.byte().to(
                get_accelerator().current_device_name())
            dist.all_reduce(overflow_gpu, op=dist.ReduceOp.MAX, group=self.dp_process_group)
        else:
            params = []
            for group in self.bit16_groups:
                for param in group:
                    params.append(param)
            overflow_gpu = self.has_overflow_serial(params).byte().to(get_accelerator().current_device_name())

        self._model_parallel_all_reduce(tensor=overflow_gpu, op=dist.ReduceOp.MAX)

        overflow = overflow_gpu[0].item()  # maybe: D (the one per-step sync the fix deliberately keeps)
        return bool(overflow)

    @staticmethod
    def _has_inf_or_nan(x, j=None):
        float_x = x.float()
        nan = float_x.isnan()
        inf = float_x.isinf()
        inf_or_nan = nan.logical_or(inf)
        return inf_or_nan.float().max()


def _make_groups(n_groups=2, n_params=4):
    groups = []
    for _ in range(n_groups):
        g = []
        for _ in range(n_params):
            p = torch.nn.Parameter(torch.randn(16, 16))
            p.grad = torch.randn(16, 16)
            g.append(p)
        groups.append(g)
    return groups


if __name__ == "__main__":
    torch.manual_seed(0)
    for cls in (DeepSpeedZeroOptimizer, DeepSpeedZeroOptimizerFixed):
        groups = _make_groups()
        opt = cls(groups)
        ok = opt.step()
        groups[1][2].grad[0, 0] = float("inf")
        opt2 = cls(groups)
        ok2 = opt2.step()
        print(cls.__name__, ok, ok2, opt.has_overflow(partition_gradients=False))
