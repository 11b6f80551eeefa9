# source: pytorch/rl https://github.com/pytorch/rl/pull/3301 — Dreamer imagination rollouts go through EnvBase.step_and_maybe_reset, whose maybe_reset/any_done evaluate `done.any()` in a Python `if`, i.e. a CUDA->CPU sync on every imagined step even though imagination never terminates. The fix overrides DreamerEnv.any_done() to return False and maybe_reset() to a no-op, so no control flow depends on a device tensor during imagination.
from __future__ import annotations

import torch
from torch import nn

class EnvBase(nn.Module):
    def __init__(self, device="cpu", batch_size=()):
        super().__init__()
        self.device, self.batch_size = torch.device(device), torch.Size(batch_size)

    def reset(self, tensordict=None, select_reset_only=False):
        return self._reset(tensordict)

    def step(self, tensordict: dict) -> dict:
        next_tensordict = self._step(tensordict)
        if "done" not in next_tensordict:
            next_tensordict["done"] = torch.zeros(*self.batch_size, 1, dtype=torch.bool, device=self.device)
        tensordict["next"] = next_tensordict
        return tensordict

    def _step_mdp(self, tensordict: dict) -> dict:
        return {k: v for k, v in tensordict["next"].items() if k != "reward"}

    def any_done(self, tensordict: dict) -> bool:
        """Checks if the tensordict is in a "done" state (or if an element of the batch is)."""
        done = tensordict.get("done", None)
        if done is not None:
            any_done = done.any()
        else:
            any_done = False
        if any_done:  # want: D
            tensordict["_reset"] = done.clone()
        return any_done

    def maybe_reset(self, tensordict: dict) -> dict:
        any_done = self.any_done(tensordict)
        if any_done:  # maybe: D (any_done() hands back the 0-d device tensor from done.any())
            tensordict = self.reset(tensordict, select_reset_only=True)
        return tensordict

    def step_and_maybe_reset(self, tensordict: dict) -> tuple[dict, dict]:
        tensordict = self.step(tensordict)
        tensordict_ = self._step_mdp(tensordict)
        tensordict_ = self.maybe_reset(tensordict_)
        return tensordict, tensordict_

    def rollout(self, max_steps: int, policy, tensordict: dict) -> list[dict]:
        tensordicts, tensordict_ = [], tensordict
        for _ in range(max_steps):
            tensordict_ = policy(tensordict_)
            tensordict, tensordict_ = self.step_and_maybe_reset(tensordict_)
            tensordicts.append(tensordict)
        return tensordicts

class ModelBasedEnvBase(EnvBase):
    def __init__(self, world_model: nn.Module, device="cpu", batch_size=()):
        super().__init__(device=device, batch_size=batch_size)
        self.world_model = world_model

    def _step(self, tensordict: dict) -> dict:
        # step method requires to be immutable
        tensordict_out = dict(tensordict)
        tensordict_out = self.world_model(tensordict_out)
        # done can be missing, it will be filled by `step`
        return {k: tensordict_out[k] for k in ("state", "belief", "reward")}

class DreamerEnv(ModelBasedEnvBase):
    """Dreamer simulation environment."""

    def __init__(self, world_model, prior_shape, belief_shape, obs_decoder=None, device="cpu", batch_size=None):
        super().__init__(world_model, device=device, batch_size=batch_size)
        self.obs_decoder, self.prior_shape, self.belief_shape = obs_decoder, prior_shape, belief_shape

    def _reset(self, tensordict=None, **kwargs) -> dict:
        return dict(tensordict)

class DreamerEnvFixed(DreamerEnv):
    """Dreamer simulation environment; imagination rollouts never terminate."""

    def any_done(self, tensordict) -> bool:
        """Returns False — imagination rollouts never terminate."""
        return False

    def maybe_reset(self, tensordict):
        """No-op — imagination rollouts don't need partial resets."""
        return tensordict

class RSSMPrior(nn.Module):
    def __init__(self, state_dim, belief_dim, action_dim):
        super().__init__()
        self.rnn = nn.GRUCell(state_dim + action_dim, belief_dim)
        self.to_state, self.to_reward = nn.Linear(belief_dim, state_dim), nn.Linear(belief_dim + state_dim, 1)

    def forward(self, td: dict) -> dict:
        belief = self.rnn(torch.cat([td["state"], td["action"]], -1), td["belief"])
        state = torch.tanh(self.to_state(belief))
        td["belief"], td["state"] = belief, state
        td["reward"] = self.to_reward(torch.cat([belief, state], -1))
        return td

if __name__ == "__main__":
    torch.manual_seed(0)
    batch, state_dim, belief_dim, action_dim = 4, 6, 8, 2
    world_model = RSSMPrior(state_dim, belief_dim, action_dim)
    actor = nn.Linear(state_dim + belief_dim, action_dim)

    def policy(td):
        return {**td, "action": torch.tanh(actor(torch.cat([td["state"], td["belief"]], -1)))}

    init = {"state": torch.randn(batch, state_dim), "belief": torch.zeros(batch, belief_dim)}
    with torch.no_grad():
        traj = DreamerEnv(world_model, (state_dim,), (belief_dim,), batch_size=(batch,)).rollout(5, policy, dict(init))
        traj_fixed = DreamerEnvFixed(world_model, (state_dim,), (belief_dim,), batch_size=(batch,)).rollout(5, policy, dict(init))

    for a, b in zip(traj, traj_fixed):
        assert torch.allclose(a["next"]["state"], b["next"]["state"])
        assert torch.allclose(a["next"]["reward"], b["next"]["reward"])
        assert not a["next"]["done"].any()
    print("ok", traj[-1]["next"]["reward"].squeeze(-1).tolist())
