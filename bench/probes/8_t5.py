import torch


def scale(x: torch.Tensor):
    x.reshape(-1)[:10] *= 2  # maybe: B (reshape of a non-contiguous x copies)
    return x
