"""Verify must survive a script that hangs: it is stopped at the timeout and the run goes on."""

import time

import torch

buf = torch.zeros(4)
buf[[0, 1]].fill_(1.0)
while True:
    time.sleep(0.05)
buf[[2]].fill_(1.0)
