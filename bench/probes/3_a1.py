import torch
import torch.nn as nn


class Decoder(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.last_states = {}

    def remember(self, request_id, hidden_states):
        self.last_states[request_id] = hidden_states[:, -1]  # want: A

    def forward(self, x, request_id):
        h = self.proj(x)
        self.remember(request_id, h)
        return h
