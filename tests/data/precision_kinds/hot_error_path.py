# VL404: `torch.where` inside `if bad.any():` right before `torch._assert(False, ...)` runs only on the
# error path (torchvision generalized_rcnn.py:106)
import torch
from torch import nn


class Detector(nn.Module):
    def forward(self, images: torch.Tensor, targets: list) -> torch.Tensor:
        for i, target in enumerate(targets):
            boxes = target["boxes"]
            degenerate = boxes[:, 2:] <= boxes[:, :2]
            if degenerate.any():
                bb_idx = torch.where(degenerate.any(dim=1))[0][0]
                bad = boxes[bb_idx].tolist()
                torch._assert(False, f"invalid box {bad} for target {i}")
        return images
