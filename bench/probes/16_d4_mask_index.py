import torch
from torch import nn


class Dropper(nn.Module):
    def forward(self, tokens, keep):
        return tokens[keep > 0.5]  # maybe: D (`keep` is not known to be a tensor: it may be a float)
