import torch
from torch import nn


class QKVParallelLinear(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(3 * n, d))

    def weight_loader(self, param: nn.Parameter, loaded: torch.Tensor, shard: str):
        offset = {"q": 0, "k": 1, "v": 2}[shard] * loaded.shape[0]
        param.data.narrow(0, offset, loaded.shape[0]).copy_(loaded)

    def forward(self, x):
        w = self.weight.t().contiguous()  # want: C
        return x @ w
