import torch
from torch import nn


class PrefixCache:
    def __init__(self):
        self.entries = {}

    def insert(self, key, k: torch.Tensor, v: torch.Tensor, n: int):
        self.entries[key] = (k[:, :, :n], v[:, :, :n])  # want: A
