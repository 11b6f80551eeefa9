# source: pytorch/rl https://github.com/pytorch/rl/issues/1783 — PPOLoss.forward normalized the advantage with `loc = advantage.mean().item()` and `scale = advantage.std().clamp_min(1e-6).item()`, so every loss call on a CUDA batch blocked the host until the whole rollout/critic graph had run. vmoens acknowledged it ("we should check that") and the fix (commit c3ffb5a2f, PR #1795) keeps `loc` and `scale` as 0-d device tensors.
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import distributions as d
from torch import nn


def distance_loss(v1: torch.Tensor, v2: torch.Tensor, loss_function: str) -> torch.Tensor:
    if loss_function == "l2":
        return F.mse_loss(v1, v2, reduction="none")
    return F.smooth_l1_loss(v1, v2, reduction="none")


class _AcceptedKeys:
    advantage = "advantage"
    value_target = "value_target"
    sample_log_prob = "sample_log_prob"
    action = "action"


class PPOLoss(nn.Module):
    """A parent PPO loss class (no regularisation)."""

    def __init__(self, actor_network: nn.Module, critic_network: nn.Module, *, entropy_bonus: bool = True,
                 entropy_coef: float = 0.01, critic_coef: float = 1.0, loss_critic_type: str = "smooth_l1",
                 normalize_advantage: bool = False):
        super().__init__()
        self.actor = actor_network
        self.critic = critic_network
        self.entropy_bonus = entropy_bonus
        self.tensor_keys = _AcceptedKeys()
        device = next(self.parameters()).device
        self.register_buffer("entropy_coef", torch.tensor(entropy_coef, device=device))
        self.register_buffer("critic_coef", torch.tensor(critic_coef, device=device))
        self.loss_critic_type = loss_critic_type
        self.normalize_advantage = normalize_advantage

    def get_dist(self, tensordict: dict) -> d.Distribution:
        loc, scale = self.actor(tensordict["observation"]).chunk(2, -1)
        return d.Independent(d.Normal(loc, F.softplus(scale) + 1e-4), 1)

    def _log_weight(self, tensordict: dict):
        action = tensordict[self.tensor_keys.action]
        dist = self.get_dist(tensordict)
        log_prob = dist.log_prob(action)
        prev_log_prob = tensordict[self.tensor_keys.sample_log_prob]
        log_weight = (log_prob - prev_log_prob).unsqueeze(-1)
        return log_weight, dist

    def loss_critic(self, tensordict: dict) -> torch.Tensor:
        target_return = tensordict[self.tensor_keys.value_target]
        state_value = self.critic(tensordict["observation"])
        loss_value = distance_loss(target_return, state_value, loss_function=self.loss_critic_type)
        return self.critic_coef * loss_value

    def forward(self, tensordict: dict) -> dict:
        tensordict = dict(tensordict)
        advantage = tensordict[self.tensor_keys.advantage]
        if self.normalize_advantage and advantage.numel() > 1:
            loc = advantage.mean().item()  # want: D
            scale = advantage.std().clamp_min(1e-6).item()  # want: D
            advantage = (advantage - loc) / scale

        log_weight, dist = self._log_weight(tensordict)
        neg_loss = (log_weight.exp() * advantage).mean()
        td_out = {"loss_objective": -neg_loss.mean()}
        if self.entropy_bonus:
            entropy = dist.entropy()
            td_out["entropy"] = entropy.mean().detach()  # for logging
            td_out["loss_entropy"] = -self.entropy_coef * entropy.mean()
        td_out["loss_critic"] = self.loss_critic(tensordict).mean()
        return td_out


class PPOLossFixed(PPOLoss):
    def forward(self, tensordict: dict) -> dict:
        tensordict = dict(tensordict)
        advantage = tensordict[self.tensor_keys.advantage]
        if self.normalize_advantage and advantage.numel() > 1:
            loc = advantage.mean()
            scale = advantage.std().clamp_min(1e-6)
            advantage = (advantage - loc) / scale

        log_weight, dist = self._log_weight(tensordict)
        neg_loss = (log_weight.exp() * advantage).mean()
        td_out = {"loss_objective": -neg_loss.mean()}
        if self.entropy_bonus:
            entropy = dist.entropy()
            td_out["entropy"] = entropy.mean().detach()  # for logging
            td_out["loss_entropy"] = -self.entropy_coef * entropy.mean()
        td_out["loss_critic"] = self.loss_critic(tensordict).mean()
        return td_out


if __name__ == "__main__":
    torch.manual_seed(0)
    n_obs, n_act, batch = 3, 2, 16
    actor = nn.Sequential(nn.Linear(n_obs, 8), nn.Tanh(), nn.Linear(8, 2 * n_act))
    critic = nn.Sequential(nn.Linear(n_obs, 8), nn.Tanh(), nn.Linear(8, 1))
    data = {
        "observation": torch.randn(batch, n_obs),
        "action": torch.randn(batch, n_act),
        "sample_log_prob": torch.randn(batch) / 10,
        "advantage": torch.randn(batch, 1) * 3 + 1,
        "value_target": torch.randn(batch, 1),
    }
    loss = PPOLoss(actor, critic, normalize_advantage=True)
    loss_fixed = PPOLossFixed(actor, critic, normalize_advantage=True)
    out, out_fixed = loss(data), loss_fixed(data)
    for key in out:
        assert torch.allclose(out[key], out_fixed[key], atol=1e-6), key
    sum(v for k, v in out_fixed.items() if k.startswith("loss_")).backward()
    assert actor[0].weight.grad is not None
    print("ok", {k: round(float(v.detach()), 4) for k, v in out.items()})
