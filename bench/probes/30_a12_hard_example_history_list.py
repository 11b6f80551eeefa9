# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/40157 — "Saving Sliced Tensors writes entire unsliced Tensor": `torch.save(array[:1000])` wrote all of `array`, while `array[:1000].clone()` wrote only the slice (the issue was closed with PR #40412 documenting the .clone() fix). Reconstructed as a trainer that keeps the hardest rows of every batch in a history list across steps and saves that list at the end of the epoch.
import io

import torch
import torch.nn as nn
import torch.nn.functional as F


class HardExampleTracker:
    def __init__(self, k=4):
        self.k = k
        self.history = []

    def update(self, logits, targets):
        per_sample = F.cross_entropy(logits, targets, reduction="none")
        order = per_sample.argsort(descending=True)
        ranked = logits.detach()[order]  # gathered copy of the whole batch, sorted by loss
        self.history.append(ranked[: self.k])  # want: A

    def dump(self):
        f = io.BytesIO()
        torch.save(self.history, f)
        return f.tell()


class HardExampleTrackerFixed(HardExampleTracker):
    def update(self, logits, targets):
        per_sample = F.cross_entropy(logits, targets, reduction="none")
        order = per_sample.argsort(descending=True)
        ranked = logits.detach()[order]
        self.history.append(ranked[: self.k].clone())


def train(model, batches, tracker, lr=0.05):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for x, y in batches:
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        tracker.update(logits, y)
    return tracker


if __name__ == "__main__":
    batches = [(torch.randn(256, 32), torch.randint(0, 1000, (256,))) for _ in range(20)]
    torch.manual_seed(0)
    bad = train(nn.Linear(32, 1000), batches, HardExampleTracker())
    torch.manual_seed(0)
    good = train(nn.Linear(32, 1000), batches, HardExampleTrackerFixed())
    held_bad = sum(t.untyped_storage().nbytes() for t in bad.history)
    held_good = sum(t.untyped_storage().nbytes() for t in good.history)
    size_bad, size_good = bad.dump(), good.dump()
    print(f"history held: buggy {held_bad} B  fixed {held_good} B;  saved: buggy {size_bad} B  fixed {size_good} B")
    assert all(torch.equal(a, b) for a, b in zip(bad.history, good.history))
    assert held_bad == 64 * held_good and size_bad > 30 * size_good
