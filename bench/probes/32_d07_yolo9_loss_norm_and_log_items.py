# source: LibreYOLO/libreyolo https://github.com/LibreYOLO/libreyolo/pull/765 — The yolo9 loss did five GPU syncs per training step: the class normaliser came back as a Python float (`max(...)`/`.item()`), and the per-component logging values plus `num_fg` were `.item()`-ed inside the loss; the fix returns a 0-dim tensor from `_global_cls_norm`, keeps the logging entries as detached tensors, and converts them with one stacked `.cpu()` only when the trainer logs.
import torch
import torch.nn.functional as F
from torch import nn


class YOLO9Loss:
    def __init__(self, num_classes, box_weight=7.5, cls_weight=0.5):
        self.num_classes = num_classes
        self.box_weight = box_weight
        self.cls_weight = cls_weight
        self.bce = nn.BCEWithLogitsLoss(reduction="none")

    def _global_cls_norm(self, targets_cls):
        cls_norm = targets_cls.sum()
        return max(cls_norm.item(), 1.0)  # want: D

    def __call__(self, preds_cls, preds_box, targets_cls, targets_bbox, valid_masks):
        B = preds_cls.shape[0]
        cls_norm = self._global_cls_norm(targets_cls)
        box_norm = targets_cls.sum(-1) * valid_masks

        loss_cls = self.bce(preds_cls, targets_cls).sum() * (1.0 / cls_norm)
        l1 = (preds_box - targets_bbox).abs().sum(-1)
        loss_box = (l1 * box_norm).sum() * (1.0 / cls_norm)

        loss_box_weighted = self.box_weight * loss_box
        loss_cls_weighted = self.cls_weight * loss_cls
        total_loss = loss_box_weighted + loss_cls_weighted

        loss_dict = {
            "total_loss": total_loss,
            "box_loss": loss_box_weighted,
            "cls_loss": loss_cls_weighted,
            # Scalar values for logging
            "box": loss_box_weighted.item(),  # want: D
            "cls": loss_cls_weighted.item(),  # want: D
            "num_fg": valid_masks.sum().item() / max(B, 1),  # want: D
        }
        return loss_dict


class YOLO9LossFixed(YOLO9Loss):
    def _global_cls_norm(self, targets_cls):
        return targets_cls.sum().clamp(min=1.0)

    def __call__(self, preds_cls, preds_box, targets_cls, targets_bbox, valid_masks):
        B = preds_cls.shape[0]
        cls_norm = self._global_cls_norm(targets_cls)
        box_norm = targets_cls.sum(-1) * valid_masks

        loss_cls = self.bce(preds_cls, targets_cls).sum() * (1.0 / cls_norm)
        l1 = (preds_box - targets_bbox).abs().sum(-1)
        loss_box = (l1 * box_norm).sum() * (1.0 / cls_norm)

        loss_box_weighted = self.box_weight * loss_box
        loss_cls_weighted = self.cls_weight * loss_cls
        total_loss = loss_box_weighted + loss_cls_weighted

        return {
            "total_loss": total_loss,
            "box_loss": loss_box_weighted,
            "cls_loss": loss_cls_weighted,
            # detached tensors; the trainer converts them in one transfer when it logs
            "box": loss_box_weighted.detach(),
            "cls": loss_cls_weighted.detach(),
            "num_fg": valid_masks.sum() / max(B, 1),
        }


if __name__ == "__main__":
    torch.manual_seed(0)
    B, A, C = 2, 50, 3
    preds_cls = torch.randn(B, A, C, requires_grad=True)
    preds_box = torch.randn(B, A, 4, requires_grad=True)
    valid_masks = torch.rand(B, A) > 0.8
    targets_cls = torch.rand(B, A, C) * valid_masks[..., None]
    targets_bbox = torch.randn(B, A, 4)
    a = YOLO9Loss(C)(preds_cls, preds_box, targets_cls, targets_bbox, valid_masks)
    b = YOLO9LossFixed(C)(preds_cls, preds_box, targets_cls, targets_bbox, valid_masks)
    torch.testing.assert_close(a["total_loss"], b["total_loss"])
    b["total_loss"].backward()
    print("loss keys:", sorted(b))
