# source: Lightning-AI/torchmetrics https://github.com/Lightning-AI/torchmetrics/pull/2943 — `MeanMetric.update` -> `BaseAggregator._cast_and_nan_check_input` ran `if nans.any() or nans_weight.any():` on every update (a device->host sync per training step) and built the default `weight=1.0` with a blocking `torch.as_tensor(..., device=self.device)`; the fix added `nan_strategy="disable"` to skip the check and made `weight` default to `None` (-> `torch.ones_like(value)`).
import warnings
from typing import Any, Callable, Optional, Union

import torch
from torch import Tensor


def rank_zero_warn(msg, category=UserWarning):
    warnings.warn(msg, category)


class Metric(torch.nn.Module):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self.dtype = torch.get_default_dtype()
        self._defaults = {}

    @property
    def device(self):
        return self._device_anchor.device

    def add_state(self, name, default, dist_reduce_fx=None):
        if not hasattr(self, "_device_anchor"):
            self.register_buffer("_device_anchor", torch.zeros(()), persistent=False)
        self.register_buffer(name, default.clone())
        self._defaults[name] = default


class BaseAggregator(Metric):
    def __init__(
        self,
        fn: Union[Callable, str],
        default_value: Union[Tensor, list],
        nan_strategy: Union[str, float] = "error",
        state_name: str = "value",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        allowed_nan_strategy = ("error", "warn", "ignore")
        if nan_strategy not in allowed_nan_strategy and not isinstance(nan_strategy, float):
            raise ValueError(
                f"Arg `nan_strategy` should either be a float or one of {allowed_nan_strategy} but got {nan_strategy}."
            )

        self.nan_strategy = nan_strategy
        self.add_state(state_name, default=default_value, dist_reduce_fx=fn)
        self.state_name = state_name

    def _cast_and_nan_check_input(
        self, x: Union[float, Tensor], weight: Optional[Union[float, Tensor]] = None
    ) -> tuple[Tensor, Tensor]:
        """Convert input ``x`` to a tensor and check for Nans."""
        if not isinstance(x, Tensor):
            x = torch.as_tensor(x, dtype=self.dtype, device=self.device)
        if weight is not None and not isinstance(weight, Tensor):
            weight = torch.as_tensor(weight, dtype=self.dtype, device=self.device)

        nans = torch.isnan(x)
        if weight is not None:
            nans_weight = torch.isnan(weight)
        else:
            nans_weight = torch.zeros_like(nans).bool()
            weight = torch.ones_like(x)
        if nans.any() or nans_weight.any():  # want: D
            if self.nan_strategy == "error":
                raise RuntimeError("Encountered `nan` values in tensor")
            if self.nan_strategy in ("ignore", "warn"):
                if self.nan_strategy == "warn":
                    rank_zero_warn("Encountered `nan` values in tensor. Will be removed.", UserWarning)
                x = x[~(nans | nans_weight)]  # maybe: D (data-dependent shape, but only reached when NaNs are present)
                weight = weight[~(nans | nans_weight)]
            else:
                if not isinstance(self.nan_strategy, float):
                    raise ValueError(f"`nan_strategy` shall be float but you pass {self.nan_strategy}")
                x[nans | nans_weight] = self.nan_strategy
                weight[nans | nans_weight] = self.nan_strategy

        return x.to(self.dtype), weight.to(self.dtype)

    def update(self, value: Union[float, Tensor]) -> None:
        """Overwrite in child class."""

    def compute(self) -> Tensor:
        return getattr(self, self.state_name)


class MeanMetric(BaseAggregator):
    def __init__(self, nan_strategy: Union[str, float] = "warn", **kwargs: Any) -> None:
        super().__init__("sum", torch.tensor(0.0, dtype=torch.get_default_dtype()), nan_strategy,
                         state_name="mean_value", **kwargs)
        self.add_state("weight", default=torch.tensor(0.0, dtype=torch.get_default_dtype()), dist_reduce_fx="sum")

    def update(self, value: Union[float, Tensor], weight: Union[float, Tensor] = 1.0) -> None:
        # broadcast weight to value shape
        if not isinstance(value, Tensor):
            value = torch.as_tensor(value, dtype=self.dtype, device=self.device)
        if weight is not None and not isinstance(weight, Tensor):
            weight = torch.as_tensor(weight, dtype=self.dtype, device=self.device)  # maybe: D (blocking H2D copy of the default 1.0; the PR calls it a sync event)
        weight = torch.broadcast_to(weight, value.shape)
        value, weight = self._cast_and_nan_check_input(value, weight)

        if value.numel() == 0:
            return
        self.mean_value += (value * weight).sum()
        self.weight += weight.sum()

    def compute(self) -> Tensor:
        return self.mean_value / self.weight


class MeanMetricFixed(MeanMetric):
    """After the fix: `nan_strategy="disable"` skips all checks; weight defaults to None."""

    def __init__(self, nan_strategy="disable", **kwargs):
        # the real fix adds "disable" to `allowed_nan_strategy`; emulate by setting it after init
        super().__init__(nan_strategy=0.0 if nan_strategy == "disable" else nan_strategy, **kwargs)
        self.nan_strategy = nan_strategy

    def _cast_and_nan_check_input(self, x, weight=None):
        if not isinstance(x, Tensor):
            x = torch.as_tensor(x, dtype=self.dtype, device=self.device)
        if weight is not None and not isinstance(weight, Tensor):
            weight = torch.as_tensor(weight, dtype=self.dtype, device=self.device)

        if self.nan_strategy != "disable":
            return super()._cast_and_nan_check_input(x, weight)
        else:
            weight = torch.ones_like(x)
        return x.to(self.dtype), weight.to(self.dtype)

    def update(self, value: Union[float, Tensor], weight: Union[float, Tensor, None] = None) -> None:
        if not isinstance(value, Tensor):
            value = torch.as_tensor(value, dtype=self.dtype, device=self.device)
        if weight is None:
            weight = torch.ones_like(value)
        elif not isinstance(weight, Tensor):
            weight = torch.as_tensor(weight, dtype=self.dtype, device=self.device)
        weight = torch.broadcast_to(weight, value.shape)
        value, weight = self._cast_and_nan_check_input(value, weight)

        if value.numel() == 0:
            return
        self.mean_value += (value * weight).sum()
        self.weight += weight.sum()


def training_loop(metric, steps=10):
    model = torch.nn.Linear(4, 1)
    for _ in range(steps):
        x = torch.randn(16, 4)
        loss = model(x).pow(2).mean()
        loss.backward()
        metric.update(loss.detach())
    return metric.compute()


if __name__ == "__main__":
    torch.manual_seed(0)
    print(float(training_loop(MeanMetric())), float(training_loop(MeanMetricFixed())))
