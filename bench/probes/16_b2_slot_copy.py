import torch
from torch import nn


class KVPool(nn.Module):
    def __init__(self, layers, slots, dim):
        super().__init__()
        self.cache_k = [torch.zeros(slots, dim) for _ in range(layers)]

    def write(self, layer: int, slot_ids: torch.Tensor, k: torch.Tensor):
        self.cache_k[layer][slot_ids].copy_(k)  # want: B
