# source: RoboVerseOrg/RoboVerse https://github.com/RoboVerseOrg/RoboVerse/pull/777 — resample_commands zeroed the "standing" envs with `cfg.value[env_ids][final_env_ids, :] = 0.0`; `cfg.value[env_ids]` is advanced indexing (a copy), so the write was discarded and no env ever got a zero velocity command. The fix indexes once by absolute env id: `cfg.value[env_ids[final_env_ids], :] = 0.0`.
from dataclasses import dataclass, field

import torch


def torch_rand_float(lower, upper, shape, device):
    return (upper - lower) * torch.rand(*shape, device=device) + lower


@dataclass
class CommandRanges:
    lin_vel_x: tuple = (-1.0, 1.0)
    lin_vel_y: tuple = (-0.5, 0.5)
    ang_vel_yaw: tuple = (-1.0, 1.0)


@dataclass
class CommandsCfg:
    num_envs: int = 16
    num_commands: int = 3
    rel_standing_envs: float = 0.02
    small_command_threshold: float = 0.2
    ranges: CommandRanges = field(default_factory=CommandRanges)
    value: torch.Tensor = None

    def __post_init__(self):
        self.value = torch.zeros(self.num_envs, self.num_commands)


def resample_commands(device, env_ids, cfg):
    n = len(env_ids)
    r = cfg.ranges
    cfg.value[env_ids, 0] = torch_rand_float(r.lin_vel_x[0], r.lin_vel_x[1], (n, 1), device).squeeze(1)
    cfg.value[env_ids, 1] = torch_rand_float(r.lin_vel_y[0], r.lin_vel_y[1], (n, 1), device).squeeze(1)
    cfg.value[env_ids, 2] = torch_rand_float(r.ang_vel_yaw[0], r.ang_vel_yaw[1], (n, 1), device).squeeze(1)
    # set small commands to zero (augmented setitem, writes through)
    cfg.value[env_ids, :2] *= (torch.norm(cfg.value[env_ids, :2], dim=1) > cfg.small_command_threshold).unsqueeze(1)
    # a fraction of the resampled envs should stand still
    standing = torch.rand(n, device=device) < cfg.rel_standing_envs
    final_env_ids = standing.nonzero(as_tuple=False).flatten()
    if len(final_env_ids) > 0:
        cfg.value[env_ids][final_env_ids, :] = 0.0  # want: B


def resample_commands_fixed(device, env_ids, cfg):
    n = len(env_ids)
    r = cfg.ranges
    cfg.value[env_ids, 0] = torch_rand_float(r.lin_vel_x[0], r.lin_vel_x[1], (n, 1), device).squeeze(1)
    cfg.value[env_ids, 1] = torch_rand_float(r.lin_vel_y[0], r.lin_vel_y[1], (n, 1), device).squeeze(1)
    cfg.value[env_ids, 2] = torch_rand_float(r.ang_vel_yaw[0], r.ang_vel_yaw[1], (n, 1), device).squeeze(1)
    cfg.value[env_ids, :2] *= (torch.norm(cfg.value[env_ids, :2], dim=1) > cfg.small_command_threshold).unsqueeze(1)
    standing = torch.rand(n, device=device) < cfg.rel_standing_envs
    final_env_ids = standing.nonzero(as_tuple=False).flatten()
    if len(final_env_ids) > 0:
        cfg.value[env_ids[final_env_ids], :] = 0.0


if __name__ == "__main__":
    env_ids = torch.tensor([0, 2, 4, 6, 8, 10])
    for fn in (resample_commands, resample_commands_fixed):
        torch.manual_seed(0)
        cfg = CommandsCfg(rel_standing_envs=1.0)  # every resampled env must stand
        fn("cpu", env_ids, cfg)
        zeroed = bool((cfg.value[env_ids] == 0).all())
        print(f"{fn.__name__:25s} all resampled envs standing: {zeroed}")
    torch.manual_seed(0)
    cfg = CommandsCfg(rel_standing_envs=1.0)
    resample_commands("cpu", env_ids, cfg)
    assert not (cfg.value[env_ids] == 0).all()
