import torch
from torch.optim.optimizer import Optimizer


class ClipSGD(Optimizer):
    def __init__(self, params, lr=0.1, clip=1.0):
        super().__init__(params, {"lr": lr, "clip": clip})

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g.abs().max() > group["clip"]:  # want: D
                    g = g.clamp(-group["clip"], group["clip"])
                p.data.add_(g, alpha=-group["lr"])
