"""Verify must survive a script that calls sys.exit."""

import sys

import torch

buf = torch.zeros(4)
if buf.numel() == 4:
    sys.exit(3)
buf[[2]].fill_(1.0)
