import torch


def scale_rows(t: torch.Tensor):
    t[[0, 2]].mul_(2)  # want: B
    return t
