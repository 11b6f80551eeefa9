import torch


def gather_tokens(x, idx):
    out = x.index_select(0, idx)
    return out.contiguous()  # want: C
