# source: pytorch/ignite https://github.com/pytorch/ignite/pull/967 — EpochMetric.update grew self._predictions / self._targets with torch.cat([self._predictions, y_pred], dim=0) on every iteration, re-copying everything seen so far (O(N^2) over an epoch); the fix appends per-batch tensors to lists and concatenates once in compute().
import warnings

import torch


class Metric:
    def __init__(self, output_transform=lambda x: x, device="cpu"):
        self._output_transform = output_transform
        self._device = device
        self.reset()


class EpochMetric(Metric):
    def __init__(self, compute_fn, output_transform=lambda x: x):
        if not callable(compute_fn):
            raise TypeError("Argument compute_fn should be callable.")
        self.compute_fn = compute_fn
        super(EpochMetric, self).__init__(output_transform=output_transform, device="cpu")

    def reset(self):
        self._predictions = torch.tensor([], dtype=torch.float32)
        self._targets = torch.tensor([], dtype=torch.long)

    def _check_shape(self, output):
        y_pred, y = output
        if y_pred.ndimension() not in (1, 2):
            raise ValueError("Predictions should be of shape (batch_size, n_classes) or (batch_size, ).")
        if y.ndimension() not in (1, 2):
            raise ValueError("Targets should be of shape (batch_size, n_classes) or (batch_size, ).")

    def update(self, output):
        self._check_shape(output)
        y_pred, y = output[0].detach(), output[1].detach()

        if y_pred.ndimension() == 2 and y_pred.shape[1] == 1:
            y_pred = y_pred.squeeze(dim=-1)
        if y.ndimension() == 2 and y.shape[1] == 1:
            y = y.squeeze(dim=-1)

        y_pred = y_pred.to(self._predictions)
        y = y.to(self._targets)

        self._predictions = torch.cat([self._predictions, y_pred], dim=0)  # want: C
        self._targets = torch.cat([self._targets, y], dim=0)  # want: C

        # Check once the signature and execution of compute_fn
        if self._predictions.shape == y_pred.shape:
            try:
                self.compute_fn(self._predictions, self._targets)
            except Exception as e:
                warnings.warn("Probably, there can be a problem with `compute_fn`:\n {}.".format(e), RuntimeWarning)

    def compute(self):
        return self.compute_fn(self._predictions, self._targets)


class EpochMetricFixed(EpochMetric):
    def reset(self):
        self._predictions = []
        self._targets = []

    def update(self, output):
        self._check_shape(output)
        y_pred, y = output[0].detach(), output[1].detach()

        if y_pred.ndimension() == 2 and y_pred.shape[1] == 1:
            y_pred = y_pred.squeeze(dim=-1)
        if y.ndimension() == 2 and y.shape[1] == 1:
            y = y.squeeze(dim=-1)

        self._predictions.append(y_pred.clone())
        self._targets.append(y.clone())

        # Check once the signature and execution of compute_fn
        if len(self._predictions) == 1:
            try:
                self.compute_fn(self._predictions[0], self._targets[0])
            except Exception as e:
                warnings.warn("Probably, there can be a problem with `compute_fn`:\n {}.".format(e), RuntimeWarning)

    def compute(self):
        _prediction_tensor = torch.cat(self._predictions, dim=0)
        _target_tensor = torch.cat(self._targets, dim=0)
        return self.compute_fn(_prediction_tensor, _target_tensor)


def accuracy_fn(y_pred, y):
    return ((y_pred > 0.5).long() == y).float().mean().item()


if __name__ == "__main__":
    torch.manual_seed(0)
    m_bug, m_fix = EpochMetric(accuracy_fn), EpochMetricFixed(accuracy_fn)
    copied = 0
    ptrs = set()
    for _ in range(50):
        y_pred = torch.rand(64, 1)
        y = torch.randint(0, 2, (64, 1))
        m_bug.update((y_pred, y))
        m_fix.update((y_pred, y))
        copied += m_bug._predictions.numel()
        ptrs.add(m_bug._predictions.data_ptr())
    assert abs(m_bug.compute() - m_fix.compute()) < 1e-6
    print("buggy: elements copied by per-update cat:", copied, "distinct buffers:", len(ptrs))
    print("fixed: elements kept:", sum(p.numel() for p in m_fix._predictions), "(one cat in compute)")
