# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/3085 — a hand-written sparse SGD step did `x2[idx].add_(-0.1, y)` on embedding rows picked by a LongTensor; advanced indexing returns a copy, so the update never reached the table (norm of the change was 0). The fix writes through the index (`x2[idx] -= 0.1 * y`, equivalently index_add_).
import torch
import torch.nn as nn
import torch.nn.functional as F


class SkipGram(nn.Module):
    def __init__(self, n_words, dim):
        super().__init__()
        self.in_embed = nn.Embedding(n_words, dim)
        self.out_embed = nn.Embedding(n_words, dim)
        self.in_embed.weight.data.uniform_(-0.5 / dim, 0.5 / dim)
        self.out_embed.weight.data.normal_(0, 0.1)

    def score(self, center, context):
        u = self.in_embed.weight.data[center]
        v = self.out_embed.weight.data[context]
        return (u * v).sum(-1), u, v


class SparseSGD:
    """Updates only the rows touched by the batch (no dense grad buffer)."""

    def __init__(self, model, lr=0.1):
        self.model = model
        self.lr = lr

    def step(self, center, context, label):
        dot, u, v = self.model.score(center, context)
        # d/d dot of BCE-with-logits
        g = torch.sigmoid(dot) - label
        grad_u = g[:, None] * v
        grad_v = g[:, None] * u
        loss = F.binary_cross_entropy_with_logits(dot, label)
        with torch.no_grad():
            self.model.in_embed.weight.data[center].add_(grad_u, alpha=-self.lr)  # want: B
            self.model.out_embed.weight.data[context].add_(grad_v, alpha=-self.lr)  # want: B
        return loss


class SparseSGDFixed(SparseSGD):
    def step(self, center, context, label):
        dot, u, v = self.model.score(center, context)
        g = torch.sigmoid(dot) - label
        grad_u = g[:, None] * v
        grad_v = g[:, None] * u
        loss = F.binary_cross_entropy_with_logits(dot, label)
        with torch.no_grad():
            self.model.in_embed.weight.data.index_add_(0, center, grad_u, alpha=-self.lr)
            self.model.out_embed.weight.data.index_add_(0, context, grad_v, alpha=-self.lr)
        return loss


def train(opt_cls, steps=50, seed=0):
    torch.manual_seed(seed)
    model = SkipGram(100, 16)
    before = model.in_embed.weight.data.clone()
    opt = opt_cls(model, lr=0.5)
    losses = []
    for _ in range(steps):
        center = torch.randint(0, 100, (32,))
        context = (center + 1) % 100
        neg = torch.randint(0, 100, (32,))
        idx_c = torch.cat([center, center])
        idx_o = torch.cat([context, neg])
        label = torch.cat([torch.ones(32), torch.zeros(32)])
        losses.append(opt.step(idx_c, idx_o, label))
    delta = (model.in_embed.weight.data - before).norm().item()
    return delta, losses[0].item(), losses[-1].item()


if __name__ == "__main__":
    d_bug, l0_bug, l1_bug = train(SparseSGD)
    d_fix, l0_fix, l1_fix = train(SparseSGDFixed)
    print(f"buggy: |delta W|={d_bug:.4f} loss {l0_bug:.4f} -> {l1_bug:.4f}")
    print(f"fixed: |delta W|={d_fix:.4f} loss {l0_fix:.4f} -> {l1_fix:.4f}")
    assert d_bug == 0.0 and d_fix > 0.0
