import torch
from torch import nn


class Pos(nn.Module):
    def forward(self, ids: torch.Tensor, sep: int):
        pos = torch.where(ids == sep)[0]  # want: D
        return pos
