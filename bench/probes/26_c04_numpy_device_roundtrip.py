# source: ultralytics/ultralytics https://github.com/ultralytics/ultralytics/pull/25344 — BaseValidator.match_predictions built its numpy `correct` matrix and returned `torch.tensor(correct, ..., device=pred_classes.device)`, which every validator's _process_batch immediately turned back with `.cpu().numpy()`; the fix returns `torch.from_numpy(correct)` (no copy, no device round trip).
from typing import Any

import numpy as np
import torch


def box_iou(box1, box2, eps=1e-7):
    (a1, a2), (b1, b2) = box1.float().unsqueeze(1).chunk(2, 2), box2.float().unsqueeze(0).chunk(2, 2)
    inter = (torch.min(a2, b2) - torch.max(a1, b1)).clamp_(0).prod(2)
    return inter / ((a2 - a1).prod(2) + (b2 - b1).prod(2) - inter + eps)


class BaseValidator:
    def __init__(self):
        self.iouv = torch.linspace(0.5, 0.95, 10)
        self.niou = self.iouv.numel()

    def match_predictions(self, pred_classes, true_classes, iou, use_scipy=False):
        # Dx10 matrix, where D - detections, 10 - IoU thresholds
        correct = np.zeros((pred_classes.shape[0], self.iouv.shape[0])).astype(bool)
        # LxD matrix where L - labels (rows), D - detections (columns)
        correct_class = true_classes[:, None] == pred_classes
        iou = iou * correct_class  # zero out the wrong classes
        iou = iou.cpu().numpy()
        for i, threshold in enumerate(self.iouv.cpu().tolist()):
            matches = np.nonzero(iou >= threshold)  # IoU > threshold and classes match
            matches = np.array(matches).T
            if matches.shape[0]:
                if matches.shape[0] > 1:
                    matches = matches[iou[matches[:, 0], matches[:, 1]].argsort()[::-1]]
                    matches = matches[np.unique(matches[:, 1], return_index=True)[1]]
                    matches = matches[np.unique(matches[:, 0], return_index=True)[1]]
                correct[matches[:, 1].astype(int), i] = True
        return torch.tensor(correct, dtype=torch.bool, device=pred_classes.device)  # want: C


class Metrics:
    def __init__(self):
        self.stats = {"tp": [], "conf": [], "pred_cls": [], "target_cls": []}

    def update_stats(self, stat):
        for k in self.stats:
            self.stats[k].append(stat[k])


class DetectionValidator(BaseValidator):
    def __init__(self):
        super().__init__()
        self.metrics = Metrics()

    def _prepare_batch(self, si, batch):
        idx = batch["batch_idx"] == si
        return {"cls": batch["cls"][idx].squeeze(-1), "bboxes": batch["bboxes"][idx]}

    def _process_batch(self, preds: dict, batch: dict[str, Any]):
        if batch["cls"].shape[0] == 0 or preds["cls"].shape[0] == 0:
            return {"tp": np.zeros((preds["cls"].shape[0], self.niou), dtype=bool)}
        iou = box_iou(batch["bboxes"], preds["bboxes"])
        return {"tp": self.match_predictions(preds["cls"], batch["cls"], iou).cpu().numpy()}

    def update_metrics(self, preds, batch):
        for si, pred in enumerate(preds):
            pbatch = self._prepare_batch(si, batch)
            cls = pbatch["cls"].cpu().numpy()
            self.metrics.update_stats(
                {
                    **self._process_batch(pred, pbatch),
                    "target_cls": cls,
                    "conf": pred["conf"].cpu().numpy(),
                    "pred_cls": pred["cls"].cpu().numpy(),
                }
            )


def _rand_boxes(n):
    xy = torch.rand(n, 2) * 100
    return torch.cat([xy, xy + torch.rand(n, 2) * 50 + 1], 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    v = DetectionValidator()
    for _ in range(20):
        nimg = 4
        preds = [{"bboxes": _rand_boxes(30), "cls": torch.randint(0, 5, (30,)).float(), "conf": torch.rand(30)}
                 for _ in range(nimg)]
        nt = 40
        batch = {"batch_idx": torch.randint(0, nimg, (nt,)), "cls": torch.randint(0, 5, (nt, 1)).float(),
                 "bboxes": _rand_boxes(nt)}
        v.update_metrics(preds, batch)
    tp = np.concatenate(v.metrics.stats["tp"])
    print("ok", tp.shape, int(tp.sum()))
