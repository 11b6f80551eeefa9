# source: pytorch/vision https://github.com/pytorch/vision/pull/9518 — The box-loss helper _loss_inter_union, used by generalized_box_iou_loss and distance_box_iou_loss in every detector training step, filled the intersection with boolean-mask indexing (intsctk[mask] = ...). Indexing with a boolean mask goes through nonzero and forces a GPU-to-CPU sync (and a torch.compile graph break); the PR replaces the masking with a clamp of the intersection extents.
import torch
from torch import Tensor


def _upcast_non_float(t: Tensor) -> Tensor:
    if t.dtype not in (torch.float32, torch.float64):
        return t.float()
    return t


def _loss_inter_union(boxes1: Tensor, boxes2: Tensor):
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)

    # Intersection keypoints
    xkis1 = torch.max(x1, x1g)
    ykis1 = torch.max(y1, y1g)
    xkis2 = torch.min(x2, x2g)
    ykis2 = torch.min(y2, y2g)

    intsctk = torch.zeros_like(x1)
    mask = (ykis2 > ykis1) & (xkis2 > xkis1)
    intsctk[mask] = (xkis2[mask] - xkis1[mask]) * (ykis2[mask] - ykis1[mask])  # want: D
    unionk = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intsctk
    return intsctk, unionk


def _loss_inter_union_fixed(boxes1: Tensor, boxes2: Tensor):
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)

    # Intersection keypoints
    xkis1 = torch.max(x1, x1g)
    ykis1 = torch.max(y1, y1g)
    xkis2 = torch.min(x2, x2g)
    ykis2 = torch.min(y2, y2g)

    intsctk = (xkis2 - xkis1).clamp(min=0) * (ykis2 - ykis1).clamp(min=0)
    unionk = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intsctk
    return intsctk, unionk


def generalized_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7, _inter_union=_loss_inter_union):
    boxes1 = _upcast_non_float(boxes1)
    boxes2 = _upcast_non_float(boxes2)
    intsctk, unionk = _inter_union(boxes1, boxes2)
    iouk = intsctk / (unionk + eps)

    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)

    # smallest enclosing box
    xc1 = torch.min(x1, x1g)
    yc1 = torch.min(y1, y1g)
    xc2 = torch.max(x2, x2g)
    yc2 = torch.max(y2, y2g)

    area_c = (xc2 - xc1) * (yc2 - yc1)
    miouk = iouk - ((area_c - unionk) / (area_c + eps))
    loss = 1 - miouk

    if reduction == "none":
        pass
    elif reduction == "mean":
        loss = loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
    elif reduction == "sum":
        loss = loss.sum()
    else:
        raise ValueError(f"Invalid Value for arg 'reduction': '{reduction}'")
    return loss


def generalized_box_iou_loss_fixed(boxes1, boxes2, reduction="none", eps=1e-7):
    return generalized_box_iou_loss(boxes1, boxes2, reduction, eps, _inter_union=_loss_inter_union_fixed)


if __name__ == "__main__":
    torch.manual_seed(0)
    xy = torch.rand(64, 2) * 10
    wh = torch.rand(64, 2) * 5 + 0.1
    boxes1 = torch.cat([xy, xy + wh], dim=-1)
    xy2 = xy + torch.randn(64, 2) * 3
    boxes2 = torch.cat([xy2, xy2 + wh], dim=-1)
    a = generalized_box_iou_loss(boxes1, boxes2, reduction="none")
    b = generalized_box_iou_loss_fixed(boxes1, boxes2, reduction="none")
    assert torch.allclose(a, b)
    print("ok")
