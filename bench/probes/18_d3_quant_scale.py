import torch
from torch import nn


class FakeQuant(nn.Module):
    def forward(self, x: torch.Tensor):
        scale = x.abs().max().item() / 127  # want: D
        return torch.round(x / scale) * scale
