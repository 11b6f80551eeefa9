# source: Genesis-Embodied-AI/genesis-world https://github.com/Genesis-Embodied-AI/genesis-world/pull/2092 — the Go2 locomotion RL env's `step` turned the resample and reset masks into index lists with `.nonzero(as_tuple=False)` every control step and `reset_idx` logged each episode sum with `torch.mean(...).item()`, so every one of the thousands of batched env steps synchronized the GPU with the host. The PR made the env GPU-sync free: `_resample_commands`/`_reset_idx` take the boolean masks directly, time-outs are a cast of the mask, and episode statistics stay tensors.
import math

import torch


def gs_rand_float(lower, upper, shape, device):
    return (upper - lower) * torch.rand(size=shape, device=device) + lower


class Go2Env:
    def __init__(self, num_envs, env_cfg, command_cfg, device="cpu"):
        self.num_envs, self.device = num_envs, device
        self.env_cfg, self.command_cfg = env_cfg, command_cfg
        self.dt = 0.02
        self.max_episode_length = math.ceil(env_cfg["episode_length_s"] / self.dt)
        self.episode_sums = {"tracking_lin_vel": torch.zeros(num_envs, device=device)}
        self.base_euler = torch.zeros(num_envs, 3, device=device)
        self.commands = torch.zeros(num_envs, 3, device=device)
        self.episode_length_buf = torch.zeros(num_envs, device=device, dtype=torch.int32)
        self.reset_buf = torch.ones(num_envs, device=device, dtype=torch.bool)
        self.extras = dict()

    def _resample_commands(self, envs_idx):
        self.commands[envs_idx, 0] = gs_rand_float(*self.command_cfg["lin_vel_x_range"], (len(envs_idx),), self.device)
        self.commands[envs_idx, 1] = gs_rand_float(*self.command_cfg["lin_vel_y_range"], (len(envs_idx),), self.device)
        self.commands[envs_idx, 2] = gs_rand_float(*self.command_cfg["ang_vel_range"], (len(envs_idx),), self.device)

    def step(self, euler):
        self.episode_length_buf += 1
        self.base_euler[:] = euler
        self.episode_sums["tracking_lin_vel"] += torch.exp(-self.commands[:, 0].square())

        envs_idx = (
            (self.episode_length_buf % int(self.env_cfg["resampling_time_s"] / self.dt) == 0)
            .nonzero(as_tuple=False)  # want: D
            .reshape((-1,))
        )
        self._resample_commands(envs_idx)

        self.reset_buf = self.episode_length_buf > self.max_episode_length
        self.reset_buf |= torch.abs(self.base_euler[:, 1]) > self.env_cfg["termination_if_pitch_greater_than"]
        self.reset_buf |= torch.abs(self.base_euler[:, 0]) > self.env_cfg["termination_if_roll_greater_than"]
        self.extras["time_outs"] = (self.episode_length_buf > self.max_episode_length).to(dtype=torch.float32)
        self.reset_idx(self.reset_buf.nonzero(as_tuple=False).reshape((-1,)))  # want: D
        return self.reset_buf, self.extras

    def reset_idx(self, envs_idx):
        if len(envs_idx) == 0:
            return
        self.episode_length_buf[envs_idx] = 0
        self.extras["episode"] = {}
        for key in self.episode_sums.keys():
            self.extras["episode"]["rew_" + key] = (
                torch.mean(self.episode_sums[key][envs_idx]).item() / self.env_cfg["episode_length_s"]  # want: D
            )
            self.episode_sums[key][envs_idx] = 0.0
        self._resample_commands(envs_idx)


class Go2EnvFixed(Go2Env):
    def _resample_commands(self, envs_idx):
        commands = torch.stack([
            gs_rand_float(*self.command_cfg["lin_vel_x_range"], (self.num_envs,), self.device),
            gs_rand_float(*self.command_cfg["lin_vel_y_range"], (self.num_envs,), self.device),
            gs_rand_float(*self.command_cfg["ang_vel_range"], (self.num_envs,), self.device),
        ], dim=-1)
        self.commands.copy_(torch.where(envs_idx[:, None], commands, self.commands))

    def step(self, euler):
        self.episode_length_buf += 1
        self.base_euler[:] = euler
        self.episode_sums["tracking_lin_vel"] += torch.exp(-self.commands[:, 0].square())
        self._resample_commands(self.episode_length_buf % int(self.env_cfg["resampling_time_s"] / self.dt) == 0)
        self.reset_buf = self.episode_length_buf > self.max_episode_length
        self.reset_buf |= torch.abs(self.base_euler[:, 1]) > self.env_cfg["termination_if_pitch_greater_than"]
        self.reset_buf |= torch.abs(self.base_euler[:, 0]) > self.env_cfg["termination_if_roll_greater_than"]
        self.extras["time_outs"] = (self.episode_length_buf > self.max_episode_length).to(dtype=torch.float32)
        self._reset_idx(self.reset_buf)
        return self.reset_buf, self.extras

    def _reset_idx(self, envs_idx):
        self.episode_length_buf.masked_fill_(envs_idx, 0)
        n_reset = envs_idx.sum().clamp_min(1)
        self.extras["episode"] = {}
        for key in self.episode_sums.keys():
            self.extras["episode"]["rew_" + key] = (
                torch.where(envs_idx, self.episode_sums[key], 0.0).sum() / n_reset / self.env_cfg["episode_length_s"]
            )
            self.episode_sums[key].masked_fill_(envs_idx, 0.0)
        self._resample_commands(envs_idx)


if __name__ == "__main__":
    env_cfg = {"episode_length_s": 0.1, "resampling_time_s": 0.04,
               "termination_if_pitch_greater_than": 10.0, "termination_if_roll_greater_than": 10.0}
    command_cfg = {"lin_vel_x_range": [0.5, 0.5], "lin_vel_y_range": [0.0, 0.0], "ang_vel_range": [0.0, 0.0]}
    a, b = Go2Env(4, env_cfg, command_cfg), Go2EnvFixed(4, env_cfg, command_cfg)
    euler = torch.tensor([[0.0, 0.0, 0.0], [0.0, 20.0, 0.0], [0.0, 0.0, 0.0], [15.0, 0.0, 0.0]])
    for _ in range(8):
        ra, _ = a.step(euler)
        rb, _ = b.step(euler)
        assert torch.equal(ra, rb)
        assert torch.equal(a.episode_length_buf, b.episode_length_buf)
        assert torch.allclose(a.commands, b.commands)
    assert abs(a.extras["episode"]["rew_tracking_lin_vel"] - float(b.extras["episode"]["rew_tracking_lin_vel"])) < 1e-6
    print("ok")
