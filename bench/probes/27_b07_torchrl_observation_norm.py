# source: pytorch/rl https://github.com/pytorch/rl/pull/649 — ObservationNorm.__init__ called `scale.clamp_min(self.eps)` without using the result, so a zero/tiny scale was registered unclamped and standard_normal normalisation divided by zero; the fix assigns it back (`scale = scale.clamp_min(self.eps)`).
from typing import Optional, Sequence, Union

import torch
import torch.nn as nn


class Transform(nn.Module):
    def __init__(self, in_keys: Sequence[str]):
        super().__init__()
        self.in_keys = list(in_keys)

    def forward(self, tensordict: dict) -> dict:
        for key in self.in_keys:
            if key in tensordict:
                tensordict[key] = self._apply_transform(tensordict[key])
        return tensordict


class ObservationNorm(Transform):
    def __init__(
        self,
        loc: Optional[Union[float, torch.Tensor]] = None,
        scale: Optional[Union[float, torch.Tensor]] = None,
        in_keys: Optional[Sequence[str]] = None,
        standard_normal: bool = False,
    ):
        if in_keys is None:
            in_keys = ["next_observation", "next_pixels", "next_observation_state"]
        super().__init__(in_keys=in_keys)
        self.standard_normal = standard_normal
        self.eps = 1e-6
        if loc is not None and not isinstance(loc, torch.Tensor):
            loc = torch.tensor(loc, dtype=torch.float)
        if scale is not None and not isinstance(scale, torch.Tensor):
            scale = torch.tensor(scale, dtype=torch.float)
            scale.clamp_min(self.eps)  # want: B
        self.register_buffer("loc", loc)
        self.register_buffer("scale", scale)

    def _apply_transform(self, obs: torch.Tensor) -> torch.Tensor:
        if self.standard_normal:
            loc = self.loc
            scale = self.scale
            return (obs - loc) / scale
        else:
            scale = self.scale
            loc = self.loc
            return obs * scale + loc


class ObservationNormFixed(ObservationNorm):
    def __init__(self, loc=None, scale=None, in_keys=None, standard_normal=False):
        if in_keys is None:
            in_keys = ["next_observation", "next_pixels", "next_observation_state"]
        Transform.__init__(self, in_keys=in_keys)
        self.standard_normal = standard_normal
        self.eps = 1e-6
        if loc is not None and not isinstance(loc, torch.Tensor):
            loc = torch.tensor(loc, dtype=torch.float)
        if scale is not None and not isinstance(scale, torch.Tensor):
            scale = torch.tensor(scale, dtype=torch.float)
            scale = scale.clamp_min(self.eps)
        self.register_buffer("loc", loc)
        self.register_buffer("scale", scale)


if __name__ == "__main__":
    td = {"next_observation": torch.tensor([0.5, 1.0, 1.5])}
    t = ObservationNorm(loc=1.0, scale=0.0, standard_normal=True)
    print("buggy registered scale:", t.scale.item(), "->", t(dict(td))["next_observation"])
    t = ObservationNormFixed(loc=1.0, scale=0.0, standard_normal=True)
    print("fixed registered scale:", t.scale.item(), "->", t(dict(td))["next_observation"])
