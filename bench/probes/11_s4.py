import torch
import torch.nn as nn


class Where(nn.Module):
    def forward(self, x: torch.Tensor):
        rows, cols = torch.where(x > 0)  # want: D
        return rows + cols
