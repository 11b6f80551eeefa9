import torch
from torch import nn


def first_tokens(x: torch.Tensor, n: int) -> torch.Tensor:
    return x.narrow(1, 0, n)


class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.history = []

    def forward(self, hidden):
        self.history.append(first_tokens(hidden, 4))  # want: A
        return hidden
