import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, d, v):
        super().__init__()
        self.emb = nn.Parameter(torch.randn(v, d))

    def forward(self, h):
        return h @ self.emb.T.contiguous()  # want: C
