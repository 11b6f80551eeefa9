# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/2497 — "Advanced Indexing doesn't work with uniform": a[b] = 3 changed a, but torch.nn.init.uniform(a[b], -0.1, 0.1) with a LongTensor b left a as it was (and a[b].abs_() too, while a[1:4].abs_() worked): the advanced index hands init a copy
import torch
from torch import nn


def make_partial_reinit(row_ids: torch.LongTensor, bound: float):
    """Returns a Module.apply() callback that re-draws the given rows of every embedding table."""

    def _reinit(m: nn.Module) -> None:
        if isinstance(m, nn.Embedding):
            with torch.no_grad():
                nn.init.uniform_(m.weight[row_ids], -bound, bound)  # want: B
                m.weight[row_ids].abs_()  # want: B

    return _reinit


def make_partial_reinit_fixed(row_ids: torch.LongTensor, bound: float):
    def _reinit(m: nn.Module) -> None:
        if isinstance(m, nn.Embedding):
            with torch.no_grad():
                fresh = torch.empty(len(row_ids), m.embedding_dim).uniform_(-bound, bound)
                m.weight[row_ids] = fresh.abs()  # __setitem__ writes back

    return _reinit


def reinit_leading_rows(m: nn.Embedding, n: int, bound: float) -> None:
    with torch.no_grad():
        nn.init.uniform_(m.weight[:n], -bound, bound)  # basic slice: a view, the init lands
        m.weight[1:n].abs_()


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.user = nn.Embedding(10, 4)
        self.item = nn.Embedding(10, 4)
        nn.init.constant_(self.user.weight, 3.0)
        nn.init.constant_(self.item.weight, -3.0)


if __name__ == "__main__":
    ids = torch.LongTensor([1, 2, 3])
    model = TwoTower()
    model.apply(make_partial_reinit(ids, 0.1))
    assert torch.all(model.user.weight == 3.0) and torch.all(model.item.weight == -3.0)  # nothing re-drawn

    model_fixed = TwoTower()
    model_fixed.apply(make_partial_reinit_fixed(ids, 0.1))
    w = model_fixed.item.weight.detach()
    assert w[ids].abs().max() <= 0.1 and (w[ids] >= 0).all() and torch.all(w[4:] == -3.0)

    other = TwoTower()
    reinit_leading_rows(other.user, 4, 0.1)
    assert other.user.weight[:4].abs().max() <= 0.1 and torch.all(other.user.weight[4:] == 3.0)
    print("ok: nn.init.uniform_ on weight[LongTensor] initialized a copy")
