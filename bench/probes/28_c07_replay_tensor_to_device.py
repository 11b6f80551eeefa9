# source: sdpkjc/abcdrl https://github.com/sdpkjc/abcdrl/pull/2 — Agent.learn converted every sampled replay-buffer ndarray with torch.tensor(item[1]).to(device), i.e. a host copy followed by a second device copy for each field on every learn step; the fix uses torch.as_tensor(item[1], device=device) (zero-copy on CPU, single transfer on GPU).
import copy
import random
from typing import NamedTuple, Union

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class ReplayBuffer:
    class Samples(NamedTuple):
        observations: Union[torch.Tensor, np.ndarray]
        actions: Union[torch.Tensor, np.ndarray]
        next_observations: Union[torch.Tensor, np.ndarray]
        dones: Union[torch.Tensor, np.ndarray]
        rewards: Union[torch.Tensor, np.ndarray]

    def __init__(self, obs_dim, buffer_size=2048):
        self.obs_buf = np.zeros((buffer_size, obs_dim), dtype=np.float32)
        self.next_obs_buf = np.zeros((buffer_size, obs_dim), dtype=np.float32)
        self.acts_buf = np.zeros((buffer_size, 1), dtype=np.int64)
        self.rews_buf = np.zeros((buffer_size,), dtype=np.float32)
        self.dones_buf = np.zeros((buffer_size,), dtype=np.float32)
        self.buffer_size = buffer_size
        self.ptr = 0
        self.size = 0

    def add(self, obs, next_obs, act, rew, done):
        for obs_i, next_obs_i, act_i, rew_i, done_i in zip(obs, next_obs, act, rew, done):
            self.obs_buf[self.ptr] = np.array(obs_i).copy()
            self.next_obs_buf[self.ptr] = np.array(next_obs_i).copy()
            self.acts_buf[self.ptr] = np.array(act_i).copy()
            self.rews_buf[self.ptr] = np.array(rew_i).copy()
            self.dones_buf[self.ptr] = np.array(done_i).copy()
            self.ptr = (self.ptr + 1) % self.buffer_size
            self.size = min(self.size + 1, self.buffer_size)

    def sample(self, batch_size=1):
        idxs = np.random.choice(self.size, size=batch_size, replace=False)
        return ReplayBuffer.Samples(
            observations=self.obs_buf[idxs],
            next_observations=self.next_obs_buf[idxs],
            actions=self.acts_buf[idxs],
            rewards=self.rews_buf[idxs],
            dones=self.dones_buf[idxs],
        )


class Algorithm:
    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.model = nn.Sequential(nn.Linear(kwargs["obs_dim"], 64), nn.ReLU(), nn.Linear(64, kwargs["n_act"]))
        self.model.to(kwargs["device"])
        self.model_t = copy.deepcopy(self.model)
        self.optimizer = optim.Adam(self.model.parameters(), lr=2.5e-4)

    def learn(self, data):
        with torch.no_grad():
            target_max, _ = self.model_t(data.next_observations).max(dim=1)
            td_target = data.rewards.flatten() + self.kwargs["gamma"] * target_max * (1 - data.dones.flatten())
        old_val = self.model(data.observations).gather(1, data.actions).squeeze()
        td_loss = F.mse_loss(td_target, old_val)
        self.optimizer.zero_grad()
        td_loss.backward()
        self.optimizer.step()
        log_data = {"td_loss": td_loss, "q_value": old_val.mean()}
        return log_data


class Agent:
    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.alg = Algorithm(**kwargs)

    def sample(self, obs):
        obs = torch.Tensor(obs).to(next(self.alg.model.parameters()).device)
        with torch.no_grad():
            _, act = self.alg.model(obs).max(dim=1)
        act = act.cpu().numpy()
        return act

    def learn(self, data):
        # data preprocessing
        data = data._replace(
            **{
                item[0]: torch.tensor(item[1]).to(self.kwargs["device"])  # want: C
                for item in data._asdict().items()
                if isinstance(item[1], np.ndarray)
            }
        )
        return self.alg.learn(data)

    def learn_fixed(self, data):
        data = data._replace(
            **{
                item[0]: torch.as_tensor(item[1], device=self.kwargs["device"])
                for item in data._asdict().items()
                if isinstance(item[1], np.ndarray)
            }
        )
        return self.alg.learn(data)


if __name__ == "__main__":
    np.random.seed(0)
    random.seed(0)
    torch.manual_seed(0)
    obs_dim, n_env = 8, 4
    rb = ReplayBuffer(obs_dim)
    agent = Agent(obs_dim=obs_dim, n_act=3, device="cpu", gamma=0.99)
    obs = np.random.randn(n_env, obs_dim).astype(np.float32)
    for step in range(120):
        act = agent.sample(obs)
        next_obs = np.random.randn(n_env, obs_dim).astype(np.float32)
        rb.add(obs, next_obs, act.reshape(-1, 1), np.random.rand(n_env), np.zeros(n_env))
        obs = next_obs
        if step > 20 and step % 10 == 0:
            agent.learn(rb.sample(64))
            agent.learn_fixed(rb.sample(64))
    print("ok", rb.size)
