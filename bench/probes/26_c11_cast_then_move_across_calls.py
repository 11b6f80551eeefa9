# source: facebookresearch/habitat-lab https://github.com/facebookresearch/habitat-lab/pull/359 — PPOAgent.act called `batch_obs([observations])` with no device, so batch_obs converted uint8 frames to float32 on the CPU, and the caller then moved the float batch with `batch[sensor].to(self.device)`; the fix passes `device=self.device` so the uint8 data is transferred first and widened on the GPU.
from collections import defaultdict
from typing import Dict, List, Optional

import numpy as np
import torch
from torch import nn


def _to_tensor(v):
    if torch.is_tensor(v):
        return v
    elif isinstance(v, np.ndarray):
        return torch.from_numpy(v)
    else:
        return torch.tensor(v, dtype=torch.float)


def batch_obs(observations: List[Dict], device: Optional[torch.device] = None) -> Dict[str, torch.Tensor]:
    r"""Transpose a batch of observation dicts to a dict of batched observations.

    device: The torch.device to put the resulting tensors on. Will not move the tensors if None
    """
    batch = defaultdict(list)

    for obs in observations:
        for sensor in obs:
            batch[sensor].append(_to_tensor(obs[sensor]))

    for sensor in batch:
        batch[sensor] = (
            torch.stack(batch[sensor], dim=0)
            .to(device=device)
            .to(dtype=torch.float)
        )

    return batch


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.cnn = nn.Sequential(nn.Conv2d(3, 8, 8, stride=4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(8 + 2, 4)

    def act(self, batch, deterministic=False):
        rgb = batch["rgb"].permute(0, 3, 1, 2) / 255.0
        feats = torch.cat([self.cnn(rgb), batch["pointgoal_with_gps_compass"]], dim=1)
        logits = self.fc(feats)
        return logits.argmax(-1) if deterministic else torch.distributions.Categorical(logits=logits).sample()


class PPOAgent:
    def __init__(self, device):
        self.device = device
        self.actor_critic = Policy().to(device)

    def act(self, observations):
        batch = batch_obs([observations])  # want: C
        for sensor in batch:
            batch[sensor] = batch[sensor].to(self.device)  # want: C

        with torch.no_grad():
            action = self.actor_critic.act(batch, deterministic=False)
        return action.item()


class PPOTrainer:
    def __init__(self, device):
        self.device = device
        self.actor_critic = Policy().to(device)

    def _eval_step(self, observations):
        batch = batch_obs(observations, device=self.device)  # fixed call shape (look-alike)
        with torch.no_grad():
            return self.actor_critic.act(batch, deterministic=True)


def make_obs():
    return {"rgb": np.random.randint(0, 255, (256, 256, 3), dtype=np.uint8),
            "pointgoal_with_gps_compass": np.random.rand(2).astype(np.float32)}


if __name__ == "__main__":
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    agent = PPOAgent(device)
    actions = [agent.act(make_obs()) for _ in range(10)]
    trainer = PPOTrainer(device)
    a = trainer._eval_step([make_obs() for _ in range(4)])
    print("ok", actions[:3], tuple(a.shape))
