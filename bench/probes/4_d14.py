import torch


class Sampler:
    def __init__(self, model):
        self.model = model

    def sample(self, ids, steps):
        tokens = []
        for _ in range(steps):
            logits = self.model(ids)[:, -1]
            nxt = torch.multinomial(logits.softmax(-1), 1)
            tokens.append(nxt.item())  # want: D
            ids = torch.cat([ids, nxt], dim=-1)
        return tokens
