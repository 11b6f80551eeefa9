# source: Lightning-AI/torchmetrics https://github.com/Lightning-AI/torchmetrics/pull/2840 — classification `*_format` helpers (called from every `Metric.update`) did `if not torch.all((preds >= 0) * (preds <= 1)): preds = preds.sigmoid()`, a device->host sync per update; the fix added `normalize_logits_if_needed`, which uses `torch.where` on device (keeping the `if` only for CPU tensors).
from typing import Literal, Optional

import torch
from torch import Tensor


def _binary_stat_scores_format(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    ignore_index: Optional[int] = None,
) -> tuple[Tensor, Tensor]:
    """Convert all input to label format.

    - If preds tensor is floating point, applies sigmoid if pred tensor not in [0,1] range
    - If preds tensor is floating point, thresholds afterwards
    - Mask all datapoints that should be ignored with negative values
    """
    if preds.is_floating_point():
        if not torch.all((preds >= 0) * (preds <= 1)):  # want: D
            # preds is logits, convert with sigmoid
            preds = preds.sigmoid()
        preds = preds > threshold

    preds = preds.reshape(preds.shape[0], -1)
    target = target.reshape(target.shape[0], -1)

    if ignore_index is not None:
        idx = target == ignore_index
        target = target.clone()
        target[idx] = -1

    return preds, target


def normalize_logits_if_needed(tensor: Tensor, normalization: Literal["sigmoid", "softmax"]) -> Tensor:
    """Normalize logits if needed (fixed version). Use torch.where to prevent device-host sync."""
    # decrease sigmoid on cpu .
    if tensor.device == torch.device("cpu"):
        if not torch.all((tensor >= 0) * (tensor <= 1)):
            tensor = tensor.sigmoid() if normalization == "sigmoid" else torch.softmax(tensor, dim=1)
        return tensor

    # decrease device-host sync on device .
    condition = ((tensor < 0) | (tensor > 1)).any()
    return torch.where(
        condition,
        torch.sigmoid(tensor) if normalization == "sigmoid" else torch.softmax(tensor, dim=1),
        tensor,
    )


def _binary_stat_scores_format_fixed(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    ignore_index: Optional[int] = None,
) -> tuple[Tensor, Tensor]:
    if preds.is_floating_point():
        preds = normalize_logits_if_needed(preds, "sigmoid")
        preds = preds > threshold

    preds = preds.reshape(preds.shape[0], -1)
    target = target.reshape(target.shape[0], -1)

    if ignore_index is not None:
        idx = target == ignore_index
        target = target.clone()
        target[idx] = -1

    return preds, target


def _binary_stat_scores_update(
    preds: Tensor,
    target: Tensor,
    multidim_average: Literal["global", "samplewise"] = "global",
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Compute the statistics."""
    sum_dim = [0, 1] if multidim_average == "global" else [1]
    tp = ((target == preds) & (target == 1)).sum(sum_dim).squeeze()
    fn = ((target != preds) & (target == 1)).sum(sum_dim).squeeze()
    fp = ((target != preds) & (target == 0)).sum(sum_dim).squeeze()
    tn = ((target == preds) & (target == 0)).sum(sum_dim).squeeze()
    return tp, fp, tn, fn


class _AbstractStatScores(torch.nn.Module):
    def __init__(self, multidim_average="global"):
        super().__init__()
        self.multidim_average = multidim_average
        for name in ("tp", "fp", "tn", "fn"):
            self.register_buffer(name, torch.zeros((), dtype=torch.long))

    def _update_state(self, tp: Tensor, fp: Tensor, tn: Tensor, fn: Tensor) -> None:
        self.tp += tp
        self.fp += fp
        self.tn += tn
        self.fn += fn


class BinaryStatScores(_AbstractStatScores):
    def __init__(self, threshold=0.5, ignore_index=None):
        super().__init__()
        self.threshold = threshold
        self.ignore_index = ignore_index

    def update(self, preds: Tensor, target: Tensor) -> None:
        """Update state with predictions and targets."""
        preds, target = _binary_stat_scores_format(preds, target, self.threshold, self.ignore_index)
        tp, fp, tn, fn = _binary_stat_scores_update(preds, target, self.multidim_average)
        self._update_state(tp, fp, tn, fn)

    def compute(self) -> Tensor:
        return torch.stack([self.tp, self.fp, self.tn, self.fn, self.tp + self.fn])


class BinaryStatScoresFixed(BinaryStatScores):
    def update(self, preds: Tensor, target: Tensor) -> None:
        preds, target = _binary_stat_scores_format_fixed(preds, target, self.threshold, self.ignore_index)
        tp, fp, tn, fn = _binary_stat_scores_update(preds, target, self.multidim_average)
        self._update_state(tp, fp, tn, fn)


if __name__ == "__main__":
    torch.manual_seed(0)
    m, mf = BinaryStatScores(ignore_index=-1), BinaryStatScoresFixed(ignore_index=-1)
    for _ in range(5):  # validation loop: update once per batch
        logits = torch.randn(8, 10)
        target = torch.randint(0, 2, (8, 10))
        m.update(logits, target)
        mf.update(logits, target)
    print(m.compute().tolist(), mf.compute().tolist())
