import torch
from torch import nn


class Gather(nn.Module):
    def forward(self, h, mask):
        idx = torch.nonzero(mask).squeeze(1)  # want: D
        return h.index_select(0, idx)
