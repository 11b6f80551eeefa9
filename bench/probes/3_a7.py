import torch


class ReplayBank:
    def __init__(self):
        self.items = []

    def add(self, batch_emb: torch.Tensor):
        self.items.extend([row for row in batch_emb])  # want: A
