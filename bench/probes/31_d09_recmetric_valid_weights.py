# source: meta-pytorch/torchrec https://github.com/meta-pytorch/torchrec/pull/408 — `RecMetric._update` gated every metric update on `if torch.any(has_valid_weights)` (fused mode) and `if has_valid_weights[0]` (per-task mode), where has_valid_weights is a device tensor, so each training step's metric update synchronised CPU and GPU; the fix puts the check behind an opt-in `should_validate_update` flag and by default updates unconditionally, folding validity into the `has_valid_update` state on device. (The look-alike shows the default, flag-off path.)
from dataclasses import dataclass
from enum import Enum

import torch
import torch.nn as nn


class RecComputeMode(Enum):
    FUSED_TASKS_COMPUTATION = 1
    UNFUSED_TASKS_COMPUTATION = 2


@dataclass
class RecTaskInfo:
    name: str


class NEMetricComputation(nn.Module):
    def __init__(self, n_tasks):
        super().__init__()
        self.register_buffer("weighted_sum_bce", torch.zeros(n_tasks, dtype=torch.double))
        self.register_buffer("weighted_num_samples", torch.zeros(n_tasks, dtype=torch.double))
        self.register_buffer("has_valid_update", torch.zeros(n_tasks, dtype=torch.uint8))

    def update(self, *, predictions, labels, weights):
        bce = nn.functional.binary_cross_entropy(predictions, labels, reduction="none")
        self.weighted_sum_bce += (bce * weights).sum(-1).double()
        self.weighted_num_samples += weights.sum(-1).double()


class NEMetric(nn.Module):
    def __init__(self, tasks, compute_mode):
        super().__init__()
        self._tasks = tasks
        self._compute_mode = compute_mode
        if compute_mode == RecComputeMode.FUSED_TASKS_COMPUTATION:
            self._metrics_computations = nn.ModuleList([NEMetricComputation(len(tasks))])
        else:
            self._metrics_computations = nn.ModuleList([NEMetricComputation(1) for _ in tasks])

    def _check_nonempty_weights(self, weights):
        return torch.gt(torch.count_nonzero(weights, dim=-1), 0)

    def _update(self, *, predictions, labels, weights):
        with torch.no_grad():
            if self._compute_mode == RecComputeMode.FUSED_TASKS_COMPUTATION:
                predictions = torch.stack([predictions[t.name] for t in self._tasks])
                labels = torch.stack([labels[t.name] for t in self._tasks])
                weights = torch.stack([weights[t.name] for t in self._tasks])
                has_valid_weights = self._check_nonempty_weights(weights)
                if torch.any(has_valid_weights):  # want: D
                    self._metrics_computations[0].update(predictions=predictions, labels=labels, weights=weights)
                    self._metrics_computations[0].has_valid_update.logical_or_(has_valid_weights)
            else:
                for task, metric_ in zip(self._tasks, self._metrics_computations):
                    task_predictions = predictions[task.name].view(1, -1)
                    task_labels = labels[task.name].view(1, -1)
                    task_weights = weights[task.name].view(1, -1)
                    has_valid_weights = self._check_nonempty_weights(task_weights)
                    if has_valid_weights[0]:  # want: D
                        metric_.update(predictions=task_predictions, labels=task_labels, weights=task_weights)
                        metric_.has_valid_update.logical_or_(has_valid_weights)


class NEMetricFixed(NEMetric):
    def _update(self, *, predictions, labels, weights):
        with torch.no_grad():
            if self._compute_mode == RecComputeMode.FUSED_TASKS_COMPUTATION:
                predictions = torch.stack([predictions[t.name] for t in self._tasks])
                labels = torch.stack([labels[t.name] for t in self._tasks])
                weights = torch.stack([weights[t.name] for t in self._tasks])
                # all-zero weights contribute nothing to the weighted sums: no host-side gate needed
                self._metrics_computations[0].update(predictions=predictions, labels=labels, weights=weights)
                self._metrics_computations[0].has_valid_update.logical_or_(self._check_nonempty_weights(weights))
            else:
                for task, metric_ in zip(self._tasks, self._metrics_computations):
                    task_predictions = predictions[task.name].view(1, -1)
                    task_labels = labels[task.name].view(1, -1)
                    task_weights = weights[task.name].view(1, -1)
                    metric_.update(predictions=task_predictions, labels=task_labels, weights=task_weights)
                    metric_.has_valid_update.logical_or_(self._check_nonempty_weights(task_weights))


if __name__ == "__main__":
    torch.manual_seed(0)
    tasks = [RecTaskInfo("ctr"), RecTaskInfo("cvr")]
    for mode in RecComputeMode:
        bug, fix = NEMetric(tasks, mode), NEMetricFixed(tasks, mode)
        for step in range(4):
            preds = {t.name: torch.rand(16) for t in tasks}
            labels = {t.name: (torch.rand(16) > 0.5).float() for t in tasks}
            weights = {t.name: torch.ones(16) if step % 2 else torch.zeros(16) for t in tasks}
            bug._update(predictions=preds, labels=labels, weights=weights)
            fix._update(predictions=preds, labels=labels, weights=weights)
        for a, b in zip(bug.buffers(), fix.buffers()):
            assert torch.allclose(a.double(), b.double())
    print("metric states match in both compute modes")
