import torch
from torch import nn


class Unpad(nn.Module):
    def forward(self, hidden, attention_mask):
        seq_lens = attention_mask.sum(-1).tolist()  # want: D
        return torch.split(hidden[attention_mask.bool()], seq_lens)  # want: D
