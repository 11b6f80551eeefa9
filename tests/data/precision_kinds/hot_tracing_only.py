# VL304/VL401: a helper called only under `if torchvision._is_tracing():` (ONNX export) is not a hot
# path, and out-of-place scatter is what ONNX needs (torchvision poolers.py:32, roi_heads.py:223)
import torch
import torchvision
from torch import nn


@torch.jit.unused
def _onnx_merge(levels: torch.Tensor, results: list) -> torch.Tensor:
    first = results[0]
    res = torch.zeros((levels.size(0), first.size(1)), dtype=first.dtype, device=first.device)
    for level in range(len(results)):
        index = torch.where(levels == level)[0].view(-1, 1).expand(-1, first.size(1))
        res = res.scatter(0, index, results[level])
    return res


class Pooler(nn.Module):
    def forward(self, levels: torch.Tensor, results: list) -> torch.Tensor:
        if torchvision._is_tracing():
            return _onnx_merge(levels, results)
        out = torch.zeros_like(results[0])
        return out
