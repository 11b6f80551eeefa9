# VL101: pieces of one flat buffer that together cover it, pointed into parameters with
# `param.data = piece`, pin nothing extra; the object also keeps the buffer (vllm kimi_k3 dsa.py:729)
import torch
from torch import nn


class Fuser(nn.Module):
    def __init__(self, a: nn.Linear, b: nn.Linear):
        super().__init__()
        self.a, self.b = a, b
        self._packed = []

    def pack(self) -> None:
        linears = (self.a, self.b)
        packed = torch.cat([lin.weight.data for lin in linears])
        rows = [lin.weight.shape[0] for lin in linears]
        for lin, view in zip(linears, packed.split(rows)):
            lin.weight.data = view
        self._packed.append(packed)
