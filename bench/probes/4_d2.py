import torch
import torch.nn as nn


class Sparse(nn.Module):
    def forward(self, x):
        idx = torch.nonzero(x > 0, as_tuple=True)  # want: D
        return x[idx]
