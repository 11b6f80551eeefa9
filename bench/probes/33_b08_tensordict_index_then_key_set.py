# source: pytorch/rl https://github.com/pytorch/rl/issues/368 — with torchrl's TensorDict, `td[0]['0'] = torch.full((3, 4), 1)` had no effect: indexing the TensorDict first built a new dict of indexed tensors, so setting a key replaced the entry in that throw-away dict instead of writing into the stored tensor (only `td['0'][0] = ...` worked). The fix routes index-then-key writes through a sub-tensordict that writes back into the parent.
import torch


class TensorDict:
    def __init__(self, source, batch_size):
        self._tensordict = dict(source)
        self.batch_size = torch.Size(batch_size)

    def __getitem__(self, idx):
        if isinstance(idx, str):
            return self._tensordict[idx]
        return TensorDict({k: v[idx] for k, v in self._tensordict.items()}, batch_size=self.batch_size[1:])  # maybe: B (per-index dict copy; new keys never reach the parent)

    def __setitem__(self, key, value):
        self._tensordict[key] = value

    def set_at_(self, key, value, idx):
        self._tensordict[key][idx] = value
        return self

    def get_sub_tensordict(self, idx):
        return SubTensorDict(self, idx)


class SubTensorDict:
    def __init__(self, source, idx):
        self._source = source
        self.idx = idx

    def __getitem__(self, key):
        return self._source[key][self.idx]

    def __setitem__(self, key, value):
        self._source.set_at_(key, value, self.idx)


def compute_gae(rollout, gamma=0.99, lmbda=0.95):
    T = rollout.batch_size[0]
    rollout["advantage"] = torch.zeros(T, rollout["reward"].shape[-1])
    gae = torch.zeros(rollout["reward"].shape[-1])
    for t in reversed(range(T)):
        step = rollout[t]
        delta = step["reward"] + gamma * step["next_value"] * (1 - step["done"]) - step["value"]
        gae = delta + gamma * lmbda * (1 - step["done"]) * gae
        rollout[t]["advantage"] = gae  # want: B
    return rollout


def compute_gae_fixed(rollout, gamma=0.99, lmbda=0.95):
    T = rollout.batch_size[0]
    rollout["advantage"] = torch.zeros(T, rollout["reward"].shape[-1])
    gae = torch.zeros(rollout["reward"].shape[-1])
    for t in reversed(range(T)):
        step = rollout.get_sub_tensordict(t)
        delta = step["reward"] + gamma * step["next_value"] * (1 - step["done"]) - step["value"]
        gae = delta + gamma * lmbda * (1 - step["done"]) * gae
        step["advantage"] = gae
    return rollout


def make_rollout(T=8, n_envs=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    return TensorDict(
        {
            "reward": torch.randn(T, n_envs, generator=g),
            "value": torch.randn(T, n_envs, generator=g),
            "next_value": torch.randn(T, n_envs, generator=g),
            "done": (torch.rand(T, n_envs, generator=g) < 0.1).float(),
        },
        batch_size=[T],
    )


if __name__ == "__main__":
    adv_bug = compute_gae(make_rollout())["advantage"]
    adv_fix = compute_gae_fixed(make_rollout())["advantage"]
    print("buggy advantages all zero:", bool((adv_bug == 0).all()))
    print("fixed advantages all zero:", bool((adv_fix == 0).all()))
    assert (adv_bug == 0).all() and not (adv_fix == 0).all()
