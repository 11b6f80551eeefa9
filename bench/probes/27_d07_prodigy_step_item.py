# source: Koratahiu/Advanced_Optimizers https://github.com/Koratahiu/Advanced_Optimizers/pull/5 — Prodigy_adv.step_parameter (run for every parameter in every optimizer step) accumulated `self.d_numerator += ... torch.dot(...).item()` and `self.d_denom += s.abs().sum().item()`, a sync per parameter; the fix keeps both accumulators as device tensors and calls `.item()` once in `calculate_d`.
import math

import torch


class Prodigy_adv(torch.optim.Optimizer):
    def __init__(self, params, lr=1.0, betas=(0.9, 0.99), beta3=None, eps=1e-8, weight_decay=0.0, d0=1e-6,
                 d_coef=1.0, growth_rate=float("inf"), safeguard_warmup=False, slice_p=1, prodigy_steps=0):
        defaults = dict(lr=lr, betas=betas, beta3=beta3, eps=eps, weight_decay=weight_decay, d=d0, d0=d0,
                        d_max=d0, d_coef=d_coef, growth_rate=growth_rate, safeguard_warmup=safeguard_warmup,
                        slice_p=slice_p, prodigy_steps=prodigy_steps, k=0, use_atan2=False)
        self.fsdp_in_use = False
        super().__init__(params, defaults)
        self.init_step()

    def init_step(self):
        """Resets accumulators and calculates dlr for the upcoming step."""
        self.d_denom = 0.0

        g_group = self.param_groups[0]
        self.beta1, self.beta2_default = g_group['betas']
        self.beta3 = g_group['beta3']
        if self.beta3 is None:
            self.beta3 = math.sqrt(self.beta2_default)

        self.d = g_group['d']
        lr = g_group['lr']

        self.dlr = self.d * lr
        self.d_numerator = g_group.get('d_numerator', 0.0) * self.beta3

    @torch.no_grad()
    def step_parameter(self, p: torch.Tensor, group: dict, i: int | None = None):
        if p.grad is None:
            return

        grad = p.grad
        state = self.state[p]
        if len(state) == 0:
            state['step'] = 0
            state['exp_avg'] = torch.zeros_like(p)
            state['exp_avg_sq'] = torch.zeros_like(p)
            state['s'] = torch.zeros_like(p).flatten()[::group['slice_p']]
            state['p0'] = p.detach().flatten()[::group['slice_p']].clone()

        beta2 = self.beta2_default
        exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']
        exp_avg.mul_(self.beta1).add_(grad, alpha=self.d * (1.0 - self.beta1))
        update = exp_avg.clone()
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad.conj(), value=self.d * self.d * (1.0 - beta2))
        denom = exp_avg_sq.sqrt()
        update.div_(denom.add_(self.d * group['eps']))
        del denom
        update.mul_(self.dlr)

        # --- Accumulate Prodigy stats ---
        prodigy_steps = group['prodigy_steps']
        if prodigy_steps <= 0 or group['k'] < prodigy_steps:
            d0, safeguard_warmup, slice_p = group['d0'], group['safeguard_warmup'], group['slice_p']
            s, p0 = state['s'], state['p0']
            grad_flat = grad.flatten().float()
            p_flat = p.data.flatten().float()
            p0 = p0.float()

            self.d_numerator += (self.d / d0) * self.dlr * torch.dot(grad_flat[::slice_p], p0.data - p_flat[::slice_p]).item()  # want: D

            alpha = ((self.d / d0) * self.d) if safeguard_warmup else ((self.d / d0) * self.dlr)
            s.mul_(self.beta3).add_(grad_flat[::slice_p], alpha=alpha)
            self.d_denom += s.abs().sum().item()  # want: D

            del s, p0, grad_flat, p_flat, alpha

        # Decoupled weight decay
        if group["weight_decay"] != 0:
            p.data.add_(p.data, alpha=-group["weight_decay"] * self.dlr)

        p.data.add_(-update)
        del update

        state['step'] += 1

    @torch.no_grad()
    def step(self, closure=None):
        """Performs a single optimization step."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for group in self.param_groups:
            for i, p in enumerate(group['params']):
                self.step_parameter(p, group, i)

        self.calculate_d()
        self.init_step()
        return loss

    def calculate_d(self):
        """Calculates the new `d` based on the accumulated stats."""
        g_group = self.param_groups[0]

        prodigy_active = not (g_group.get('prodigy_steps', 0) > 0 and g_group['k'] >= g_group['prodigy_steps'])

        if prodigy_active:
            d_max, d_coef, growth_rate = g_group['d_max'], g_group['d_coef'], g_group['growth_rate']

            global_d_numerator = self.d_numerator
            global_d_denom = self.d_denom

            d_hat = self.d
            if global_d_denom > 0:
                d_hat = d_coef * global_d_numerator / global_d_denom
                if self.d == g_group['d0']:
                    self.d = max(self.d, d_hat)
                d_max = max(d_max, d_hat)
                self.d = min(d_max, self.d * growth_rate)

            for group in self.param_groups:
                group['d_numerator'] = global_d_numerator
                group['d'] = self.d
                group['d_max'] = d_max

        for group in self.param_groups:
            group['k'] += 1


class Prodigy_adv_fixed(Prodigy_adv):
    """After the fix: accumulators are device tensors; `.item()` only once per step in calculate_d."""

    def init_step(self):
        self.device = self.param_groups[0]['params'][0].device
        self.d_denom = torch.tensor(0.0, device=self.device)
        g_group = self.param_groups[0]
        self.beta1, self.beta2_default = g_group['betas']
        self.beta3 = g_group['beta3']
        if self.beta3 is None:
            self.beta3 = math.sqrt(self.beta2_default)
        self.d = g_group['d']
        lr = g_group['lr']
        self.dlr = self.d * lr
        self.d_numerator = torch.tensor(g_group.get('d_numerator', 0.0) * self.beta3, device=self.device)

    @torch.no_grad()
    def step_parameter(self, p: torch.Tensor, group: dict, i: int | None = None):
        if p.grad is None:
            return
        grad = p.grad
        state = self.state[p]
        if len(state) == 0:
            state['step'] = 0
            state['exp_avg'] = torch.zeros_like(p)
            state['exp_avg_sq'] = torch.zeros_like(p)
            state['s'] = torch.zeros_like(p).flatten()[::group['slice_p']]
            state['p0'] = p.detach().flatten()[::group['slice_p']].clone()
        beta2 = self.beta2_default
        exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']
        exp_avg.mul_(self.beta1).add_(grad, alpha=self.d * (1.0 - self.beta1))
        update = exp_avg.clone()
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad.conj(), value=self.d * self.d * (1.0 - beta2))
        denom = exp_avg_sq.sqrt()
        update.div_(denom.add_(self.d * group['eps']))
        update.mul_(self.dlr)

        prodigy_steps = group['prodigy_steps']
        if prodigy_steps <= 0 or group['k'] < prodigy_steps:
            d0, safeguard_warmup, slice_p = group['d0'], group['safeguard_warmup'], group['slice_p']
            s, p0 = state['s'], state['p0']
            grad_flat = grad.flatten().float()
            p_flat = p.data.flatten().float()
            p0 = p0.float()

            self.d_numerator += (self.d / d0) * self.dlr * torch.dot(grad_flat[::slice_p], p0.data - p_flat[::slice_p])

            alpha = ((self.d / d0) * self.d) if safeguard_warmup else ((self.d / d0) * self.dlr)
            s.mul_(self.beta3).add_(grad_flat[::slice_p], alpha=alpha)
            self.d_denom += s.abs().sum()

        if group["weight_decay"] != 0:
            p.data.add_(p.data, alpha=-group["weight_decay"] * self.dlr)
        p.data.add_(-update)
        state['step'] += 1

    def calculate_d(self):
        g_group = self.param_groups[0]
        prodigy_active = not (g_group.get('prodigy_steps', 0) > 0 and g_group['k'] >= g_group['prodigy_steps'])
        if prodigy_active:
            d_max, d_coef, growth_rate = g_group['d_max'], g_group['d_coef'], g_group['growth_rate']

            global_d_numerator = self.d_numerator.item()  # maybe: D (the single per-step sync the fix keeps)
            global_d_denom = self.d_denom.item()  # maybe: D (the single per-step sync the fix keeps)

            d_hat = self.d
            if global_d_denom > 0:
                d_hat = d_coef * global_d_numerator / global_d_denom
                if self.d == g_group['d0']:
                    self.d = max(self.d, d_hat)
                d_max = max(d_max, d_hat)
                self.d = min(d_max, self.d * growth_rate)

            for group in self.param_groups:
                group['d_numerator'] = global_d_numerator
                group['d'] = self.d
                group['d_max'] = d_max

        for group in self.param_groups:
            group['k'] += 1


def train(opt_cls, steps=5):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    opt = opt_cls(model.parameters())
    for _ in range(steps):
        x = torch.randn(32, 8)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return opt.param_groups[0]['d']


if __name__ == "__main__":
    print(train(Prodigy_adv), train(Prodigy_adv_fixed))
