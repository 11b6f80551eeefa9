# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/3531 — `a[idxes].fill_(5)` and `a[idxes][:, 1] = 7` silently leave `a` unchanged (index with a LongTensor first -> copy) while `a[:, 1][idxes] = 7` works; the reporter's code was changed to index in a single `__setitem__`. Reconstructed as the priority table of a prioritized replay buffer.
import torch


class PrioritizedReplayBuffer:
    def __init__(self, capacity, obs_dim, alpha=0.6, eps=1e-6):
        self.capacity = capacity
        self.alpha = alpha
        self.eps = eps
        self.obs = torch.zeros(capacity, obs_dim)
        self.rewards = torch.zeros(capacity)
        # column 0: priority, column 1: age (steps since the priority was refreshed)
        self._priorities = torch.zeros(capacity, 2)
        self.max_priority = 1.0
        self.ptr = 0
        self.size = 0

    def add(self, obs, rewards):
        n = obs.shape[0]
        idxs = (torch.arange(n) + self.ptr) % self.capacity
        self.obs[idxs] = obs
        self.rewards[idxs] = rewards
        self._priorities[idxs].fill_(self.max_priority)  # want: B
        self._priorities[:, 1][idxs] = 0.0  # basic index first -> view, this write lands
        self.ptr = (self.ptr + n) % self.capacity
        self.size = min(self.size + n, self.capacity)

    def sample(self, batch_size, generator=None):
        prios = self._priorities[: self.size, 0].clamp_min(self.eps) ** self.alpha
        probs = prios / prios.sum()
        idxs = torch.multinomial(probs, batch_size, replacement=True, generator=generator)
        weights = (self.size * probs[idxs]) ** -0.4
        self._priorities[: self.size, 1] += 1
        return self.obs[idxs], self.rewards[idxs], weights / weights.max(), idxs

    def update_priorities(self, idxs, td_errors):
        new = td_errors.abs() + self.eps
        self._priorities[idxs][:, 0] = new  # want: B
        self.max_priority = max(self.max_priority, new.max().item())


class PrioritizedReplayBufferFixed(PrioritizedReplayBuffer):
    def add(self, obs, rewards):
        n = obs.shape[0]
        idxs = (torch.arange(n) + self.ptr) % self.capacity
        self.obs[idxs] = obs
        self.rewards[idxs] = rewards
        self._priorities[idxs, 0] = self.max_priority
        self._priorities[:, 1][idxs] = 0.0
        self.ptr = (self.ptr + n) % self.capacity
        self.size = min(self.size + n, self.capacity)

    def update_priorities(self, idxs, td_errors):
        new = td_errors.abs() + self.eps
        self._priorities[idxs, 0] = new
        self.max_priority = max(self.max_priority, new.max().item())


if __name__ == "__main__":
    for cls in (PrioritizedReplayBuffer, PrioritizedReplayBufferFixed):
        g = torch.Generator().manual_seed(0)
        buf = cls(capacity=64, obs_dim=4)
        buf.add(torch.randn(32, 4, generator=g), torch.randn(32, generator=g))
        _, _, _, idxs = buf.sample(8, generator=g)
        buf.update_priorities(idxs, torch.full((8,), 5.0))
        print(f"{cls.__name__:30s} stored priorities nonzero: {int((buf._priorities[:32, 0] > 0).sum()):2d}/32, "
              f"updated to 5.0: {bool((buf._priorities[idxs, 0] > 4.9).all())}")
    buf = PrioritizedReplayBuffer(capacity=64, obs_dim=4)
    buf.add(torch.randn(32, 4), torch.randn(32))
    assert buf._priorities[:, 0].sum() == 0
