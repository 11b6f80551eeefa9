import torch


def zero_first(x: torch.Tensor, idx: torch.Tensor):
    x[idx, :][:, 0] = 0  # want: B
    return x
