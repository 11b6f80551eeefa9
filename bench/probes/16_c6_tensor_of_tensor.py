import torch


def to_long(ids: torch.Tensor):
    return torch.tensor(ids, dtype=torch.long)  # want: C
