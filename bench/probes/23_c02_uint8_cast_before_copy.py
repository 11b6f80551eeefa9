# source: Kaixhin/Rainbow issue #48 (see also pytorch/pytorch #58812, habitat-lab PR #297) — the replay memory turned uint8 frames into float32 with one `.to(dtype=torch.float32, device=self.device)`, which casts on the host and ships 4x the bytes; `.to(device).to(torch.float32)` moves the uint8 first.
import numpy as np
import torch


class ReplayMemory:
    def __init__(self, capacity: int, history: int, device):
        self.device = device
        self.capacity, self.history = capacity, history
        self.states = torch.zeros(capacity, 84, 84, dtype=torch.uint8)
        self.rewards = np.zeros(capacity, dtype=np.float64)
        self.frames = []
        self.index = 0

    def append(self, state: torch.Tensor, reward: float):
        frame = state[-1].mul(255).to(dtype=torch.uint8, device=torch.device("cpu"))  # narrowing, then a 1-byte copy: fine
        self.states[self.index] = frame
        self.frames.append(frame)
        self.rewards[self.index] = reward
        self.index = (self.index + 1) % self.capacity

    def sample(self, batch_size: int):
        idxs = torch.randint(self.history, self.capacity, (batch_size,))
        window = idxs[:, None] - torch.arange(self.history - 1, -1, -1)
        states = self.states[window].to(dtype=torch.float32, device=self.device).div_(255)  # want: C
        stacked = torch.stack(self.frames[-self.history:]).to(dtype=torch.float32, device=self.device)  # maybe: C (frames are uint8 only if every append stored uint8)
        rewards = torch.tensor(self.rewards[idxs.numpy()], dtype=torch.float32, device=self.device)  # float64 -> float32 narrows: cast first is right
        return states, stacked, rewards

    def sample_fixed(self, batch_size: int):
        idxs = torch.randint(self.history, self.capacity, (batch_size,))
        window = idxs[:, None] - torch.arange(self.history - 1, -1, -1)
        states = self.states[window].to(device=self.device).to(dtype=torch.float32).div_(255)
        return states


if __name__ == "__main__":
    torch.manual_seed(0)
    mem = ReplayMemory(16, 4, "cpu")
    for _ in range(16):
        mem.append(torch.rand(4, 84, 84), 1.0)
    s, st, r = mem.sample(2)
    assert s.dtype == torch.float32 and st.shape == (4, 84, 84) and r.dtype == torch.float32
    assert mem.states.element_size() * 4 == s.element_size()  # what crosses the bus is 4x larger when cast first
    print("ok: uint8 frames are widened before the device copy")
