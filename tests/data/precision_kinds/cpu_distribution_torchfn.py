# audit 2 false finding: timm models/volo.py:496 x4 (VL401)
# `lam = Beta(float, float).sample()` is a CPU tensor and the audit-1 repro (`cx * lam`) is now silent, but
# `torch.sqrt(1. - lam)` (a torch function of the host tensor) is taken for a device tensor again.
import torch
from torch import nn


def rand_bbox(W: int, lam: float):
    cut = torch.sqrt(1. - lam)
    cx = torch.randint(0, W, (1,))
    return (cx - cut).item()


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lam = torch.distributions.Beta(1.0, 1.0).sample()
        return x[:, rand_bbox(x.shape[1], lam):]
