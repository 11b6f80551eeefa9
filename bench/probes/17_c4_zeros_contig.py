import torch


def make(n, d):
    buf = torch.zeros(n, d).float()
    return buf.contiguous()  # want: C
