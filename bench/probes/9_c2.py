import torch


def scores(q, k):
    s = torch.matmul(q, k.transpose(-1, -2))
    return s.contiguous()  # want: C
