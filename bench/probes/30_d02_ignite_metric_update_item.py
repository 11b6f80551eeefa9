# source: pytorch/ignite https://github.com/pytorch/ignite/pull/1238 — MeanSquaredError / TopKCategoricalAccuracy.update() did `self._sum += torch.sum(...).item()` on every batch, a device-to-host sync per update call (issue #1082). The fix ("Make Metrics accumulate values on device specified by user") keeps the running sums as tensors on `self._device` and converts only in compute().
import functools

import torch


class NotComputableError(RuntimeError):
    pass


def reinit__is_reduced(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        func(self, *args, **kwargs)
        self._is_reduced = False

    return wrapper


def sync_all_reduce(*attrs):
    def wrapper(func):
        @functools.wraps(func)
        def another_wrapper(self, *args, **kwargs):
            # single process here: nothing to all-reduce
            self._is_reduced = True
            return func(self, *args, **kwargs)

        return another_wrapper

    return wrapper


class Metric:
    def __init__(self, output_transform=lambda x: x, device=torch.device("cpu")):
        self._output_transform = output_transform
        self._device = torch.device(device)
        self._is_reduced = False
        self.reset()

    def iteration_completed(self, output):
        self.update(self._output_transform(output))


class MeanSquaredError(Metric):
    @reinit__is_reduced
    def reset(self):
        self._sum_of_squared_errors = 0.0
        self._num_examples = 0

    @reinit__is_reduced
    def update(self, output):
        y_pred, y = output
        squared_errors = torch.pow(y_pred - y.view_as(y_pred), 2)
        self._sum_of_squared_errors += torch.sum(squared_errors).item()  # want: D
        self._num_examples += y.shape[0]

    @sync_all_reduce("_sum_of_squared_errors", "_num_examples")
    def compute(self):
        if self._num_examples == 0:
            raise NotComputableError("MeanSquaredError must have at least one example before it can be computed.")
        return self._sum_of_squared_errors / self._num_examples


class TopKCategoricalAccuracy(Metric):
    def __init__(self, k=5, output_transform=lambda x: x, device=torch.device("cpu")):
        self._k = k
        super().__init__(output_transform, device=device)

    @reinit__is_reduced
    def reset(self):
        self._num_correct = 0
        self._num_examples = 0

    @reinit__is_reduced
    def update(self, output):
        y_pred, y = output
        sorted_indices = torch.topk(y_pred, self._k, dim=1)[1]
        expanded_y = y.view(-1, 1).expand(-1, self._k)
        correct = torch.sum(torch.eq(sorted_indices, expanded_y), dim=1)
        self._num_correct += torch.sum(correct).item()  # want: D
        self._num_examples += correct.shape[0]

    @sync_all_reduce("_num_correct", "_num_examples")
    def compute(self):
        if self._num_examples == 0:
            raise NotComputableError("TopKCategoricalAccuracy must have at least one example before it can be computed.")
        return self._num_correct / self._num_examples


class MeanSquaredErrorFixed(MeanSquaredError):
    @reinit__is_reduced
    def reset(self):
        self._sum_of_squared_errors = torch.tensor(0.0, device=self._device)
        self._num_examples = 0

    @reinit__is_reduced
    def update(self, output):
        y_pred, y = output
        squared_errors = torch.pow(y_pred - y.view_as(y_pred), 2)
        self._sum_of_squared_errors += torch.sum(squared_errors).detach().to(self._device)
        self._num_examples += y.shape[0]

    @sync_all_reduce("_sum_of_squared_errors", "_num_examples")
    def compute(self):
        if self._num_examples == 0:
            raise NotComputableError("MeanSquaredError must have at least one example before it can be computed.")
        return self._sum_of_squared_errors.item() / self._num_examples


class TopKCategoricalAccuracyFixed(TopKCategoricalAccuracy):
    @reinit__is_reduced
    def reset(self):
        self._num_correct = torch.tensor(0, device=self._device)
        self._num_examples = 0

    @reinit__is_reduced
    def update(self, output):
        y_pred, y = output
        sorted_indices = torch.topk(y_pred, self._k, dim=1)[1]
        expanded_y = y.view(-1, 1).expand(-1, self._k)
        correct = torch.sum(torch.eq(sorted_indices, expanded_y), dim=1)
        self._num_correct += torch.sum(correct).to(self._device)
        self._num_examples += correct.shape[0]

    @sync_all_reduce("_num_correct", "_num_examples")
    def compute(self):
        if self._num_examples == 0:
            raise NotComputableError("TopKCategoricalAccuracy must have at least one example before it can be computed.")
        return self._num_correct.item() / self._num_examples


if __name__ == "__main__":
    torch.manual_seed(0)
    batches = [(torch.randn(64, 10), torch.randint(0, 10, (64,))) for _ in range(20)]
    mse, mse_fixed = MeanSquaredError(), MeanSquaredErrorFixed()
    topk, topk_fixed = TopKCategoricalAccuracy(k=3), TopKCategoricalAccuracyFixed(k=3)
    for logits, labels in batches:
        reg_pred, reg_y = logits[:, 0], labels.float()
        mse.iteration_completed((reg_pred, reg_y))
        mse_fixed.iteration_completed((reg_pred, reg_y))
        topk.iteration_completed((logits, labels))
        topk_fixed.iteration_completed((logits, labels))
    print("mse", mse.compute(), mse_fixed.compute())
    print("top3", topk.compute(), topk_fixed.compute())
    assert abs(mse.compute() - mse_fixed.compute()) < 1e-3
    assert abs(topk.compute() - topk_fixed.compute()) < 1e-9
