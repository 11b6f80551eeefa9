import torch


class FeatureQueue:
    def __init__(self, size):
        self.size = size
        self.queue = []

    def push(self, feats: torch.Tensor):
        for f in feats.split(1):
            self.queue.append(f)  # clean: every piece
        self.queue = self.queue[-self.size:]


class HeadQueue:
    def __init__(self):
        self.queue = []

    def push(self, feats: torch.Tensor):
        self.queue.append(feats[:4])  # want: A
