import torch
from torch import nn


class Sampler(nn.Module):
    def forward(self, logits: torch.Tensor, temperatures: torch.Tensor, top_k: torch.Tensor):
        logits = logits / temperatures.unsqueeze(1)
        if (top_k > 0).any():  # want: D
            kth = torch.topk(logits, int(top_k.max()), dim=-1).values[:, -1:]  # want: D
            logits = logits.masked_fill(logits < kth, -float("inf"))
        probs = logits.softmax(-1)
        return torch.multinomial(probs, 1).view(-1)
