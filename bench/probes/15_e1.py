import torch
import torch.nn as nn


class Check(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor):
        if torch.equal(a, b):  # maybe: D (a deliberate check; on sglang such checks are verification gates run once)
            return a
        if torch.allclose(a, b):  # maybe: D (as above)
            return b
        if any(v > 0 for v in a):  # want: D
            return a + b
        return a - b
