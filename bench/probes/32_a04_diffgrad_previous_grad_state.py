# source: jettify/pytorch-optimizer https://github.com/jettify/pytorch-optimizer/pull/57 — DiffGrad.step stored `state['previous_grad'] = grad` where `grad = p.grad.data` aliases the live gradient buffer, so after the next in-place zero_grad/backward the "previous" gradient equals the current one and the diffGrad friction term is constant; the fix stores grad.clone().
import math

import torch
from torch.optim.optimizer import Optimizer


class DiffGrad(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group['betas']
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad.data
                state = self.state[p]
                if len(state) == 0:
                    state['step'] = 0
                    state['exp_avg'] = torch.zeros_like(p.data)
                    state['exp_avg_sq'] = torch.zeros_like(p.data)
                    state['previous_grad'] = torch.zeros_like(p.data)
                exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']
                previous_grad = state['previous_grad']
                state['step'] += 1
                if group['weight_decay'] != 0:
                    grad = grad.add(p.data, alpha=group['weight_decay'])
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.sqrt().add_(group['eps'])
                bias_correction1 = 1 - beta1 ** state['step']
                bias_correction2 = 1 - beta2 ** state['step']
                # friction coefficient from the change in gradient
                diff = torch.abs(previous_grad - grad)
                dfc = torch.div(1.0, (1.0 + torch.exp(-diff)))
                state['previous_grad'] = grad  # want: A
                exp_avg1 = exp_avg * dfc
                step_size = group['lr'] * math.sqrt(bias_correction2) / bias_correction1
                p.data.addcdiv_(exp_avg1, denom, value=-step_size)
        return loss


# ---------------------------------------------------------------- fixed version
class DiffGradFixed(DiffGrad):
    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group['betas']
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad.data
                state = self.state[p]
                if len(state) == 0:
                    state['step'] = 0
                    state['exp_avg'] = torch.zeros_like(p.data)
                    state['exp_avg_sq'] = torch.zeros_like(p.data)
                    state['previous_grad'] = torch.zeros_like(p.data)
                exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']
                previous_grad = state['previous_grad']
                state['step'] += 1
                if group['weight_decay'] != 0:
                    grad = grad.add(p.data, alpha=group['weight_decay'])
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.sqrt().add_(group['eps'])
                bias_correction1 = 1 - beta1 ** state['step']
                bias_correction2 = 1 - beta2 ** state['step']
                # friction coefficient from the change in gradient
                diff = torch.abs(previous_grad - grad)
                dfc = torch.div(1.0, (1.0 + torch.exp(-diff)))
                state['previous_grad'] = grad.clone()
                exp_avg1 = exp_avg * dfc
                step_size = group['lr'] * math.sqrt(bias_correction2) / bias_correction1
                p.data.addcdiv_(exp_avg1, denom, value=-step_size)
        return loss


def run(opt_cls):
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = opt_cls(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    for _ in range(2):
        opt.zero_grad(set_to_none=False)  # zeroes p.grad in place
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    opt.zero_grad(set_to_none=False)
    torch.nn.functional.mse_loss(model(x) * 3, y).backward()
    w = model.weight
    prev = opt.state[w]['previous_grad']
    return prev.data_ptr() == w.grad.data_ptr(), (prev - w.grad).abs().max().item()


if __name__ == "__main__":
    aliased, d = run(DiffGrad)
    aliased_f, d_f = run(DiffGradFixed)
    print("buggy: aliases p.grad=%s |prev-grad|=%.4g ; fixed: aliases=%s |prev-grad|=%.4g" % (aliased, d, aliased_f, d_f))
    assert aliased and d == 0.0
    assert not aliased_f and d_f > 0.0
