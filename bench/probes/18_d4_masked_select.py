import torch
from torch import nn


class Pick(nn.Module):
    def forward(self, logits: torch.Tensor, valid: torch.Tensor):
        return torch.masked_select(logits, valid.bool())  # want: D
