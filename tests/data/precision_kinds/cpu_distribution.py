# VL401: a sample of a torch.distributions object built from Python floats is a CPU tensor
# (timm volo.py:496: `lam = Beta(self.beta, self.beta).sample()` then rand_bbox(..., lam) does `.item()`)
import torch
from torch import nn


def rand_offset(lam) -> int:
    cx = torch.randint(0, 16, (1,))
    return (cx * lam).int().item()


class Model(nn.Module):
    def __init__(self, beta: float = 1.0):
        super().__init__()
        self.beta = beta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lam = torch.distributions.Beta(self.beta, self.beta).sample()
        return x[:, rand_offset(lam):]
