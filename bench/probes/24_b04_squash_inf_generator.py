# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/80945 — "Why does sigmoid_() not take effect when applied to an indexed tensor?": b = a.log().abs(); b[b.isinf()].sigmoid_() left the inf entries in b, because the boolean-mask index returns a copy; fix: b[mask] = b[mask].sigmoid() (or torch.where)
from typing import Iterable, Iterator

import torch


def log_magnitude_features(batches: Iterable[torch.Tensor]) -> Iterator[torch.Tensor]:
    """Feature pipeline step: |log x|, with the infinities (x == 0) squashed through a sigmoid."""
    for a in batches:
        b = a.log().abs()
        b[b.isinf()].sigmoid_()  # want: B
        yield b


def log_magnitude_features_fixed(batches: Iterable[torch.Tensor]) -> Iterator[torch.Tensor]:
    for a in batches:
        b = a.log().abs()
        mask = b.isinf()
        b[mask] = b[mask].sigmoid()
        yield b


def log_magnitude_features_where(batches: Iterable[torch.Tensor]) -> Iterator[torch.Tensor]:
    for a in batches:
        b = a.log().abs()
        yield torch.where(b.isinf(), b.sigmoid(), b)


if __name__ == "__main__":
    data = [torch.tensor([[1, 0, 3.1], [4.1, 5.1, 6.1]]), torch.tensor([[0.0, 2.0]])]
    bug = list(log_magnitude_features(data))
    fixed = list(log_magnitude_features_fixed(data))
    where = list(log_magnitude_features_where(data))
    assert torch.isinf(bug[0]).any() and torch.isinf(bug[1]).any()  # still inf
    assert all(torch.isfinite(f).all() for f in fixed)
    assert all(torch.equal(f, w) for f, w in zip(fixed, where))
    print("ok: sigmoid_ on b[mask] squashed a temporary")
