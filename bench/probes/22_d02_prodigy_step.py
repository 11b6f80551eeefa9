# source: konstmish/prodigy issue #38 (fixed downstream in Koratahiu/Advanced_Optimizers PR #5) — Prodigy's step() accumulated d_numerator/d_denom with `.item()` once per parameter, and OrthoGrad passed a 0-dim tensor as `alpha=` (a hidden `.item()`): thousands of syncs per optimizer step
import math

import torch
from torch.optim import Optimizer


def orthogonalize_grad(p: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    w = p.view(-1).float()
    g = grad.view(-1).float()
    w_norm_sq = torch.dot(w, w).add_(1e-30)
    proj = torch.dot(w, g) / w_norm_sq
    g_orth = g.sub(w, alpha=proj)  # want: D
    g_orth_scaled = g_orth * (g.norm(2) / g_orth.norm(2).add_(1e-30))  # stays on device
    return g_orth_scaled.view_as(grad).to(grad.dtype)


class ProdigyLite(Optimizer):
    def __init__(self, params, lr=1.0, betas=(0.9, 0.999), beta3=None, d0=1e-6, d_coef=1.0,
                 growth_rate=float("inf"), eps=1e-8, orthograd=False):
        if beta3 is None:
            beta3 = math.sqrt(betas[1])
        defaults = dict(lr=lr, betas=betas, beta3=beta3, d=d0, d0=d0, d_max=d0, d_numerator=0.0,
                        d_coef=d_coef, growth_rate=growth_rate, eps=eps, k=0, orthograd=orthograd)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        first = self.param_groups[0]
        beta1, beta2 = first["betas"]
        beta3 = first["beta3"]
        d, d0, d_max = first["d"], first["d0"], first["d_max"]
        dlr = d * first["lr"]
        d_numerator = first["d_numerator"] * beta3
        d_denom = 0.0

        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = orthogonalize_grad(p, p.grad) if group["orthograd"] else p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["s"] = torch.zeros_like(p)
                    state["p0"] = p.detach().clone()
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                s, p0 = state["s"], state["p0"]
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]

                d_numerator += (d / d0) * dlr * torch.dot(grad.flatten(), (p0 - p).flatten()).item()  # want: D
                exp_avg.mul_(beta1).add_(grad, alpha=d * (1 - beta1))  # python-float alpha: no sync
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=d * d * (1 - beta2))
                s.mul_(beta3).add_(grad, alpha=(d / d0) * dlr)
                d_denom += s.abs().sum().item()  # want: D

        if d_denom == 0:
            return loss
        d_hat = first["d_coef"] * d_numerator / d_denom
        if d == first["d0"]:
            d = max(d, d_hat)  # python floats by now
        d_max = max(d_max, d_hat)
        d = min(d_max, d * first["growth_rate"])

        for group in self.param_groups:
            group.update(d=d, d_max=d_max, d_numerator=d_numerator, k=group["k"] + 1)
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                denom = state["exp_avg_sq"].sqrt().add_(d * group["eps"])
                p.addcdiv_(state["exp_avg"], denom, value=-d * group["lr"])
        return loss


class ProdigyDeviceAccum(ProdigyLite):
    """A half-done fix: the sums stay on device, but the d update still compares them on the host."""

    @torch.no_grad()
    def step(self, closure=None):
        group = self.param_groups[0]
        d, d0, d_max = group["d"], group["d0"], group["d_max"]
        dlr = d * group["lr"]
        params = [p for p in group["params"] if p.grad is not None]
        d_numerator = torch.zeros((), device=params[0].device)
        d_denom = torch.zeros((), device=params[0].device)
        for p in params:
            state = self.state[p]
            if "s" not in state:
                state["s"] = torch.zeros_like(p)
                state["p0"] = p.detach().clone()
            d_numerator += (d / d0) * dlr * torch.dot(p.grad.flatten(), (state["p0"] - p).flatten())
            state["s"].mul_(group["beta3"]).add_(p.grad, alpha=(d / d0) * dlr)  # maybe: D (from the second step on, group["d"] holds the tensor max() returned, so alpha is a device scalar)
            d_denom += state["s"].abs().sum()
        d_hat = group["d_coef"] * d_numerator / d_denom.clamp_min(1e-30)
        d = max(d, d_hat)  # want: D
        group["d"] = d
        for p in params:
            p.add_(p.grad, alpha=-group["lr"] * 1e-3)


def train(model, opt, batches):
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)


if __name__ == "__main__":
    torch.manual_seed(0)
    net = torch.nn.Linear(8, 1)
    data = [(torch.randn(16, 8), torch.randn(16, 1)) for _ in range(3)]
    train(net, ProdigyLite(net.parameters(), orthograd=True), data)
    train(net, ProdigyDeviceAccum(net.parameters()), data)
    print("ok")
