import torch
from torch import nn


class Packed(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.rnn = nn.GRU(d, d, batch_first=True)

    def forward(self, x, lengths):
        max_len = lengths.max()
        steps = torch.arange(max_len, device=x.device)  # want: D
        out, _ = self.rnn(x[:, :max_len])  # want: D
        return out, steps
