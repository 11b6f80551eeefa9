import torch
import torch.nn as nn


class Dedup(nn.Module):
    def forward(self, ids):
        uniq = torch.unique(ids)  # want: D
        return uniq.numel()
