import torch


def bump(buf: torch.Tensor, idx: torch.Tensor, delta: torch.Tensor):
    buf.index_select(0, idx).add_(delta)  # want: B
    return buf
