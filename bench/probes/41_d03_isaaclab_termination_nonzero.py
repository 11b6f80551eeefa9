# source: isaac-sim/IsaacLab https://github.com/isaac-sim/IsaacLab/pull/7495 — `TerminationManager.compute`, called on every environment step for thousands of parallel envs, recorded which term ended each episode with `rows = value.nonzero()[:, 0]` and then indexed `_last_episode_dones[rows]`; `nonzero` has a data-dependent size, so each term costs a device-to-host sync, and the resets wrote host scalars through index tensors (`buf[env_ids] = 0.0`). The PR ("Remove per-step host synchronizations from the environment hot path") updates the last-episode bookkeeping with a masked `torch.where` instead of `nonzero` and uses `index_fill_` for the scalar resets.
from dataclasses import dataclass
from typing import Callable

import torch


@dataclass
class TerminationTermCfg:
    func: Callable
    params: dict
    time_out: bool = False


class TerminationManager:
    def __init__(self, cfg: dict, env):
        self._env = env
        self._term_names = list(cfg.keys())
        self._term_cfgs = list(cfg.values())
        num_envs, device = env.num_envs, env.device
        self._term_dones = torch.zeros(num_envs, len(self._term_names), device=device, dtype=torch.bool)
        self._last_episode_dones = torch.zeros_like(self._term_dones)
        self._truncated_buf = torch.zeros(num_envs, device=device, dtype=torch.bool)
        self._terminated_buf = torch.zeros_like(self._truncated_buf)

    def reset(self, env_ids):
        extras = {}
        last_episode_done_stats = self._last_episode_dones.float().mean(dim=0)
        for i, key in enumerate(self._term_names):
            extras["Episode_Termination/" + key] = last_episode_done_stats[i]
        self._term_dones[env_ids] = False  # maybe: D (host scalar written through an index tensor)
        return extras

    def compute(self) -> torch.Tensor:
        self._truncated_buf[:] = False
        self._terminated_buf[:] = False
        for i, term_cfg in enumerate(self._term_cfgs):
            value = term_cfg.func(self._env, **term_cfg.params)
            if term_cfg.time_out:
                self._truncated_buf |= value
            else:
                self._terminated_buf |= value
            rows = value.nonzero()[:, 0]  # want: D
            if rows.numel() > 0:
                self._last_episode_dones[rows] = False
                self._last_episode_dones[rows, i] = True
            self._term_dones[:, i] = value
        return self._truncated_buf | self._terminated_buf


class TerminationManagerFixed(TerminationManager):
    def reset(self, env_ids):
        extras = {}
        last_episode_done_stats = self._last_episode_dones.float().mean(dim=0)
        for i, key in enumerate(self._term_names):
            extras["Episode_Termination/" + key] = last_episode_done_stats[i]
        self._term_dones.index_fill_(0, env_ids, False)
        return extras

    def compute(self) -> torch.Tensor:
        self._truncated_buf[:] = False
        self._terminated_buf[:] = False
        num_terms = len(self._term_cfgs)
        for i, term_cfg in enumerate(self._term_cfgs):
            value = term_cfg.func(self._env, **term_cfg.params)
            if term_cfg.time_out:
                self._truncated_buf |= value
            else:
                self._terminated_buf |= value
            term_row = torch.nn.functional.one_hot(
                torch.full((1,), i, device=value.device), num_terms
            ).bool()
            self._last_episode_dones = torch.where(value.unsqueeze(1), term_row, self._last_episode_dones)
            self._term_dones[:, i] = value
        return self._truncated_buf | self._terminated_buf


class ToyEnv:
    def __init__(self, num_envs=16):
        self.num_envs, self.device = num_envs, "cpu"
        self.episode_length_buf = torch.zeros(num_envs, dtype=torch.long)
        self.height = torch.zeros(num_envs)


def time_out(env, max_len):
    return env.episode_length_buf >= max_len


def base_height(env, minimum):
    return env.height < minimum


if __name__ == "__main__":
    cfg = {
        "time_out": TerminationTermCfg(time_out, {"max_len": 5}, time_out=True),
        "base_height": TerminationTermCfg(base_height, {"minimum": -0.5}),
    }
    g = torch.Generator().manual_seed(0)
    env = ToyEnv()
    managers = [TerminationManager(cfg, env), TerminationManagerFixed(cfg, env)]
    for step in range(12):
        env.episode_length_buf += 1
        env.height = torch.randn(env.num_envs, generator=g)
        outs = [m.compute() for m in managers]
        assert torch.equal(outs[0], outs[1])
        assert torch.equal(managers[0]._last_episode_dones, managers[1]._last_episode_dones)
        env_ids = torch.arange(step % 3, env.num_envs, 3)
        extras = [m.reset(env_ids) for m in managers]
        assert all(torch.equal(extras[0][k], extras[1][k]) for k in extras[0])
        assert torch.equal(managers[0]._term_dones, managers[1]._term_dones)
        env.episode_length_buf = torch.where(outs[0], torch.zeros_like(env.episode_length_buf), env.episode_length_buf)
    print("ok", managers[0]._last_episode_dones.sum(dim=0))
