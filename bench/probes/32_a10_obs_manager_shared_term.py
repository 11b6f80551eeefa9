# source: isaac-sim/IsaacLab https://github.com/isaac-sim/IsaacLab/issues/356 — ObservationManager.compute_group used the tensor returned by an obs term (e.g. mdp.base_lin_vel -> asset.data.root_lin_vel_b, a persistent data buffer) directly and then applied clip_/mul_(scale) in place and kept it in the group dict, so two groups using the same term compounded the scale (x2 then x4) and corrupted the asset data; the manager now calls term_cfg.func(...).clone().
from dataclasses import dataclass, field

import torch


class ArticulationData:
    def __init__(self, num_envs):
        self.root_lin_vel_b = torch.zeros(num_envs, 3)  # refreshed by the sim every physics step

    def update(self, vel):
        self.root_lin_vel_b[:] = vel


@dataclass
class ObsTerm:
    func: object
    params: dict = field(default_factory=dict)
    noise: object = None
    clip: tuple = None
    scale: float = None


def base_lin_vel(env, asset_name="robot"):
    return env.scene[asset_name].root_lin_vel_b


def uniform_noise(data, n_min=-0.1, n_max=0.1):
    return data + torch.rand_like(data) * (n_max - n_min) + n_min


class Env:
    def __init__(self, num_envs=2):
        self.scene = {"robot": ArticulationData(num_envs)}


class ObservationManager:
    def __init__(self, env, groups, enable_corruption=False):
        self._env = env
        self._group_obs_term_names = {g: list(terms) for g, terms in groups.items()}
        self._group_obs_term_cfgs = {g: list(terms.values()) for g, terms in groups.items()}
        self._enable_corruption = enable_corruption

    def compute(self):
        return {group: self.compute_group(group) for group in self._group_obs_term_names}

    def compute_group(self, group_name):
        group_term_names = self._group_obs_term_names[group_name]
        group_obs = dict.fromkeys(group_term_names, None)
        obs_terms = zip(group_term_names, self._group_obs_term_cfgs[group_name])
        for name, term_cfg in obs_terms:
            obs = term_cfg.func(self._env, **term_cfg.params)  # want: A
            if self._enable_corruption and term_cfg.noise:
                obs = term_cfg.noise(obs)
            if term_cfg.clip:
                obs = obs.clip_(min=term_cfg.clip[0], max=term_cfg.clip[1])
            if term_cfg.scale:
                obs = obs.mul_(term_cfg.scale)
            group_obs[name] = obs
        return torch.cat(list(group_obs.values()), dim=-1)


# ---------------------------------------------------------------- fixed version
class ObservationManagerFixed(ObservationManager):
    def compute_group(self, group_name):
        group_term_names = self._group_obs_term_names[group_name]
        group_obs = dict.fromkeys(group_term_names, None)
        obs_terms = zip(group_term_names, self._group_obs_term_cfgs[group_name])
        for name, term_cfg in obs_terms:
            obs = term_cfg.func(self._env, **term_cfg.params).clone()
            if self._enable_corruption and term_cfg.noise:
                obs = term_cfg.noise(obs)
            if term_cfg.clip:
                obs = obs.clip_(min=term_cfg.clip[0], max=term_cfg.clip[1])
            if term_cfg.scale:
                obs = obs.mul_(term_cfg.scale)
            group_obs[name] = obs
        return torch.cat(list(group_obs.values()), dim=-1)


if __name__ == "__main__":
    groups = {
        "highLevelPolicy": {"base_lin_vel": ObsTerm(func=base_lin_vel, noise=uniform_noise, scale=2.0)},
        "lowLevelPolicy": {"base_lin_vel": ObsTerm(func=base_lin_vel, noise=uniform_noise, scale=2.0)},
    }
    for cls in (ObservationManager, ObservationManagerFixed):
        env = Env()
        env.scene["robot"].update(torch.ones(2, 3))
        obs = cls(env, groups, enable_corruption=False).compute()  # play mode: noise disabled
        hi, lo = obs["highLevelPolicy"][0, 0].item(), obs["lowLevelPolicy"][0, 0].item()
        raw = env.scene["robot"].root_lin_vel_b[0, 0].item()
        print(cls.__name__, "high:", hi, "low:", lo, "asset data after compute:", raw)
        if cls is ObservationManager:
            assert (hi, lo, raw) == (2.0, 4.0, 4.0)  # second group scaled twice, as reported
        else:
            assert (hi, lo, raw) == (2.0, 2.0, 1.0)
