# source: allenai/allennlp https://github.com/allenai/allennlp/pull/2468 — MovingAverage swapped weights with `self._backups[name].data = parameter.data.clone()` / `parameter.data = ...clone()`, allocating a fresh copy of every parameter on each swap (and cloned Parameters with autograd in __init__); the fix copies into the existing buffers with `copy_()` and uses `parameter.data.clone()`.
from typing import Iterable, Optional, Tuple

import torch
from torch import nn

NamedParameter = Tuple[str, torch.Tensor]


class MovingAverage:
    """Tracks a moving average of model parameters."""

    def __init__(self, parameters: Iterable[NamedParameter]) -> None:
        self._parameters = list(parameters)
        self._shadows = {name: parameter.clone() for name, parameter in self._parameters}  # maybe: C (fix changed to parameter.data.clone(); still one copy, difference is autograd tracking)
        self._backups = {name: parameter.clone() for name, parameter in self._parameters}  # maybe: C (same as above)

    def apply(self, num_updates: Optional[int] = None):
        raise NotImplementedError

    def assign_average_value(self) -> None:
        """Replace all the parameter values with the averages. Save the current values to restore later."""
        for name, parameter in self._parameters:
            self._backups[name].data = parameter.data.clone()  # want: C
            parameter.data = self._shadows[name].data.clone()  # want: C

    def restore(self) -> None:
        """Restore the backed-up (non-average) parameter values."""
        for name, parameter in self._parameters:
            parameter.data = self._backups[name].data.clone()  # want: C


class ExponentialMovingAverage(MovingAverage):
    def __init__(self, parameters: Iterable[NamedParameter], decay: float = 0.9999,
                 numerator: float = 1.0, denominator: float = 10.0) -> None:
        super().__init__(parameters)
        self._decay = decay
        self._numerator = numerator
        self._denominator = denominator

    def apply(self, num_updates: Optional[int] = None) -> None:
        if num_updates is not None:
            decay = min(self._decay, (self._numerator + num_updates) / (self._denominator + num_updates))
        else:
            decay = self._decay

        for name, parameter in self._parameters:
            self._shadows[name].mul_(decay).add_((1 - decay) * parameter.data)


class FixedMovingAverage(ExponentialMovingAverage):
    """The merged swap (look-alike): in-place copies into the existing buffers."""

    def __init__(self, parameters: Iterable[NamedParameter], decay: float = 0.9999) -> None:
        self._parameters = list(parameters)
        self._shadows = {name: parameter.data.clone() for name, parameter in self._parameters}
        self._backups = {name: parameter.data.clone() for name, parameter in self._parameters}
        self._decay = decay
        self._numerator = 1.0
        self._denominator = 10.0

    def assign_average_value(self) -> None:
        for name, parameter in self._parameters:
            self._backups[name].copy_(parameter.data)
            parameter.data.copy_(self._shadows[name])

    def restore(self) -> None:
        for name, parameter in self._parameters:
            parameter.data.copy_(self._backups[name])


def train(model, moving_average, steps=30, validate_every=10):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(1, steps + 1):
        x = torch.randn(16, 64)
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        moving_average.apply(step)
        if step % validate_every == 0:
            moving_average.assign_average_value()
            with torch.no_grad():
                val = model(torch.randn(16, 64)).pow(2).mean()
            moving_average.restore()
    return val


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.Tanh(), nn.Linear(256, 64))
    v1 = train(model, ExponentialMovingAverage(model.named_parameters()))
    model2 = nn.Sequential(nn.Linear(64, 256), nn.Tanh(), nn.Linear(256, 64))
    v2 = train(model2, FixedMovingAverage([(n, p) for n, p in model2.named_parameters()]))
    print("ok", v1.item() > 0, v2.item() > 0)
