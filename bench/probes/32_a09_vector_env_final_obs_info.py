# source: mani-skill/ManiSkill https://github.com/mani-skill/ManiSkill/pull/828 — ManiSkillVectorEnv.step kept the terminal `obs`/`infos` as final_observation/final_info and then called reset(env_idx); both still aliased the env's GPU buffers (camera images, the elapsed_steps counter), so the partial reset overwrote them and final_info reported elapsed_steps 0 and final_observation held reset frames; fixed by cloning them before the reset.
import torch


class BaseEnv:
    """Batched GPU-sim env whose observations are views of persistent sensor buffers."""

    def __init__(self, num_envs=4, max_episode_steps=3, device="cpu"):
        self.num_envs, self.max_episode_steps, self.device = num_envs, max_episode_steps, device
        self._camera_buffer = torch.zeros(num_envs, 4, 8, 8, device=device)  # rgb + depth planes
        self._qpos = torch.zeros(num_envs, 7, device=device)
        self._elapsed_steps = torch.zeros(num_envs, dtype=torch.int32, device=device)

    def get_obs(self):
        return {"rgb": self._camera_buffer[:, :3], "qpos": self._qpos}  # maybe: A (hands out a view of the persistent sensor buffer; only a bug once a caller keeps it across reset)

    def get_info(self):
        return {"elapsed_steps": self._elapsed_steps, "success": self._qpos[:, 0] > 1.0}

    def reset(self, options=None):
        env_idx = (options or {}).get("env_idx", torch.arange(self.num_envs, device=self.device))
        self._camera_buffer[env_idx] = 0.0
        self._qpos[env_idx] = 0.0
        self._elapsed_steps[env_idx] = 0
        return self.get_obs(), self.get_info()

    def step(self, actions):
        self._qpos += actions
        self._camera_buffer += actions[:, :1, None, None]
        self._elapsed_steps += 1
        truncated = self._elapsed_steps >= self.max_episode_steps
        terminated = torch.zeros_like(truncated)
        rew = self._qpos[:, 0].clone()
        return self.get_obs(), rew, terminated, truncated, self.get_info()


class ManiSkillVectorEnv:
    def __init__(self, env, auto_reset=True):
        self._env, self.auto_reset = env, auto_reset
        self.num_envs, self.device = env.num_envs, env.device

    def reset(self, options=None):
        return self._env.reset(options=options)

    def step(self, actions):
        obs, rew, terminations, truncations, infos = self._env.step(actions)
        dones = torch.logical_or(terminations, truncations)
        if dones.any() and self.auto_reset:
            final_obs = obs  # want: A
            env_idx = torch.arange(0, self.num_envs, device=self.device)[dones]
            final_info = infos  # want: A
            obs, infos = self.reset(options=dict(env_idx=env_idx))
            infos["final_observation"] = final_obs
            infos["final_info"] = final_info
            infos["_final_info"] = dones
        return obs, rew, terminations, truncations, infos


# ---------------------------------------------------------------- fixed version
def clone_tensor_dict(d):
    return {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in d.items()}


class ManiSkillVectorEnvFixed(ManiSkillVectorEnv):
    def step(self, actions):
        obs, rew, terminations, truncations, infos = self._env.step(actions)
        dones = torch.logical_or(terminations, truncations)
        if dones.any() and self.auto_reset:
            final_obs = clone_tensor_dict(obs)
            env_idx = torch.arange(0, self.num_envs, device=self.device)[dones]
            final_info = clone_tensor_dict(infos)
            obs, infos = self.reset(options=dict(env_idx=env_idx))
            infos["final_observation"] = final_obs
            infos["final_info"] = final_info
            infos["_final_info"] = dones
        return obs, rew, terminations, truncations, infos


if __name__ == "__main__":
    for cls in (ManiSkillVectorEnv, ManiSkillVectorEnvFixed):
        env = cls(BaseEnv())
        env.reset()
        for _ in range(3):
            obs, rew, term, trunc, infos = env.step(torch.ones(4, 7))
        steps = infos["final_info"]["elapsed_steps"]
        rgb = infos["final_observation"]["rgb"]
        print(cls.__name__, "final elapsed_steps:", steps.tolist(), "final rgb mean:", rgb.mean().item())
        if cls is ManiSkillVectorEnv:
            assert steps.eq(0).all() and rgb.abs().sum() == 0
        else:
            assert steps.eq(3).all() and torch.allclose(rgb, torch.full_like(rgb, 3.0))
