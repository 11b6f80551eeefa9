"""An embedding cache that keeps views of each batch, and a mask reset that writes to a copy."""

import torch


class EmbeddingCache:
    def __init__(self) -> None:
        self.entries: dict[int, torch.Tensor] = {}

    def admit(self, batch: torch.Tensor, keys: list[int]) -> None:
        for key, row in zip(keys, batch):
            self.entries[key] = row[:16]


def reset_masked(buf: torch.Tensor, threshold: float) -> None:
    buf[buf > threshold].zero_()


def never_called(buf: torch.Tensor) -> None:
    buf[[0, 1]].fill_(1.0)
