# source: Farama-Foundation/SuperSuit https://github.com/Farama-Foundation/SuperSuit/pull/116 — ConcatVecEnv.concat_obs (and the pettingzoo vec wrapper) filled a persistent obs_buffer in place and returned the buffer itself, so SB3's `self._last_obs` was silently overwritten by the next step and (obs_n, action_n) pairs became (obs_n+1, action_n); the fix returns `self.obs_buffer.copy()`.
import numpy as np


class SingleVecEnv:
    def __init__(self, obs_shape, env_id):
        self.num_envs = 1
        self.obs_shape = obs_shape
        self.env_id = env_id
        self.t = 0

    def _obs(self):
        return np.full((1,) + self.obs_shape, 10.0 * self.env_id + self.t, dtype=np.float32)

    def reset(self):
        self.t = 0
        return self._obs()

    def step(self, actions):
        self.t += 1
        return self._obs(), np.zeros(1), np.zeros(1, dtype=bool), [{}]


def transpose(ll):
    return [[ll[i][j] for i in range(len(ll))] for j in range(len(ll[0]))]


class ConcatVecEnv:
    def __init__(self, vec_env_fns, obs_shape=(4,)):
        self.vec_envs = [fn() for fn in vec_env_fns]
        self.num_envs = sum(env.num_envs for env in self.vec_envs)
        self.obs_buffer = np.empty((self.num_envs,) + obs_shape, dtype=np.float32)

    def concat_obs(self, obs_list):
        idx = 0
        for venv, obs in zip(self.vec_envs, obs_list):
            endidx = idx + venv.num_envs
            self.obs_buffer[idx:endidx] = obs
            idx = endidx
        return self.obs_buffer  # want: A

    def reset(self):
        return self.concat_obs([vec_env.reset() for vec_env in self.vec_envs])

    def step(self, actions):
        data, idx = [], 0
        for venv in self.vec_envs:
            data.append(venv.step(actions[idx: idx + venv.num_envs]))
            idx += venv.num_envs
        observations, rewards, dones, infos = transpose(data)
        observations = self.concat_obs(observations)
        return observations, np.concatenate(rewards), np.concatenate(dones), sum(infos, [])


class ConcatVecEnvFixed(ConcatVecEnv):
    def concat_obs(self, obs_list):
        idx = 0
        for venv, obs in zip(self.vec_envs, obs_list):
            endidx = idx + venv.num_envs
            self.obs_buffer[idx:endidx] = obs
            idx = endidx
        return self.obs_buffer.copy()


def collect_rollout(env, n_steps):
    # stable-baselines3 OnPolicyAlgorithm.collect_rollouts, reduced
    rollout = []
    _last_obs = env.reset()
    for _ in range(n_steps):
        actions = np.zeros(env.num_envs, dtype=np.int64)
        new_obs, rewards, dones, infos = env.step(actions)
        rollout.append((_last_obs, actions))
        _last_obs = new_obs
    return rollout


if __name__ == "__main__":
    for cls in (ConcatVecEnv, ConcatVecEnvFixed):
        env = cls([lambda i=i: SingleVecEnv((4,), i) for i in range(3)])
        rollout = collect_rollout(env, 3)
        first_obs_t = [int(obs[0, 0]) for obs, _ in rollout]
        print(f"{cls.__name__}: env-0 obs timestep stored with actions 0..2 = {first_obs_t} (expected [0, 1, 2])")
