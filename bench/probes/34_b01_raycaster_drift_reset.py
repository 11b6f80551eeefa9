# source: isaac-sim/IsaacLab https://github.com/isaac-sim/IsaacLab/pull/1821 — RayCaster.reset resampled the per-env sensor drift with `self.drift[env_ids].uniform_(...)`; for a tensor/list of env_ids that indexes a copy, so the drift was never resampled. The fix writes the sample back with `self.drift[env_ids] = self.drift[env_ids].uniform_(...)`.
from collections.abc import Sequence
from dataclasses import dataclass

import torch


@dataclass
class RayCasterCfg:
    drift_range: tuple = (-0.05, 0.05)
    max_distance: float = 10.0
    num_rays: int = 16


class SensorBase:
    def __init__(self, cfg, num_envs, device="cpu"):
        self.cfg = cfg
        self._num_envs = num_envs
        self._device = device
        self._timestamp = torch.zeros(num_envs, device=device)
        self._timestamp_last_update = torch.zeros_like(self._timestamp)
        self._is_outdated = torch.ones(num_envs, dtype=torch.bool, device=device)

    def reset(self, env_ids: Sequence[int] | None = None):
        if env_ids is None:
            env_ids = slice(None)
        self._timestamp[env_ids] = 0.0
        self._timestamp_last_update[env_ids] = 0.0
        self._is_outdated[env_ids] = True


class RayCaster(SensorBase):
    def __init__(self, cfg, num_envs, device="cpu"):
        super().__init__(cfg, num_envs, device)
        self._initialize_impl()

    def _initialize_impl(self):
        self.ray_starts = torch.zeros(self._num_envs, self.cfg.num_rays, 3, device=self._device)
        self.ray_directions = torch.zeros_like(self.ray_starts)
        self.ray_directions[..., 2] = -1.0
        self.drift = torch.zeros(self._num_envs, 3, device=self._device)
        self.ray_hits_w = torch.zeros_like(self.ray_starts)

    def reset(self, env_ids: Sequence[int] | None = None):
        # reset the timers and counters
        super().reset(env_ids)
        # resolve None
        if env_ids is None:
            env_ids = slice(None)
        # resample the drift
        self.drift[env_ids].uniform_(*self.cfg.drift_range)  # want: B

    def _update_buffers_impl(self, env_ids, pos_w):
        # apply drift to the sensor origin
        pos_w = pos_w[env_ids] + self.drift[env_ids]
        ray_starts_w = self.ray_starts[env_ids] + pos_w.unsqueeze(1)
        self.ray_hits_w[env_ids] = ray_starts_w + self.ray_directions[env_ids] * self.cfg.max_distance


class RayCasterFixed(RayCaster):
    def reset(self, env_ids: Sequence[int] | None = None):
        SensorBase.reset(self, env_ids)
        if env_ids is None:
            env_ids = slice(None)
        self.drift[env_ids] = self.drift[env_ids].uniform_(*self.cfg.drift_range)


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = RayCasterCfg()
    env_ids = torch.tensor([1, 3, 5])
    for cls in (RayCaster, RayCasterFixed):
        sensor = cls(cfg, num_envs=8)
        sensor.reset(env_ids)
        sensor._update_buffers_impl(env_ids, torch.zeros(8, 3))
        resampled = bool(sensor.drift[env_ids].abs().sum() > 0)
        print(f"{cls.__name__:15s} drift resampled for env_ids={env_ids.tolist()}: {resampled}")
    buggy, fixed = RayCaster(cfg, 8), RayCasterFixed(cfg, 8)
    buggy.reset(env_ids)
    fixed.reset(env_ids)
    assert buggy.drift.abs().sum() == 0
    assert fixed.drift[env_ids].abs().sum() > 0
