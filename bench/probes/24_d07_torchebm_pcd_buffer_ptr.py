# source: soran-ghaderi/torchebm issue #239 ("GPU-first hot paths: remove per-step host syncs") — the persistent-CD replay buffer read its device-resident write pointer with `int(self.buffer_ptr.item())` on every training step to slice the buffer, and BaseTrainer called .item() three times per step (loss, positive and negative energy); fix: a host-side int pointer, device tensors until the logging boundary
from typing import Optional, Tuple

import torch
from torch import nn


class EnergyModel(nn.Module):
    def __init__(self, dim=2, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


class LangevinSampler:
    def __init__(self, model, step_size=0.01, noise_scale=0.005):
        self.model, self.step_size, self.noise_scale = model, step_size, noise_scale

    def sample(self, x, n_steps):
        x = x.detach()
        for _ in range(n_steps):
            x.requires_grad_(True)
            grad = torch.autograd.grad(self.model(x).sum(), x)[0]
            x = (x - self.step_size * grad + self.noise_scale * torch.randn_like(x)).detach()
        return x


class ContrastiveDivergence(nn.Module):
    def __init__(self, model, sampler, k_steps=5, persistent=True, buffer_size=64, device=None):
        super().__init__()
        self.model, self.sampler = model, sampler
        self.k_steps, self.persistent, self.buffer_size = k_steps, persistent, buffer_size
        self.device = torch.device(device or "cpu")
        self.register_buffer("replay_buffer", None)
        self.register_buffer("buffer_ptr", torch.tensor(0, dtype=torch.long, device=self.device))
        self.buffer_initialized = False

    def initialize_buffer(self, data_shape_no_batch: Tuple[int, ...], init_noise_scale: float = 0.01):
        self.replay_buffer = torch.randn((self.buffer_size,) + data_shape_no_batch, device=self.device) * init_noise_scale
        self.buffer_ptr.zero_()
        self.buffer_initialized = True

    def get_start_points(self, x):
        batch_size = x.shape[0]
        if not self.buffer_initialized:
            self.initialize_buffer(tuple(x.shape[1:]))
        stride = self.buffer_size // batch_size
        base = torch.arange(0, batch_size, device=self.device) * stride
        offset = torch.randint(0, stride, (batch_size,), device=self.device)
        return self.replay_buffer[(base + offset) % self.buffer_size].detach().clone()

    def update_buffer(self, samples: torch.Tensor) -> None:
        if not self.persistent or not self.buffer_initialized:
            return
        samples = samples.to(device=self.device).detach()
        batch_size = samples.shape[0]
        # FIFO strategy
        ptr = int(self.buffer_ptr.item())  # want: D
        if batch_size >= self.buffer_size:
            self.replay_buffer[:] = samples[-self.buffer_size:]
            self.buffer_ptr[...] = 0
        else:
            end_ptr = (ptr + batch_size) % self.buffer_size
            if end_ptr > ptr:
                self.replay_buffer[ptr:end_ptr] = samples
            else:
                first_part = self.buffer_size - ptr
                self.replay_buffer[ptr:] = samples[:first_part]
                self.replay_buffer[:end_ptr] = samples[first_part:]
            self.buffer_ptr[...] = end_ptr

    def forward(self, x) -> Tuple[torch.Tensor, torch.Tensor]:
        start = self.get_start_points(x) if self.persistent else x.detach().clone()
        pred_x = self.sampler.sample(start, n_steps=self.k_steps)
        if self.persistent:
            self.update_buffer(pred_x)
        pos, neg = self.model(x), self.model(pred_x)
        return pos.mean() - neg.mean(), pred_x


class ContrastiveDivergenceHostPtr(ContrastiveDivergence):
    """The fix: the write pointer is plain python state, advanced arithmetically."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._ptr = 0

    def update_buffer(self, samples):
        samples = samples.detach()
        n = samples.shape[0]
        idx = (torch.arange(n, device=self.device) + self._ptr) % self.buffer_size
        self.replay_buffer[idx] = samples
        self._ptr = (self._ptr + n) % self.buffer_size


class BaseTrainer:
    def __init__(self, model, loss_fn, optimizer, log_every: int = 50):
        self.model, self.loss_fn, self.optimizer, self.log_every = model, loss_fn, optimizer, log_every
        self.history = []

    def train_step(self, x):
        self.optimizer.zero_grad(set_to_none=True)
        loss, neg = self.loss_fn(x)
        loss.backward()
        self.optimizer.step()
        with torch.no_grad():
            pos_energy, neg_energy = self.model(x).mean(), self.model(neg).mean()
        return {
            "loss": loss.item(),  # want: D
            "pos_energy": pos_energy.item(),  # want: D
            "neg_energy": neg_energy.item(),  # want: D
        }

    def fit(self, loader, epochs=1):
        for epoch in range(epochs):
            for step, x in enumerate(loader):
                metrics = self.train_step(x)
                if step % self.log_every == 0:
                    self.history.append(metrics)

    def train_step_deferred(self, x):
        self.optimizer.zero_grad(set_to_none=True)
        loss, _ = self.loss_fn(x)
        loss.backward()
        self.optimizer.step()
        return loss.detach()  # stays on device

    def fit_deferred(self, loader):
        for step, x in enumerate(loader):
            loss = self.train_step_deferred(x)
            if step % self.log_every == 0:
                self.history.append({"loss": loss.item()})  # every log_every steps


if __name__ == "__main__":
    torch.manual_seed(0)
    data = [torch.randn(16, 2) * 0.5 + 1.0 for _ in range(6)]
    for cls in (ContrastiveDivergence, ContrastiveDivergenceHostPtr):
        model = EnergyModel()
        cd = cls(model, LangevinSampler(model), k_steps=3, buffer_size=40)
        trainer = BaseTrainer(model, cd, torch.optim.Adam(model.parameters(), lr=1e-3), log_every=2)
        trainer.fit(data)
        trainer.fit_deferred(data)
        assert cd.replay_buffer.shape == (40, 2)
    print("ok:", len(trainer.history), trainer.history[-1])
