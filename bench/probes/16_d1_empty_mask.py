import torch
from torch import nn


class Router(nn.Module):
    def forward(self, x, mask):
        if mask.sum() == 0:  # want: D
            return x
        return x * mask
