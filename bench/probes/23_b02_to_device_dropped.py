# source: huggingface/accelerate issue #2251 — a guided-diffusion training step calls `t.to(batch.device)` / `weights.to(batch.device)` as statements; Tensor.to is not in-place (unlike Module.to), so the timesteps stay on the CPU.
import numpy as np
import torch
from torch import nn


class UniformSampler:
    def __init__(self, num_timesteps):
        self._weights = np.ones([num_timesteps])

    def sample(self, batch_size):
        p = self._weights / np.sum(self._weights)
        indices_np = np.random.choice(len(p), size=(batch_size,), p=p)
        indices = torch.from_numpy(indices_np).long()
        weights = torch.from_numpy(1 / (len(p) * p[indices_np])).float()
        return indices, weights


class TrainLoop:
    def __init__(self, model: nn.Module, ema: nn.Module, device):
        self.device = device
        self.model = model
        self.model.to(device)  # Module.to moves the parameters in place: fine
        self.ema = ema.to(device)
        self.schedule_sampler = UniformSampler(1000)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4)

    def run_step(self, batch: torch.Tensor):
        batch = batch.to(self.device)
        t, weights = self.schedule_sampler.sample(batch.shape[0])
        t.to(batch.device)  # want: B
        weights.to(batch.device)  # want: B
        self.opt.zero_grad(set_to_none=True)
        noise = torch.randn_like(batch)
        x_t = batch + noise * (t.float() / 1000).view(-1, *([1] * (batch.dim() - 1)))
        loss = ((self.model(x_t) - noise) ** 2).mean(dim=list(range(1, batch.dim())))
        (loss * weights).mean().backward()
        self.opt.step()
        return t, weights

    def run_step_fixed(self, batch: torch.Tensor):
        batch = batch.to(self.device)
        t, weights = self.schedule_sampler.sample(batch.shape[0])
        t = t.to(batch.device)
        weights = weights.to(batch.device, non_blocking=True)
        t.requires_grad_(False)  # in-place flag setter: fine
        return t, weights


if __name__ == "__main__":
    torch.manual_seed(0)
    np.random.seed(0)
    loop = TrainLoop(nn.Linear(4, 4), nn.Linear(4, 4), "cpu")
    loop.run_step(torch.randn(3, 4))
    t, _ = UniformSampler(10).sample(3)
    t.to(torch.float64)  # want: B
    assert t.dtype == torch.int64  # same kind of statement, observable on a CPU-only build: the copy was dropped
    print("ok: Tensor.to(...) as a statement leaves the tensor unchanged")
