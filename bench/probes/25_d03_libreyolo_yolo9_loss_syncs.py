# source: LibreYOLO/libreyolo issue #763 ("Training-speed quick wins ... device-sync storms", item 3: "the yolo9 loss does five GPU syncs per training step"), fixed by PR #765 — YOLO9Loss.__call__ normalized by `max(targets_cls.sum(), 1)` (Python max over a device scalar) and built its logging dict with four `.item()` reads (box, dfl, cls, num_fg) on every training step; the fix keeps the normalizer a 0-dim tensor and returns detached tensors that get_loss_components moves with ONE stacked .cpu()
from typing import Dict, List, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def box_iou_aligned(a: Tensor, b: Tensor) -> Tensor:
    lt = torch.max(a[..., :2], b[..., :2])
    rb = torch.min(a[..., 2:], b[..., 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    area_a = (a[..., 2:] - a[..., :2]).clamp(min=0).prod(-1)
    area_b = (b[..., 2:] - b[..., :2]).clamp(min=0).prod(-1)
    return inter / (area_a + area_b - inter + 1e-7)


class BoxMatcher:
    """Task-aligned assignment, reduced: anchors inside a target, top-k by alignment score."""

    def __init__(self, num_classes: int, anchor_grid: Tensor, topk: int = 4):
        self.num_classes = num_classes
        self.anchor_grid = anchor_grid
        self.topk = topk

    def __call__(self, target: Tensor, predict: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tensor]:
        predict_cls, predict_bbox = predict
        target_cls, target_bbox = target.split([1, 4], dim=-1)
        target_cls = target_cls.long().clamp(0)
        ax, ay = self.anchor_grid[None, None].unbind(-1)
        x1, y1, x2, y2 = target_bbox[:, :, None].unbind(-1)
        grid_mask = (ax > x1) & (ax < x2) & (ay > y1) & (ay < y2)  # [B, T, A]
        iou = box_iou_aligned(target_bbox[:, :, None], predict_bbox[:, None])  # [B, T, A]
        cls_prob = torch.gather(predict_cls.sigmoid().transpose(1, 2), 1, target_cls.expand(-1, -1, predict_cls.size(1)))
        score = grid_mask * (iou ** 6) * (cls_prob ** 0.5)
        vals, idx = score.topk(self.topk, dim=-1)
        topk_mask = torch.zeros_like(score).scatter_(-1, idx, vals) > 0
        unique = (topk_mask * iou).argmax(1)  # [B, A]: best target per anchor
        valid_mask = topk_mask.any(1)  # [B, A]
        align_bbox = torch.gather(target_bbox, 1, unique[..., None].expand(-1, -1, 4))
        align_cls = F.one_hot(torch.gather(target_cls.squeeze(-1), 1, unique), self.num_classes).float()
        align_cls = align_cls * torch.gather(iou, 1, unique[:, None]).squeeze(1)[..., None] * valid_mask[..., None]
        return torch.cat([align_cls, align_bbox], dim=-1), valid_mask


class YOLO9Loss:
    def __init__(self, num_classes: int, anchor_grid: Tensor, box_weight=7.5, dfl_weight=1.5, cls_weight=0.5):
        self.num_classes = num_classes
        self.anchor_grid = anchor_grid
        self.matcher = BoxMatcher(num_classes, anchor_grid)
        self.box_weight, self.dfl_weight, self.cls_weight = box_weight, dfl_weight, cls_weight

    def cls_loss(self, preds_cls: Tensor, targets_cls: Tensor, cls_norm) -> Tensor:
        return F.binary_cross_entropy_with_logits(preds_cls, targets_cls, reduction="sum") / cls_norm

    def box_loss(self, preds_box: Tensor, targets_box: Tensor, valid_masks: Tensor, box_norm: Tensor, cls_norm) -> Tensor:
        iou = box_iou_aligned(preds_box[valid_masks], targets_box[valid_masks])  # maybe: D (boolean-mask index; kept by the PR)
        return ((1.0 - iou) * box_norm).sum() / cls_norm

    def dfl_loss(self, preds_box: Tensor, targets_box: Tensor, valid_masks: Tensor, box_norm: Tensor, cls_norm) -> Tensor:
        l1 = (preds_box - targets_box).abs().mean(-1)  # stand-in for the distribution focal loss
        return (l1 * valid_masks).sum() / cls_norm * 0.01

    def __call__(self, predictions: Tuple[Tensor, Tensor], targets: Tensor) -> Dict[str, object]:
        preds_cls, preds_box = predictions
        B = targets.shape[0]
        align_targets, valid_masks = self.matcher(targets, (preds_cls.detach(), preds_box.detach()))
        targets_cls, targets_bbox = torch.split(align_targets, (self.num_classes, 4), dim=-1)

        # Compute normalization factors
        cls_norm = max(targets_cls.sum(), 1)  # want: D
        box_norm = targets_cls.sum(-1)[valid_masks]  # maybe: D (boolean-mask index; kept by the PR)

        loss_cls = self.cls_loss(preds_cls, targets_cls, cls_norm)
        if valid_masks.any():  # maybe: D (branch on a device bool; kept by the PR)
            loss_box = self.box_loss(preds_box, targets_bbox, valid_masks, box_norm, cls_norm)
            loss_dfl = self.dfl_loss(preds_box, targets_bbox, valid_masks, box_norm, cls_norm)
        else:
            loss_box = preds_box.sum() * 0.0
            loss_dfl = preds_box.sum() * 0.0

        loss_box_weighted = self.box_weight * loss_box
        loss_dfl_weighted = self.dfl_weight * loss_dfl
        loss_cls_weighted = self.cls_weight * loss_cls
        total_loss = loss_box_weighted + loss_dfl_weighted + loss_cls_weighted

        return {
            "total_loss": total_loss,
            "box_loss": loss_box_weighted,
            "dfl_loss": loss_dfl_weighted,
            "cls_loss": loss_cls_weighted,
            # Scalar values for logging
            "box": loss_box_weighted.item()  # want: D
            if isinstance(loss_box_weighted, Tensor)
            else loss_box_weighted,
            "dfl": loss_dfl_weighted.item()  # want: D
            if isinstance(loss_dfl_weighted, Tensor)
            else loss_dfl_weighted,
            "cls": loss_cls_weighted.item()  # want: D
            if isinstance(loss_cls_weighted, Tensor)
            else loss_cls_weighted,
            "num_fg": valid_masks.sum().item() / max(B, 1),  # want: D
        }


class YOLO9LossPR765(YOLO9Loss):
    def _global_cls_norm(self, targets_cls: Tensor) -> Tensor:
        return targets_cls.sum().clamp(min=1)  # 0-dim tensor, stays on the device

    def __call__(self, predictions, targets):
        preds_cls, preds_box = predictions
        B = targets.shape[0]
        align_targets, valid_masks = self.matcher(targets, (preds_cls.detach(), preds_box.detach()))
        targets_cls, targets_bbox = torch.split(align_targets, (self.num_classes, 4), dim=-1)
        cls_norm = self._global_cls_norm(targets_cls)
        box_norm = targets_cls.sum(-1)[valid_masks]  # maybe: D (boolean-mask index; kept by the PR)
        loss_cls = self.cls_loss(preds_cls, targets_cls, cls_norm)
        if valid_masks.any():  # maybe: D (kept by the PR)
            loss_box = self.box_loss(preds_box, targets_bbox, valid_masks, box_norm, cls_norm)
            loss_dfl = self.dfl_loss(preds_box, targets_bbox, valid_masks, box_norm, cls_norm)
        else:
            loss_box = loss_dfl = preds_box.sum() * 0.0
        lb, ld, lc = self.box_weight * loss_box, self.dfl_weight * loss_dfl, self.cls_weight * loss_cls
        return {"total_loss": lb + ld + lc, "box_loss": lb, "dfl_loss": ld, "cls_loss": lc,
                "box": lb.detach(), "dfl": ld.detach(), "cls": lc.detach(), "num_fg": valid_masks.sum() / max(B, 1)}


def get_loss_components(loss_dict: Dict[str, object], keys=("box", "dfl", "cls", "num_fg")) -> List[float]:
    vals = [loss_dict[k] for k in keys]
    if all(isinstance(v, Tensor) for v in vals):
        return torch.stack([v.float() for v in vals]).cpu().tolist()  # maybe: D (one batched read per step, what the fix settles for)
    return [float(v) for v in vals]


class TinyHead(nn.Module):
    def __init__(self, num_classes: int, anchors: int):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.SiLU(), nn.Conv2d(16, 16, 3, 2, 1), nn.SiLU())
        self.cls = nn.Conv2d(16, num_classes, 1)
        self.reg = nn.Conv2d(16, 4, 1)

    def forward(self, x, anchor_grid, stride):
        f = self.backbone(x)
        cls = self.cls(f).flatten(2).transpose(1, 2)
        ltrb = F.softplus(self.reg(f)).flatten(2).transpose(1, 2) * stride
        boxes = torch.cat([anchor_grid - ltrb[..., :2], anchor_grid + ltrb[..., 2:]], dim=-1)
        return cls, boxes


def train_epoch(model, loss_fn, loader, opt, anchor_grid, stride, log_every=2):
    history = []
    for step, (imgs, targets) in enumerate(loader):
        loss_dict = loss_fn(model(imgs, anchor_grid, stride), targets)
        opt.zero_grad(set_to_none=True)
        loss_dict["total_loss"].backward()
        opt.step()
        if step % log_every == 0:
            history.append(get_loss_components(loss_dict))
    return history


if __name__ == "__main__":
    torch.manual_seed(0)
    nc, img, stride = 3, 32, 4
    g = img // stride
    ys, xs = torch.meshgrid(torch.arange(g), torch.arange(g), indexing="ij")
    anchor_grid = (torch.stack([xs, ys], -1).reshape(-1, 2).float() + 0.5) * stride
    loader = []
    for _ in range(4):
        xy = torch.rand(2, 3, 2) * 16
        wh = torch.rand(2, 3, 2) * 12 + 6
        cls = torch.randint(0, nc, (2, 3, 1)).float()
        loader.append((torch.randn(2, 3, img, img), torch.cat([cls, xy, xy + wh], -1)))
    out = []
    for loss_cls in (YOLO9Loss, YOLO9LossPR765):
        torch.manual_seed(1)
        model = TinyHead(nc, g * g)
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        out.append(train_epoch(model, loss_cls(nc, anchor_grid), loader, opt, anchor_grid, stride))
    for a, b in zip(*out):
        assert all(abs(x - y) < 1e-4 for x, y in zip(a, b))
    print("ok", [round(v, 3) for v in out[1][-1]])
