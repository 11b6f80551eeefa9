"""Verify must survive a script that raises: the site before the error is measured, the one after is not."""

import torch

buf = torch.zeros(4)
buf[[0, 1]].fill_(1.0)
raise ValueError("boom")
buf[[2]].fill_(1.0)
