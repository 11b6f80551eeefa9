# source: mujocolab/mjlab https://github.com/mujocolab/mjlab/pull/1082 — ObservationManager._prepare_terms converted every term's scale with `torch.tensor(term_cfg.scale, dtype=torch.float, device=...)`; when the config's scale was already a tensor (e.g. a manager rebuilt from the same cfg, or a user-supplied per-dim tensor) this copy-constructs it and emits PyTorch's "To copy construct from a tensor" UserWarning. The PR switches to `torch.as_tensor(...).clone()`, which accepts tensors without the warning and makes the (intended) private copy explicit.
import warnings
from dataclasses import dataclass, field
from typing import Callable, Optional

import torch


@dataclass
class ObservationTermCfg:
    func: Callable
    params: dict = field(default_factory=dict)
    scale: Optional[object] = None
    clip: Optional[tuple] = None


class _Env:
    def __init__(self, num_envs=4, device="cpu"):
        self.num_envs = num_envs
        self.device = device
        self.joint_pos = torch.arange(num_envs * 3, dtype=torch.float).view(num_envs, 3)


def joint_pos_rel(env):
    return env.joint_pos - 1.0


class ObservationManager:
    def __init__(self, cfg: dict, env):
        self.cfg = cfg
        self._env = env
        self._group_obs_term_cfgs = {}
        self._prepare_terms()

    def _prepare_terms(self):
        for group_name, group_cfg in self.cfg.items():
            self._group_obs_term_cfgs[group_name] = []
            for term_name, term_cfg in group_cfg.items():
                if term_cfg.scale is not None:
                    term_cfg.scale = torch.tensor(term_cfg.scale, dtype=torch.float, device=self._env.device)  # want: C
                self._group_obs_term_cfgs[group_name].append(term_cfg)

    def compute_group(self, group_name):
        obs_terms = []
        for term_cfg in self._group_obs_term_cfgs[group_name]:
            obs = term_cfg.func(self._env, **term_cfg.params).clone()
            if term_cfg.clip:
                obs = obs.clip_(min=term_cfg.clip[0], max=term_cfg.clip[1])
            if term_cfg.scale is not None:
                obs = obs.mul_(term_cfg.scale)
            obs_terms.append(obs)
        return torch.cat(obs_terms, dim=-1)


class ObservationManagerFixed(ObservationManager):
    def _prepare_terms(self):
        for group_name, group_cfg in self.cfg.items():
            self._group_obs_term_cfgs[group_name] = []
            for term_name, term_cfg in group_cfg.items():
                if term_cfg.scale is not None:
                    term_cfg.scale = torch.as_tensor(term_cfg.scale, dtype=torch.float, device=self._env.device).clone()
                self._group_obs_term_cfgs[group_name].append(term_cfg)


def _make_cfg():
    return {"policy": {"joint_pos": ObservationTermCfg(func=joint_pos_rel, scale=torch.tensor([0.5, 1.0, 2.0]))}}


if __name__ == "__main__":
    env = _Env()
    cfg_bug, cfg_fix = _make_cfg(), _make_cfg()
    user_scale = cfg_bug["policy"]["joint_pos"].scale
    with warnings.catch_warnings(record=True) as caught_bug:
        warnings.simplefilter("always")
        mgr_bug = ObservationManager(cfg_bug, env)
    with warnings.catch_warnings(record=True) as caught_fix:
        warnings.simplefilter("always")
        mgr_fix = ObservationManagerFixed(cfg_fix, env)
    assert any("copy construct" in str(w.message) for w in caught_bug)
    assert not any("copy construct" in str(w.message) for w in caught_fix)
    assert cfg_bug["policy"]["joint_pos"].scale.data_ptr() != user_scale.data_ptr()
    assert torch.equal(mgr_bug.compute_group("policy"), mgr_fix.compute_group("policy"))
    print("ok")
