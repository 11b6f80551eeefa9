import torch


class EmbeddingStore:
    def __init__(self):
        self.store = {}

    def add_batch(self, keys, embeddings):
        for k, e in zip(keys, embeddings):
            self.store[k] = e  # maybe: A (nothing says `embeddings` is a tensor)
