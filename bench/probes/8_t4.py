import torch
import torch.nn.functional as F


def act(x: torch.Tensor):
    F.relu(x)  # want: B
    return x
