# source: pytorch/ignite https://github.com/pytorch/ignite/pull/1314 — CanberraMetric kept a Python float accumulator and did `self._sum_of_errors += torch.sum(errors).item()` in every update (a blocking device-to-host read per batch); the fix keeps a tensor accumulator on the metric device and only calls `.item()` in compute, after the all-reduce.
import torch


def reinit__is_reduced(fn):
    def wrapper(self, *args, **kwargs):
        fn(self, *args, **kwargs)
        self._is_reduced = False
    return wrapper


class Metric:
    def __init__(self, output_transform=lambda x: x, device=torch.device("cpu")):
        self._output_transform = output_transform
        self._device = torch.device(device)
        self._is_reduced = False
        self.reset()

    def iteration_completed(self, engine_output):
        self.update(self._output_transform(engine_output))


class _BaseRegression(Metric):
    @reinit__is_reduced
    def update(self, output):
        y_pred, y = output[0].detach(), output[1].detach()
        if y_pred.shape != y.shape:
            raise ValueError(f"Input data shapes should be the same, but given {y_pred.shape} and {y.shape}")
        c1 = y_pred.ndimension() == 2 and y_pred.shape[1] == 1
        if not (y_pred.ndimension() == 1 or c1):
            raise ValueError(f"Input y_pred should have shape (N,) or (N, 1), but given {y_pred.shape}")
        if c1:
            y_pred, y = y_pred.squeeze(dim=-1), y.squeeze(dim=-1)
        self._update((y_pred, y))


class CanberraMetric(_BaseRegression):
    @reinit__is_reduced
    def reset(self):
        self._sum_of_errors = 0.0

    def _update(self, output):
        y_pred, y = output
        errors = torch.abs(y.view_as(y_pred) - y_pred) / (torch.abs(y_pred) + torch.abs(y.view_as(y_pred)))
        self._sum_of_errors += torch.sum(errors).item()  # want: D

    def compute(self):
        return self._sum_of_errors


class CanberraMetricFixed(_BaseRegression):
    @reinit__is_reduced
    def reset(self):
        self._sum_of_errors = torch.tensor(0.0, device=self._device)

    def _update(self, output):
        y_pred, y = output
        errors = torch.abs(y - y_pred) / (torch.abs(y_pred) + torch.abs(y))
        self._sum_of_errors += torch.sum(errors).to(self._device)

    def compute(self):
        # sync_all_reduce("_sum_of_errors") would run here in distributed mode
        return self._sum_of_errors.item()


def run_eval(metric, model, batches):
    metric.reset()
    with torch.no_grad():
        for x, y in batches:
            metric.iteration_completed((model(x).squeeze(-1), y))
    return metric.compute()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    batches = [(torch.randn(32, 4), torch.randn(32)) for _ in range(10)]
    a = run_eval(CanberraMetric(), model, batches)
    b = run_eval(CanberraMetricFixed(), model, batches)
    print(f"canberra bug={a:.4f} fixed={b:.4f}", abs(a - b) < 1e-3)
