# source: allenai/OLMo-core https://github.com/allenai/OLMo-core/pull/309 — the foreach SkipStepAdamW.step first returned early with `if float(step_factor) == 0.0: return`, reading the device step factor back to the host on every optimizer step (reviewer: "This is the host-device sync we want to avoid"); the fix drops the early return and multiplies the update by the step_factor tensor instead.
from typing import List, Optional

import torch
from torch.optim.optimizer import Optimizer


class SkipStepOptimizer(Optimizer):
    def __init__(self, params, defaults, rolling_interval_length=128, sigma_factor=6):
        super().__init__(params, defaults)
        self.rolling_interval_length = rolling_interval_length
        self.sigma_factor = sigma_factor
        self._losses: List[torch.Tensor] = []

    @property
    def latest_loss(self) -> torch.Tensor:
        return self._losses[-1]

    @latest_loss.setter
    def latest_loss(self, loss: torch.Tensor):
        self._losses.append(loss)
        while len(self._losses) > self.rolling_interval_length + 1:
            self._losses.pop(0)

    def get_step_factor(self) -> torch.Tensor:
        if len(self._losses) < max(4, self.rolling_interval_length // 2):
            return torch.tensor(1.0).to(device=self.latest_loss.device, non_blocking=True)
        loss_std, loss_mean = torch.std_mean(torch.stack(self._losses[:-1]))
        loss_z_score = (self.latest_loss - loss_mean).abs().div(loss_std)
        return (loss_z_score <= self.sigma_factor).float()


class SkipStepAdamW(SkipStepOptimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 rolling_interval_length=8, sigma_factor=6):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults, rolling_interval_length=rolling_interval_length,
                         sigma_factor=sigma_factor)
        self._step_skipped: Optional[torch.Tensor] = None

    def _collect(self, group):
        params, grads, exp_avgs, exp_avg_sqs, steps = [], [], [], [], []
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if len(state) == 0:
                state["step"] = torch.tensor(0.0, dtype=torch.float32, device=p.device)
                state["exp_avg"] = torch.zeros_like(p)
                state["exp_avg_sq"] = torch.zeros_like(p)
            params.append(p)
            grads.append(p.grad)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            steps.append(state["step"])
        return params, grads, exp_avgs, exp_avg_sqs, steps

    def _foreach_update(self, group, step_factor):
        params, grads, exp_avgs, exp_avg_sqs, steps = self._collect(group)
        beta1, beta2 = group["betas"]
        lr, eps = group["lr"], group["eps"]
        torch._foreach_add_(steps, step_factor)
        torch._foreach_mul_(params, 1 - step_factor * (lr * group["weight_decay"]))
        torch._foreach_lerp_(exp_avgs, grads, step_factor * (1 - beta1))
        torch._foreach_mul_(exp_avg_sqs, 1 - step_factor * (1 - beta2))
        for p, g, m, v, s in zip(params, grads, exp_avgs, exp_avg_sqs, steps):
            v.add_(step_factor * g * g, alpha=1 - beta2)
            bias_correction1 = 1 - beta1 ** s.clamp(min=1)
            bias_correction2 = 1 - beta2 ** s.clamp(min=1)
            denom = (v.sqrt() / bias_correction2.sqrt()).add_(eps)
            p.add_(-(lr / bias_correction1) * step_factor * (m / denom))

    @torch.no_grad()
    def step(self, closure=None) -> None:
        if closure is not None:
            with torch.enable_grad():
                closure()

        step_factor = self.get_step_factor()
        self._step_skipped = 1 - step_factor
        if float(step_factor) == 0.0:  # want: D
            # Entire step skipped - nothing to do.
            return
        for group in self.param_groups:
            self._foreach_update(group, step_factor)


class SkipStepAdamWFixed(SkipStepAdamW):
    @torch.no_grad()
    def step(self, closure=None) -> None:
        if closure is not None:
            with torch.enable_grad():
                closure()

        step_factor = self.get_step_factor()
        self._step_skipped = 1 - step_factor
        for group in self.param_groups:
            self._foreach_update(group, step_factor)


def run(opt_cls):
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    opt = opt_cls(model.parameters(), lr=1e-2)
    for i in range(12):
        x, y = torch.randn(16, 8), torch.randn(16, 1)
        loss = torch.nn.functional.mse_loss(model(x), y) * (100.0 if i == 10 else 1.0)
        loss.backward()
        opt.latest_loss = loss.detach()
        opt.step()
        opt.zero_grad()
    return model.weight.detach().clone()


if __name__ == "__main__":
    w_bug = run(SkipStepAdamW)
    w_fix = run(SkipStepAdamWFixed)
    print("max |diff|:", (w_bug - w_fix).abs().max().item())
