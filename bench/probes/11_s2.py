import torch
import torch.nn as nn


class Loop(nn.Module):
    def forward(self, x: torch.Tensor, lengths: torch.Tensor):
        out = []
        for i in range(lengths.max()):  # want: D
            out.append(x[:, i])
        return torch.stack(out)
