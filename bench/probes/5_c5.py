import torch


def make(n):
    x = torch.zeros(n, n)
    return x.contiguous()  # want: C
