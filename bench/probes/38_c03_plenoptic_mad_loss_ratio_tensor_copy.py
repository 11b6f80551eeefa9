# source: plenoptic-org/plenoptic https://github.com/plenoptic-org/plenoptic/pull/260 — When metric_tradeoff_lambda is None, MADCompetition.__init__ computed loss_ratio = torch.tensor(self.optimized_metric_loss[-1] / self.reference_metric_loss[-1], dtype=torch.float32), copy-constructing a new tensor from a value that is already a float32 tensor (issue #31: "torch.tensor always copies data"). PR #260 ("Torch tensor replacements ... in order to save memory") switched these calls to torch.as_tensor, which returns the existing tensor when dtype and device already match.
import warnings
from typing import Callable, Literal, Optional

import torch
from torch import Tensor
from torch.utils._python_dispatch import TorchDispatchMode


class MADCompetition:
    def __init__(self, image: Tensor,
                 optimized_metric: Callable[[Tensor, Tensor], Tensor],
                 reference_metric: Callable[[Tensor, Tensor], Tensor],
                 minmax: Literal['min', 'max'],
                 initial_noise: float = .1,
                 metric_tradeoff_lambda: Optional[float] = None,
                 allowed_range=(0, 1)):
        self.allowed_range = allowed_range
        self._optimized_metric = optimized_metric
        self._reference_metric = reference_metric
        self._image = image.detach()
        self._optimized_metric_loss = []
        self._reference_metric_loss = []
        self._minmax = minmax
        self._initialize(initial_noise)
        if metric_tradeoff_lambda is None:
            loss_ratio = torch.tensor(self.optimized_metric_loss[-1] / self.reference_metric_loss[-1],  # want: C
                                      dtype=torch.float32)
            metric_tradeoff_lambda = torch.pow(torch.tensor(10),
                                               torch.round(torch.log10(loss_ratio))).item()
            warnings.warn("Since metric_tradeoff_lamda was None, automatically set"
                          f" to {metric_tradeoff_lambda} to roughly balance metrics.")
        self._metric_tradeoff_lambda = metric_tradeoff_lambda

    def _initialize(self, initial_noise: float = .1):
        mad_image = (self.image + initial_noise * torch.randn_like(self.image))
        mad_image = mad_image.clamp(*self.allowed_range)
        self._initial_image = mad_image.clone()
        mad_image.requires_grad_()
        self._mad_image = mad_image
        self._reference_metric_target = self.reference_metric(self.image, self.mad_image).item()
        self._reference_metric_loss.append(self._reference_metric_target)
        self._optimized_metric_loss.append(self.optimized_metric(self.image, self.mad_image).item())

    @property
    def image(self):
        return self._image

    @property
    def mad_image(self):
        return self._mad_image

    @property
    def optimized_metric(self):
        return self._optimized_metric

    @property
    def reference_metric(self):
        return self._reference_metric

    @property
    def reference_metric_loss(self):
        return torch.tensor(self._reference_metric_loss)

    @property
    def optimized_metric_loss(self):
        return torch.tensor(self._optimized_metric_loss)


class MADCompetitionFixed(MADCompetition):
    def __init__(self, image, optimized_metric, reference_metric, minmax, initial_noise=.1,
                 metric_tradeoff_lambda=None, allowed_range=(0, 1)):
        self.allowed_range = allowed_range
        self._optimized_metric = optimized_metric
        self._reference_metric = reference_metric
        self._image = image.detach()
        self._optimized_metric_loss = []
        self._reference_metric_loss = []
        self._minmax = minmax
        self._initialize(initial_noise)
        if metric_tradeoff_lambda is None:
            loss_ratio = torch.as_tensor(self.optimized_metric_loss[-1] / self.reference_metric_loss[-1],
                                         dtype=torch.float32)
            metric_tradeoff_lambda = torch.pow(torch.as_tensor(10),
                                               torch.round(torch.log10(loss_ratio))).item()
            warnings.warn("Since metric_tradeoff_lamda was None, automatically set"
                          f" to {metric_tradeoff_lambda} to roughly balance metrics.")
        self._metric_tradeoff_lambda = metric_tradeoff_lambda


class CountCopies(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.n = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in (torch.ops.aten._to_copy.default, torch.ops.aten.clone.default):
            self.n += 1
        return func(*args, **(kwargs or {}))


def mse(img1, img2):
    return torch.square(img1 - img2).mean()


def l1(img1, img2):
    return 50 * (img1 - img2).abs().mean()


if __name__ == "__main__":
    img = torch.rand(1, 1, 16, 16, generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        with CountCopies() as cb:
            buggy = MADCompetition(img, mse, l1, 'min')
        torch.manual_seed(0)
        with CountCopies() as cf:
            fixed = MADCompetitionFixed(img, mse, l1, 'min')
    assert buggy._metric_tradeoff_lambda == fixed._metric_tradeoff_lambda
    assert torch.equal(buggy.mad_image, fixed.mad_image)
    ratio = buggy.optimized_metric_loss[-1] / buggy.reference_metric_loss[-1]
    assert torch.as_tensor(ratio, dtype=torch.float32).data_ptr() == ratio.data_ptr()
    assert cb.n == cf.n + 1
    print("ok", buggy._metric_tradeoff_lambda, cb.n, cf.n)
