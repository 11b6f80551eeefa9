import torch
from torch import nn


class Cache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, 8, 2048, 64))

    def update(self, pos: torch.Tensor, k: torch.Tensor):
        self.k_cache = self.k_cache.index_copy(2, pos, k)  # want: C
        return self.k_cache
