"""A well-behaved script after the broken ones: it is still verified."""

import torch

buf = torch.zeros(4)
buf[[0, 1]].fill_(1.0)
