# source: soran-ghaderi/torchebm https://github.com/soran-ghaderi/torchebm/issues/239 — BaseTrainer synced .item() three times per training step (loss, positive energy, negative energy) and the persistent-CD replay buffer read its device pointer with int(self.buffer_ptr.item()) on every update; the fix returns detached device tensors and converts only at the logging boundary, and keeps a host-side int copy of the buffer pointer.
import torch
import torch.nn as nn


class ContrastiveDivergence(nn.Module):
    def __init__(self, model, buffer_size=64, data_dim=4, k_steps=3, step_size=0.05):
        super().__init__()
        self.model = model
        self.buffer_size = buffer_size
        self.k_steps = k_steps
        self.step_size = step_size
        self.register_buffer("replay_buffer", torch.randn(buffer_size, data_dim))
        self.register_buffer("buffer_ptr", torch.zeros((), dtype=torch.long))

    def sample(self, start):
        x = start.clone().requires_grad_(True)
        for _ in range(self.k_steps):
            energy = self.model(x).sum()
            (grad,) = torch.autograd.grad(energy, x)
            x = (x - self.step_size * grad + 0.01 * torch.randn_like(x)).detach().requires_grad_(True)
        return x.detach()

    def update_buffer(self, samples):
        batch_size = samples.shape[0]
        # FIFO strategy
        ptr = int(self.buffer_ptr.item())  # want: D
        end_ptr = (ptr + batch_size) % self.buffer_size
        if end_ptr > ptr:
            self.replay_buffer[ptr:end_ptr] = samples
        else:
            first_part = self.buffer_size - ptr
            self.replay_buffer[ptr:] = samples[:first_part]
            self.replay_buffer[:end_ptr] = samples[first_part:]
        self.buffer_ptr[...] = end_ptr

    def forward(self, x):
        idx = torch.randint(0, self.buffer_size, (x.shape[0],), device=x.device)
        pred_x = self.sample(self.replay_buffer[idx])
        self.update_buffer(pred_x)
        pos_energy = self.model(x).mean()
        neg_energy = self.model(pred_x).mean()
        return pos_energy - neg_energy, pos_energy, neg_energy


class ContrastiveDivergenceFixed(ContrastiveDivergence):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._buffer_ptr_int = 0

    def update_buffer(self, samples):
        batch_size = samples.shape[0]
        # FIFO strategy - use cached Python int to avoid GPU sync every step
        ptr = self._buffer_ptr_int
        end_ptr = (ptr + batch_size) % self.buffer_size
        if end_ptr > ptr:
            self.replay_buffer[ptr:end_ptr] = samples
        else:
            first_part = self.buffer_size - ptr
            self.replay_buffer[ptr:] = samples[:first_part]
            self.replay_buffer[:end_ptr] = samples[first_part:]
        self._buffer_ptr_int = end_ptr
        self.buffer_ptr.fill_(end_ptr)


class BaseTrainer:
    def __init__(self, loss_fn, optimizer):
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.history = []

    def train_step(self, batch):
        self.optimizer.zero_grad()
        loss, pos_energy, neg_energy = self.loss_fn(batch)
        loss.backward()
        self.optimizer.step()
        return {
            "loss": loss.item(),  # want: D
            "pos_energy": pos_energy.item(),  # want: D
            "neg_energy": neg_energy.item(),  # want: D
        }

    def train_epoch(self, loader):
        for batch in loader:
            self.history.append(self.train_step(batch))
        return self.history[-1]


class BaseTrainerFixed(BaseTrainer):
    def train_step(self, batch):
        self.optimizer.zero_grad()
        loss, pos_energy, neg_energy = self.loss_fn(batch)
        loss.backward()
        self.optimizer.step()
        return {"loss": loss.detach(), "pos_energy": pos_energy.detach(), "neg_energy": neg_energy.detach()}

    def train_epoch(self, loader):
        steps = [self.train_step(batch) for batch in loader]
        keys = list(steps[0])
        # logging boundary: one stacked device-to-host read per epoch
        values = torch.stack([torch.stack([s[k] for k in keys]) for s in steps]).tolist()
        self.history.extend(dict(zip(keys, row)) for row in values)
        return self.history[-1]


def run(loss_cls, trainer_cls):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.SiLU(), nn.Linear(16, 1))
    loss_fn = loss_cls(model, buffer_size=24, data_dim=4)
    trainer = trainer_cls(loss_fn, torch.optim.Adam(model.parameters(), lr=1e-3))
    loader = [torch.randn(10, 4) for _ in range(5)]
    return trainer.train_epoch(loader), int(loss_fn.buffer_ptr)


if __name__ == "__main__":
    a, pa = run(ContrastiveDivergence, BaseTrainer)
    b, pb = run(ContrastiveDivergenceFixed, BaseTrainerFixed)
    print("buggy", a, pa)
    print("fixed", b, pb)
    assert pa == pb and all(abs(a[k] - b[k]) < 1e-5 for k in a)
