import torch
import torch.nn as nn


class Tracker(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.head = nn.Linear(d, 10)
        self.history = []

    def forward(self, h):
        logits = self.head(h)
        for row in logits:
            self.history.append(row.detach())  # want: A
        return logits
