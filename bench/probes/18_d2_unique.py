import torch
from torch import nn


class Experts(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.experts = nn.ModuleList(nn.Linear(4, 4) for _ in range(n))

    def forward(self, x, expert_ids: torch.Tensor):
        out = torch.zeros_like(x)
        for e in torch.unique(expert_ids):  # want: D
            sel = expert_ids == e
            out[sel] = self.experts[e](x[sel])  # want: D
        return out
