import torch


def prepare(batch: torch.Tensor, device):
    batch.to(device)  # want: B
    return batch
