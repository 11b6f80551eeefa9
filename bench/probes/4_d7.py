import torch
import torch.nn as nn


class Pack(nn.Module):
    def forward(self, x, lengths):
        max_len = int(lengths.max())  # want: D
        return x[:, :max_len]
