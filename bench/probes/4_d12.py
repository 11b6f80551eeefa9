import torch
import torch.nn as nn


class Checked(nn.Module):
    def forward(self, x):
        assert torch.all(x >= 0), "negative input"  # want: D
        return x.sqrt()
