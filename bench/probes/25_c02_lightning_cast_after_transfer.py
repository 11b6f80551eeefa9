# source: Lightning-AI/pytorch-lightning PR #18264 ("Cast input before moving to device for all strategies", follow-up to #17728 / issue #17727) — with precision="16-true"/"bf16-true" the loops moved the fp32 batch to the device first (batch_to_device) and only then ran precision_plugin.convert_input inside Strategy.training_step, so twice the bytes crossed the bus and a second, half-precision copy was made on the device; the fix converts before batch_to_device (DeepSpeed already did)
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import torch
from torch import Tensor, nn


def apply_to_collection(data: Any, dtype: type, function: Callable, **kwargs: Any) -> Any:
    if isinstance(data, dtype):
        return function(data, **kwargs)
    if isinstance(data, dict):
        return {k: apply_to_collection(v, dtype, function, **kwargs) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(apply_to_collection(v, dtype, function, **kwargs) for v in data)
    return data


def _convert_fp_tensor(tensor: Tensor, dst_type: torch.dtype) -> Tensor:
    return tensor.to(dst_type) if torch.is_floating_point(tensor) else tensor


def move_data_to_device(batch: Any, device: torch.device) -> Any:
    return apply_to_collection(batch, Tensor, lambda t: t.to(device, non_blocking=True))


class HalfPrecision:
    """precision='16-true' / 'bf16-true'"""

    def __init__(self, precision: str = "bf16-true"):
        self._desired_input_dtype = torch.bfloat16 if precision == "bf16-true" else torch.float16

    def convert_module(self, module: nn.Module) -> nn.Module:
        return module.to(dtype=self._desired_input_dtype)

    def convert_input(self, data: Any) -> Any:
        return apply_to_collection(data, Tensor, _convert_fp_tensor, dst_type=self._desired_input_dtype)

    @contextmanager
    def train_step_context(self):
        yield


class Strategy:
    def __init__(self, device: torch.device, precision_plugin: HalfPrecision):
        self.root_device = device
        self.precision_plugin = precision_plugin
        self.lightning_module: nn.Module = None

    def connect(self, model: nn.Module) -> None:
        self.lightning_module = self.precision_plugin.convert_module(model.to(self.root_device))

    def batch_to_device(self, batch: Any, device=None, dataloader_idx: int = 0) -> Any:
        return move_data_to_device(batch, device or self.root_device)

    def training_step(self, *args: Any, **kwargs: Any):
        args, kwargs = self.precision_plugin.convert_input((args, kwargs))  # want: C
        with self.precision_plugin.train_step_context():
            return self.lightning_module.training_step(*args, **kwargs)

    def predict_step(self, batch: Any, batch_idx: int):
        # the predict loop below already converts on the host, before the transfer
        return self.lightning_module.predict_step(batch, batch_idx)


class DeepSpeedStrategy(Strategy):
    """'DeepSpeed was doing this already': cast on the host, then move."""

    def batch_to_device(self, batch: Any, device=None, dataloader_idx: int = 0) -> Any:
        batch = self.precision_plugin.convert_input(batch)
        return super().batch_to_device(batch, device, dataloader_idx)

    def training_step(self, *args: Any, **kwargs: Any):
        return self.lightning_module.training_step(*args, **kwargs)


class Trainer:
    def __init__(self, strategy: Strategy):
        self.strategy = strategy
        self.precision_plugin = strategy.precision_plugin

    def fit(self, model: nn.Module, dataloader: Iterator, optimizer_factory) -> list:
        self.strategy.connect(model)
        optimizer = optimizer_factory(self.strategy.lightning_module.parameters())
        losses = []
        for batch_idx, batch in enumerate(dataloader):  # _TrainingEpochLoop.advance
            batch = self.strategy.lightning_module.on_before_batch_transfer(batch, 0)
            batch = self.strategy.batch_to_device(batch, dataloader_idx=0)
            loss = self.strategy.training_step(batch, batch_idx)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
        return losses

    def predict(self, model: nn.Module, dataloader: Iterator) -> list:
        self.strategy.connect(model)
        outs = []
        with torch.no_grad():
            for batch_idx, batch in enumerate(dataloader):  # _PredictionLoop._predict_step after the PR
                batch = self.precision_plugin.convert_input(batch)
                batch = self.strategy.lightning_module.on_before_batch_transfer(batch, 0)
                batch = self.strategy.batch_to_device(batch, dataloader_idx=0)
                outs.append(self.strategy.predict_step(batch, batch_idx))
        return outs


class LitRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 1))

    def on_before_batch_transfer(self, batch, dataloader_idx):
        return batch

    def training_step(self, batch, batch_idx):
        x, y = batch["x"], batch["y"]
        return nn.functional.mse_loss(self.net(x).float(), y.float())

    def predict_step(self, batch, batch_idx):
        return self.net(batch["x"])


def make_loader(n=4):
    g = torch.Generator().manual_seed(0)
    for _ in range(n):
        yield {"x": torch.randn(16, 32, generator=g), "y": torch.randn(16, 1, generator=g), "idx": torch.arange(16)}


if __name__ == "__main__":
    torch.manual_seed(0)
    device = torch.device("cpu")
    for strategy_cls in (Strategy, DeepSpeedStrategy):
        trainer = Trainer(strategy_cls(device, HalfPrecision("bf16-true")))
        losses = trainer.fit(LitRegressor(), make_loader(), lambda p: torch.optim.SGD(p, lr=1e-2))
        assert len(losses) == 4 and all(torch.isfinite(l) for l in losses)
        preds = trainer.predict(LitRegressor(), make_loader(2))
        assert preds[0].dtype == torch.bfloat16
    print("ok")
