"""The package's own test: it passes, and `viewlint verify --run` measures the bugs it exercises."""

import torch

from vpkg.cache import EmbeddingCache, reset_masked


def test_admit_keeps_rows() -> None:
    cache = EmbeddingCache()
    batch = torch.randn(32, 256)
    cache.admit(batch, list(range(4)))
    assert len(cache.entries) == 4


def test_reset_masked_runs() -> None:
    buf = torch.rand(64)
    reset_masked(buf, 0.5)
    assert buf.shape == (64,)
