# source: jcjohnson/densecap https://github.com/jcjohnson/densecap/pull/23 (review by jcjohnson on densecap/modules/BoxSampler.lua) — the workaround self.pos_mask:typeAs(input_max_iou):scatter(2, target_idx, 1) made every target's best box positive on a type-converted copy, so "self.pos_mask will end up unchanged"; reconstructed here in PyTorch, where .type_as() also returns a new tensor when the dtype differs
import torch
from torch import nn


def box_iou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a: [B, N, 4], b: [B, M, 4] (x1, y1, x2, y2) -> [B, N, M]"""
    lt = torch.maximum(a[:, :, None, :2], b[:, None, :, :2])
    rb = torch.minimum(a[:, :, None, 2:], b[:, None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    area = lambda x: (x[..., 2] - x[..., 0]) * (x[..., 3] - x[..., 1])  # noqa: E731
    return inter / (area(a)[:, :, None] + area(b)[:, None, :] - inter)


class BoxSampler(nn.Module):
    def __init__(self, low_thresh=0.3, high_thresh=0.7):
        super().__init__()
        self.low_thresh, self.high_thresh = low_thresh, high_thresh

    def forward(self, input_boxes, target_boxes):
        ious = box_iou(input_boxes, target_boxes)  # [B, N, M]
        input_max_iou, input_idx = ious.max(dim=2)  # [B, N]
        _, target_idx = ious.max(dim=1)  # [B, M]: best input box for each target
        self.pos_mask = input_max_iou > self.high_thresh
        self.neg_mask = input_max_iou < self.low_thresh
        # Make sure every target box gets at least one positive input box, even if its IoU is low.
        self.pos_mask.type_as(input_max_iou).scatter_(1, target_idx, 1)  # want: B
        self.neg_mask.type_as(input_max_iou).scatter_(1, target_idx, 0)  # want: B
        return self.pos_mask, self.neg_mask, input_idx


class BoxSamplerFixed(BoxSampler):
    def forward(self, input_boxes, target_boxes):
        ious = box_iou(input_boxes, target_boxes)
        input_max_iou, input_idx = ious.max(dim=2)
        _, target_idx = ious.max(dim=1)
        self.pos_mask = input_max_iou > self.high_thresh
        self.neg_mask = input_max_iou < self.low_thresh
        self.pos_mask.scatter_(1, target_idx, True)  # bool scatter_ with a scalar: in place
        self.neg_mask.scatter_(1, target_idx, False)
        return self.pos_mask, self.neg_mask, input_idx


if __name__ == "__main__":
    inputs = torch.tensor([[[0, 0, 10, 10], [20, 20, 30, 30], [0, 0, 4, 4], [50, 50, 60, 60]]], dtype=torch.float)
    targets = torch.tensor([[[0, 0, 10, 10], [40, 40, 52, 52]]], dtype=torch.float)  # target 1 overlaps nothing well
    pos, neg, _ = BoxSampler()(inputs, targets)
    pos_f, neg_f, _ = BoxSamplerFixed()(inputs, targets)
    assert pos.tolist() == [[True, False, False, False]]  # target 1's best box (index 3) never made positive
    assert pos_f.tolist() == [[True, False, False, True]]
    assert neg[0, 3] and not neg_f[0, 3]
    print("ok: scatter_ on pos_mask.type_as(...) marked positives in a copy")
