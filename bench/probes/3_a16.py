import torch


class PrefixCache:
    def __init__(self):
        self.store = {}

    def insert(self, tokens, kv):
        k, v = kv.chunk(2, dim=0)
        self.store[tuple(tokens)] = (k, v)  # clean: both halves together cover kv


class SlotCache:
    def __init__(self):
        self.slots = {}

    def insert(self, key, kv: torch.Tensor):
        k, v = kv.chunk(2, dim=0)
        self.slots[key] = k  # want: A
