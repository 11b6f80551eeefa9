import torch


def mark(mask: torch.Tensor, batch_idx: torch.Tensor, pos: int):
    mask[batch_idx][:, pos] = True  # want: B
    return mask
