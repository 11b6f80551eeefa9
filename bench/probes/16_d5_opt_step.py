import torch
from torch.optim import Optimizer


class ClipAdam(Optimizer):
    def __init__(self, params, lr=1e-3):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                norm = p.grad.norm().item()  # want: D
                p.add_(p.grad, alpha=-group["lr"] / max(norm, 1.0))
