# source: Lightning-AI/torchmetrics https://github.com/Lightning-AI/torchmetrics/pull/3295 — _binary_logauc_compute rebuilt `fpr_range` (already a tensor) with torch.tensor(fpr_range) for the log10 bounds, a copy-construct from a tensor on every call (issue #3278 UserWarning); the fix takes log10 of the existing tensor.
import warnings

import torch
from torch import Tensor


def interp(x, xp, fp):
    """One-dimensional linear interpolation for monotonically increasing sample points."""
    m = (fp[1:] - fp[:-1]) / (xp[1:] - xp[:-1])
    b = fp[:-1] - (m * xp[:-1])
    indices = torch.sum(torch.ge(x[:, None], xp[None, :]), 1) - 1
    indices = torch.clamp(indices, 0, len(m) - 1)
    return m[indices] * x + b[indices]


def _auc_compute_without_check(x, y, direction):
    return torch.trapz(y, x) * direction


def binary_roc(preds, target):
    order = torch.argsort(preds, descending=True)
    target = target[order].float()
    tps = torch.cumsum(target, 0)
    fps = torch.cumsum(1 - target, 0)
    tps = torch.cat([torch.zeros(1), tps])
    fps = torch.cat([torch.zeros(1), fps])
    return fps / fps[-1], tps / tps[-1]


def _binary_logauc_compute(fpr, tpr, fpr_range=(0.001, 0.1)):
    fpr_range = torch.tensor(fpr_range).to(fpr.device)  # maybe: C (builds on host, then a second copy to the device)
    if fpr.numel() < 2 or tpr.numel() < 2:
        return torch.tensor(0.0, device=fpr.device)

    tpr = torch.cat([tpr, interp(fpr_range, fpr, tpr)]).sort().values
    fpr = torch.cat([fpr, fpr_range]).sort().values

    log_fpr = torch.log10(fpr)
    bounds = torch.log10(torch.tensor(fpr_range))  # want: C

    lower_bound_idx = torch.where(log_fpr == bounds[0])[0][-1]
    upper_bound_idx = torch.where(log_fpr == bounds[1])[0][-1]

    trimmed_log_fpr = log_fpr[lower_bound_idx : upper_bound_idx + 1]
    trimmed_tpr = tpr[lower_bound_idx : upper_bound_idx + 1]

    # compute area and rescale it to the range of fpr
    return _auc_compute_without_check(trimmed_log_fpr, trimmed_tpr, 1.0) / (bounds[1] - bounds[0])


def _binary_logauc_compute_fixed(fpr, tpr, fpr_range=(0.001, 0.1)):
    fpr_range = torch.tensor(fpr_range, device=fpr.device)
    if fpr.numel() < 2 or tpr.numel() < 2:
        return torch.tensor(0.0, device=fpr.device)

    tpr = torch.cat([tpr, interp(fpr_range, fpr, tpr)]).sort().values
    fpr = torch.cat([fpr, fpr_range]).sort().values

    log_fpr = torch.log10(fpr)
    bounds = torch.log10(fpr_range)

    lower_bound_idx = torch.where(log_fpr == bounds[0])[0][-1]
    upper_bound_idx = torch.where(log_fpr == bounds[1])[0][-1]

    trimmed_log_fpr = log_fpr[lower_bound_idx : upper_bound_idx + 1]
    trimmed_tpr = tpr[lower_bound_idx : upper_bound_idx + 1]
    return _auc_compute_without_check(trimmed_log_fpr, trimmed_tpr, 1.0) / (bounds[1] - bounds[0])


def binary_logauc(preds: Tensor, target: Tensor, fpr_range=(0.001, 0.1), fixed=False):
    fpr, tpr = binary_roc(preds, target)
    fn = _binary_logauc_compute_fixed if fixed else _binary_logauc_compute
    return fn(fpr, tpr, fpr_range)


if __name__ == "__main__":
    torch.manual_seed(0)
    preds = torch.rand(2000)
    target = (torch.rand(2000) < preds).long()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        score_b = binary_logauc(preds, target)
    n_b = sum("copy construct" in str(w.message) for w in caught)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        score_f = binary_logauc(preds, target, fixed=True)
    n_f = sum("copy construct" in str(w.message) for w in caught)
    print("copy-construct warnings buggy/fixed:", n_b, n_f)
    print("scores:", float(score_b), float(score_f))
    assert torch.allclose(score_b, score_f)
