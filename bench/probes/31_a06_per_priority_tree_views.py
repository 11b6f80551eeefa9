# source: Kaixhin/Rainbow https://github.com/Kaixhin/Rainbow/pull/33 — Agent.learn passed `loss.detach()` to ReplayMemory.update_priorities, which iterated it and stored each 0-d element view in the long-lived segment tree, so every node pinned its minibatch's loss storage (and made later tree math tensor ops); the fix converts priorities with `.cpu().numpy()` before they enter the replay memory.
import numpy as np
import torch
from torch import nn


class SegmentTree:
    def __init__(self, size):
        self.index = 0
        self.size = size
        self.full = False  # Used to track actual capacity
        self.sum_tree = [0] * (2 * size - 1)  # Initialise fixed size tree with all (priority) zeros
        self.data = [None] * size  # Wrap-around cyclic buffer
        self.max = 1  # Initial max value to return (1 = 1^ω)

    def _propagate(self, index, value):
        parent = (index - 1) // 2
        left, right = 2 * parent + 1, 2 * parent + 2
        self.sum_tree[parent] = self.sum_tree[left] + self.sum_tree[right]
        if parent != 0:
            self._propagate(parent, value)

    def update(self, index, value):
        self.sum_tree[index] = value  # Set new value
        self._propagate(index, value)  # Update tree
        self.max = max(value, self.max)

    def append(self, data, value):
        self.data[self.index] = data
        self.update(self.index + self.size - 1, value)
        self.index = (self.index + 1) % self.size
        self.full = self.full or self.index == 0

    def total(self):
        return self.sum_tree[0]


class ReplayMemory:
    def __init__(self, capacity, priority_exponent=0.5):
        self.priority_exponent = priority_exponent
        self.transitions = SegmentTree(capacity)

    def append(self, state, target):
        self.transitions.append((state, target), self.transitions.max)

    def sample(self, batch_size):
        idxs = np.random.randint(0, self.transitions.size, size=batch_size)
        states = torch.stack([self.transitions.data[i][0] for i in idxs])
        targets = torch.stack([self.transitions.data[i][1] for i in idxs])
        return idxs + self.transitions.size - 1, states, targets

    def update_priorities(self, idxs, priorities):
        priorities.pow_(self.priority_exponent)
        [self.transitions.update(idx, priority) for idx, priority in zip(idxs, priorities)]  # maybe: A (each element is a 0-d view of the batch tensor)


class ReplayMemoryFixed(ReplayMemory):
    def update_priorities(self, idxs, priorities):
        priorities = np.power(priorities, self.priority_exponent)
        [self.transitions.update(idx, priority) for idx, priority in zip(idxs, priorities)]


class Agent:
    def __init__(self, batch_size=32):
        self.batch_size = batch_size
        self.online_net = nn.Linear(16, 4)
        self.optimiser = torch.optim.Adam(self.online_net.parameters(), lr=1e-3)

    def _loss(self, mem):
        idxs, states, targets = mem.sample(self.batch_size)
        loss = ((self.online_net(states) - targets) ** 2).sum(1)
        self.online_net.zero_grad()
        loss.mean().backward()
        self.optimiser.step()
        return idxs, loss

    def learn(self, mem):
        idxs, loss = self._loss(mem)
        mem.update_priorities(idxs, loss.detach())  # want: A


class AgentFixed(Agent):
    def learn(self, mem):
        idxs, loss = self._loss(mem)
        mem.update_priorities(idxs, loss.detach().cpu().numpy())


def run(agent_cls, mem_cls, steps=25):
    torch.manual_seed(0)
    np.random.seed(0)
    mem = mem_cls(capacity=256)
    for _ in range(256):
        mem.append(torch.randn(16), torch.randn(4))
    agent = agent_cls()
    for _ in range(steps):
        agent.learn(mem)
    leaves = mem.transitions.sum_tree[mem.transitions.size - 1:]
    tensors = [v for v in leaves if torch.is_tensor(v)]
    pinned = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}
    return len(tensors), sum(pinned.values())


if __name__ == "__main__":
    n_views, pinned_bytes = run(Agent, ReplayMemory)
    print(f"buggy: {n_views} tree leaves are tensor views pinning {pinned_bytes} bytes of minibatch storage")
    n_views_f, pinned_f = run(AgentFixed, ReplayMemoryFixed)
    print(f"fixed: {n_views_f} tensor leaves, {pinned_f} bytes pinned")
    assert n_views > 0 and pinned_bytes > 0 and n_views_f == 0
