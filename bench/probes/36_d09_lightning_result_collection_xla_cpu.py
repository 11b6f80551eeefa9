# source: Lightning-AI/pytorch-lightning https://github.com/Lightning-AI/pytorch-lightning/pull/17572 — `_ResultCollection.log`, reached from every `self.log(...)` in training_step, did `if value.device.type == "xla": value = value.cpu()`, forcing the lazy XLA graph to execute and copy each logged metric to the host on every step (issue #15884, "TPU performance issues"); the fix deletes the conversion and keeps the accumulators on the device.
from typing import Any, Optional

import torch
from torch import Tensor


def recursive_detach(value):
    return value.detach() if isinstance(value, Tensor) else value


class _ResultMetric:
    def __init__(self, device):
        self.value = torch.zeros((), device=device)
        self.cumulated_batch_size = torch.zeros((), dtype=torch.long, device=device)

    def update(self, value: Tensor, batch_size: int) -> None:
        self.value = self.value + value.mean() * batch_size
        self.cumulated_batch_size = self.cumulated_batch_size + batch_size

    def compute(self) -> Tensor:
        return self.value / self.cumulated_batch_size


class _ResultCollection(dict):
    def __init__(self, training: bool) -> None:
        super().__init__()
        self.training = training

    def log(self, fx: str, name: str, value: Any, enable_graph: bool = False, batch_size: Optional[int] = None):
        # no metrics should be logged with graphs
        if not enable_graph:
            value = recursive_detach(value)

        # move metrics to cpu on TPU.
        if isinstance(value, Tensor) and value.device.type == "xla":
            value = value.cpu()  # want: D

        key = f"{fx}.{name}"
        if key not in self:
            self[key] = _ResultMetric(value.device)
        self[key].update(value, batch_size or 1)


class _ResultCollectionFixed(_ResultCollection):
    def log(self, fx: str, name: str, value: Any, enable_graph: bool = False, batch_size: Optional[int] = None):
        if not enable_graph:
            value = recursive_detach(value)
        key = f"{fx}.{name}"
        if key not in self:
            self[key] = _ResultMetric(value.device)
        self[key].update(value, batch_size or 1)


class BoringModel(torch.nn.Module):
    def __init__(self, results: _ResultCollection):
        super().__init__()
        self.layer = torch.nn.Linear(32, 2)
        self._results = results
        self._current_fx_name = "training_step"

    def log(self, name: str, value: Tensor, batch_size: Optional[int] = None) -> None:
        self._results.log(self._current_fx_name, name, value, batch_size=batch_size)

    def training_step(self, batch, batch_idx):
        out = self.layer(batch)
        loss = torch.nn.functional.mse_loss(out, torch.ones_like(out))
        self.log("train_loss", loss, batch_size=batch.shape[0])
        return {"loss": loss}


def fit(model, batches, opt):
    for batch_idx, batch in enumerate(batches):
        loss = model.training_step(batch, batch_idx)["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model._results["training_step.train_loss"].compute()


if __name__ == "__main__":
    computed = []
    for cls in (_ResultCollection, _ResultCollectionFixed):
        torch.manual_seed(0)
        model = BoringModel(cls(training=True))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        batches = [torch.randn(4, 32) for _ in range(5)]
        computed.append(fit(model, batches, opt))
    assert torch.allclose(computed[0], computed[1])
    print("epoch-mean train_loss identical:", computed[1].item())
