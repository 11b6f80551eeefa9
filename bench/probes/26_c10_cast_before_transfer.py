# source: facebookresearch/habitat-lab https://github.com/facebookresearch/habitat-lab/pull/297 — batch_obs() did `torch.stack(batch[sensor], dim=0).to(device=device, dtype=torch.float)`, which widens uint8 RGB observations to float32 on the CPU and then ships 4x the bytes; the fix moves first and converts on the GPU: `.to(device=device).to(dtype=torch.float)`.
from collections import defaultdict
from typing import Dict, List, Optional

import numpy as np
import torch


def _to_tensor(v):
    if torch.is_tensor(v):
        return v
    elif isinstance(v, np.ndarray):
        return torch.from_numpy(v)
    else:
        return torch.tensor(v, dtype=torch.float)


def batch_obs(observations: List[Dict], device: Optional[torch.device] = None) -> Dict[str, torch.Tensor]:
    r"""Transpose a batch of observation dicts to a dict of batched observations."""
    batch = defaultdict(list)

    for obs in observations:
        for sensor in obs:
            batch[sensor].append(_to_tensor(obs[sensor]))

    for sensor in batch:
        batch[sensor] = torch.stack(batch[sensor], dim=0).to(  # want: C
            device=device, dtype=torch.float
        )

    return batch


class FakeVectorEnv:
    num_envs = 4

    def step(self, actions):
        obs = [{"rgb": np.random.randint(0, 255, (256, 256, 3), dtype=np.uint8),
                "depth": np.random.rand(256, 256, 1).astype(np.float32),
                "pointgoal_with_gps_compass": np.random.rand(2).astype(np.float32)}
               for _ in range(self.num_envs)]
        rewards = [float(np.random.rand()) for _ in range(self.num_envs)]
        dones = [bool(np.random.rand() < 0.05) for _ in range(self.num_envs)]
        return obs, rewards, dones


class PPOTrainer:
    def __init__(self, device):
        self.device = device
        self.envs = FakeVectorEnv()

    def _collect_rollout_step(self, current_episode_reward):
        observations, rewards, dones = self.envs.step([0] * self.envs.num_envs)
        batch = batch_obs(observations, device=self.device)
        rewards = torch.tensor(rewards, dtype=torch.float, device=current_episode_reward.device)
        rewards = rewards.unsqueeze(1)
        masks = torch.tensor([[0.0] if done else [1.0] for done in dones], dtype=torch.float,
                             device=current_episode_reward.device)
        current_episode_reward += rewards
        current_episode_reward *= masks
        return batch


if __name__ == "__main__":
    np.random.seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    trainer = PPOTrainer(device)
    episode_reward = torch.zeros(trainer.envs.num_envs, 1, device=device)
    for _ in range(8):
        batch = trainer._collect_rollout_step(episode_reward)
    print("ok", {k: (tuple(v.shape), v.dtype) for k, v in batch.items()}["rgb"])
