"""Verify must survive a script that ends its interpreter without unwinding (os._exit)."""

import os

import torch

buf = torch.zeros(4)
if buf.numel() == 4:
    os._exit(7)
buf[[2]].fill_(1.0)
