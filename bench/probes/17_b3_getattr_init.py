import torch
from torch import nn


def reinit(model: nn.Module, name: str, ids: torch.Tensor):
    getattr(model, name).weight[ids].normal_(std=0.02)  # want: B
