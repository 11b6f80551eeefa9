# source: pytorch/pytorch issue #3085 (lopezpaz, cc glample) — a sparse update of embedding rows written `x2[idx].add_(-0.1, y)` changed nothing, while `x2[idx] -= 0.1 * y` worked; advanced indexing hands add_ a gathered copy.
import torch
from torch import nn


class SparseAdagrad:
    """Hand-rolled row-sparse optimizer for a large lookup table (only touched rows are updated)."""

    def __init__(self, emb: nn.Embedding, lr: float = 0.1, eps: float = 1e-10):
        self.emb, self.lr, self.eps = emb, lr, eps
        self.acc = torch.zeros_like(emb.weight)

    @torch.no_grad()
    def step(self, ids: torch.Tensor, grad_rows: torch.Tensor):
        uniq, inv = torch.unique(ids, return_inverse=True)
        g = torch.zeros(len(uniq), grad_rows.shape[1]).index_add_(0, inv, grad_rows)
        self.acc[uniq].add_(g * g)  # want: B
        std = self.acc[uniq].add(self.eps).sqrt_()  # in place on a fresh result that is used: fine
        self.emb.weight.data[uniq].add_(g / std, alpha=-self.lr)  # want: B

    @torch.no_grad()
    def step_fixed(self, ids: torch.Tensor, grad_rows: torch.Tensor):
        uniq, inv = torch.unique(ids, return_inverse=True)
        g = torch.zeros(len(uniq), grad_rows.shape[1]).index_add_(0, inv, grad_rows)
        acc = self.acc[uniq]
        acc.add_(g * g)  # gathered copy, then written back on the next line
        self.acc[uniq] = acc
        self.emb.weight.data[uniq] -= self.lr * g / (acc + self.eps).sqrt()  # __setitem__ writes back
        self.emb.weight.data.index_add_(0, uniq, torch.zeros_like(g))
        self.emb.weight.data[0].zero_()  # int index is a basic index (a view): the pad row is zeroed


if __name__ == "__main__":
    torch.manual_seed(0)
    emb = nn.Embedding(10, 4)
    before = emb.weight.detach().clone()
    opt = SparseAdagrad(emb)
    ids = torch.tensor([1, 3, 3, 7])
    opt.step(ids, torch.randn(4, 4))
    assert torch.equal(emb.weight.detach(), before) and opt.acc.abs().sum() == 0  # both writes lost
    opt.step_fixed(ids, torch.randn(4, 4))
    assert not torch.equal(emb.weight.detach()[1], before[1]) and opt.acc[3].abs().sum() > 0
    print("ok: add_ on weight[idx] / acc[idx] updated gathered copies")
