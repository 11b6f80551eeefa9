import torch
from torch import nn


class Emb(nn.Module):
    def __init__(self, n, d, pad_ids):
        super().__init__()
        self.embed = nn.Embedding(n, d)
        self.pad_ids = torch.tensor(pad_ids)
        nn.init.zeros_(self.embed.weight[self.pad_ids])  # want: B
