# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/1152 — optim.Adamax rebuilt its `exp_inf` state with an out-of-place `torch.max(norm_buf, 0)` every step and stored the fresh tensor back into the optimizer state, allocating a whole new parameter-sized buffer per step; the fix writes the max in place into the persistent state tensor via `out=`.
import torch
from torch.optim import Optimizer


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()

        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad.data
                state = self.state[p]

                # State initialization
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = grad.new().resize_as_(grad).zero_()
                    state["exp_inf"] = grad.new().resize_as_(grad).zero_()

                exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                beta1, beta2 = group["betas"]
                eps = group["eps"]

                state["step"] += 1

                if group["weight_decay"] != 0:
                    grad = grad.add(p.data, alpha=group["weight_decay"])

                # Update biased first moment estimate.
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                # Update the exponentially weighted infinity norm.
                norm_buf = torch.cat([exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add_(eps).unsqueeze_(0)], 0)
                exp_inf = torch.max(norm_buf, 0)[0]  # want: C
                state["exp_inf"] = exp_inf

                bias_correction = 1 - beta1 ** state["step"]
                clr = group["lr"] / bias_correction

                p.data.addcdiv_(exp_avg, exp_inf, value=-clr)

        return loss


class AdamaxFixed(Adamax):
    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()

        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad.data
                state = self.state[p]

                # State initialization
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = grad.new().resize_as_(grad).zero_()
                    state["exp_inf"] = grad.new().resize_as_(grad).zero_()

                exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
                beta1, beta2 = group["betas"]
                eps = group["eps"]

                state["step"] += 1

                if group["weight_decay"] != 0:
                    grad = grad.add(p.data, alpha=group["weight_decay"])

                # Update biased first moment estimate.
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                # Update the exponentially weighted infinity norm.
                norm_buf = torch.cat([exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add_(eps).unsqueeze_(0)], 0)
                torch.max(norm_buf, 0, out=(exp_inf, exp_inf.new().long()))

                bias_correction = 1 - beta1 ** state["step"]
                clr = group["lr"] / bias_correction

                p.data.addcdiv_(exp_avg, exp_inf, value=-clr)

        return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    results = []
    for opt_cls in (Adamax, AdamaxFixed):
        torch.manual_seed(0)
        model = torch.nn.Linear(64, 64)
        opt = opt_cls(model.parameters(), lr=1e-2)
        ptrs = set()
        for _ in range(5):
            opt.zero_grad()
            model(torch.randn(16, 64)).pow(2).mean().backward()
            opt.step()
            ptrs.add(opt.state[model.weight]["exp_inf"].data_ptr())
        print(opt_cls.__name__, "distinct exp_inf buffers over 5 steps:", len(ptrs))
        results.append((len(ptrs), model.weight.detach().clone()))
    assert results[0][0] > 1 and results[1][0] == 1
    assert torch.allclose(results[0][1], results[1][1])
