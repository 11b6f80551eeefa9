# VL403/VL404: a device held in a local (`host = torch.device("cpu")`) moves what `.to(host)` gives to the
# host: its masks and truth tests do not sync (kornia geometry/ransac.py:1484)
import torch
from torch import nn


class Estimator(nn.Module):
    def forward(self, kp: torch.Tensor) -> torch.Tensor:
        host = torch.device("cpu")
        kp_host = kp.detach().to(host).double()
        finite = torch.isfinite(kp_host).all(1)
        kp_host = kp_host[finite]
        if kp_host.sum() < 0:
            return kp
        return kp_host.to(kp.device)
