# source: Lightning-AI/torchmetrics https://github.com/Lightning-AI/torchmetrics/pull/2640 — _safe_divide built its fallback with `torch.tensor(zero_division).float().to(num.device)`, a blocking host-to-device copy every time Accuracy was computed inside the training loop (issue #2638, "Accuracy incurs a GPU/CPU sync point"); the fix passes the Python float straight to torch.where.
import torch
from torch import Tensor, nn


def _safe_divide(num: Tensor, denom: Tensor, zero_division: float = 0.0) -> Tensor:
    """Safe division, by preventing division by zero.

    Function will cast to float if input is not already to secure backwards compatibility.
    """
    num = num if num.is_floating_point() else num.float()
    denom = denom if denom.is_floating_point() else denom.float()
    zero_division = torch.tensor(zero_division).float().to(num.device)  # want: D
    return torch.where(denom != 0, num / denom, zero_division)


def _safe_divide_fixed(num: Tensor, denom: Tensor, zero_division: float = 0.0) -> Tensor:
    num = num if num.is_floating_point() else num.float()
    denom = denom if denom.is_floating_point() else denom.float()
    return torch.where(denom != 0, num / denom, zero_division)


def _multiclass_stat_scores_update(preds, target, num_classes):
    preds = preds.argmax(dim=1) if preds.ndim == target.ndim + 1 else preds
    preds_oh = nn.functional.one_hot(preds, num_classes)
    target_oh = nn.functional.one_hot(target, num_classes)
    tp = (preds_oh & target_oh).sum(0)
    fp = (preds_oh & ~target_oh.bool()).sum(0)
    fn = (~preds_oh.bool() & target_oh).sum(0)
    tn = target.shape[0] - tp - fp - fn
    return tp, fp, tn, fn


class MulticlassAccuracy(nn.Module):
    divide_fn = staticmethod(_safe_divide)

    def __init__(self, num_classes, average="macro"):
        super().__init__()
        self.num_classes = num_classes
        self.average = average
        for name in ("tp", "fp", "tn", "fn"):
            self.register_buffer(name, torch.zeros(num_classes, dtype=torch.long), persistent=False)

    def update(self, preds, target):
        tp, fp, tn, fn = _multiclass_stat_scores_update(preds, target, self.num_classes)
        self.tp += tp
        self.fp += fp
        self.tn += tn
        self.fn += fn

    def _reduce(self, tp, fp, tn, fn):
        if self.average == "micro":
            return self.divide_fn(tp.sum(), (tp + fn).sum())
        score = self.divide_fn(tp, tp + fn)
        return score.mean()

    def compute(self):
        return self._reduce(self.tp, self.fp, self.tn, self.fn)

    def forward(self, preds, target):
        # Metric.forward: batch value via a reduce on the batch statistics, then accumulate
        batch_stats = _multiclass_stat_scores_update(preds, target, self.num_classes)
        batch_val = self._reduce(*batch_stats)
        self.update(preds, target)
        return batch_val


class MulticlassAccuracyFixed(MulticlassAccuracy):
    divide_fn = staticmethod(_safe_divide_fixed)


def training_loop(metric, steps=10):
    torch.manual_seed(0)
    model = nn.Linear(12, 5)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batch_accs = []
    for _ in range(steps):
        x, y = torch.randn(32, 12), torch.randint(0, 5, (32,))
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        batch_accs.append(metric(logits.detach(), y))
    return torch.stack(batch_accs), metric.compute()


if __name__ == "__main__":
    a, acc_a = training_loop(MulticlassAccuracy(5))
    b, acc_b = training_loop(MulticlassAccuracyFixed(5))
    assert torch.allclose(a, b) and torch.allclose(acc_a, acc_b)
    print("epoch accuracy:", float(acc_b))
