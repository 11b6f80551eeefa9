# VL202: `self.state` of a torch.optim.Optimizer subclass is a defaultdict(dict) keyed by parameter;
# `self.state[p][key] = v` stores into a dict, nothing is gathered (timm adahessian.py:68, lars.py:127,
# _helpers.py:55 with `loaded: torch.optim.Optimizer`)
import torch


class Lars(torch.optim.Optimizer):
    def __init__(self, params, lr: float = 1.0):
        super().__init__(params, dict(lr=lr))
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["hessian step"] = 0

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                buf = torch.zeros_like(p)
                self.state[p]["momentum_buffer"] = buf


def restore(loaded: torch.optim.Optimizer, saved: dict) -> None:
    for group in loaded.param_groups:
        for param in group["params"]:
            loaded.state[param]["exp_avg"] = saved["exp_avg"].to(param.device)
