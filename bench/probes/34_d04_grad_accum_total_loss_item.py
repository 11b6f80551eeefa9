# source: hao-ai-lab/FastVideo https://github.com/hao-ai-lab/FastVideo/pull/1217 — _transformer_forward_and_compute_loss did `training_batch.total_loss += avg_loss.item()` inside the gradient-accumulation loop, forcing a device sync on every micro-batch; the fix accumulates the loss on the GPU and reads it back only where it is logged.
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TrainingBatch:
    latents: torch.Tensor = None
    noise: torch.Tensor = None
    noisy_model_input: torch.Tensor = None
    timesteps: torch.Tensor = None
    total_loss: object = 0.0
    grad_norm: float = 0.0
    extra: dict = field(default_factory=dict)


class TrainingPipeline:
    def __init__(self, transformer, gradient_accumulation_steps=4, log_steps=1):
        self.transformer = transformer
        self.optimizer = torch.optim.AdamW(transformer.parameters(), lr=1e-4)
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.log_steps = log_steps
        self.logged = []

    def _get_next_batch(self, training_batch):
        training_batch.latents = torch.randn(2, 8)
        training_batch.noise = torch.randn_like(training_batch.latents)
        training_batch.timesteps = torch.rand(2, 1)
        return training_batch

    def _prepare_dit_inputs(self, training_batch):
        t = training_batch.timesteps
        training_batch.noisy_model_input = (1 - t) * training_batch.latents + t * training_batch.noise
        return training_batch

    def _transformer_forward_and_compute_loss(self, training_batch):
        model_pred = self.transformer(training_batch.noisy_model_input)
        target = training_batch.noise - training_batch.latents
        loss = F.mse_loss(model_pred.float(), target.float())
        loss = loss / self.gradient_accumulation_steps
        loss.backward()
        avg_loss = loss.detach().clone()
        training_batch.total_loss += avg_loss.item()  # want: D
        return training_batch

    def train_one_step(self, training_batch):
        self.transformer.train()
        self.optimizer.zero_grad()
        training_batch.total_loss = 0.0
        for _ in range(self.gradient_accumulation_steps):
            training_batch = self._get_next_batch(training_batch)
            training_batch = self._prepare_dit_inputs(training_batch)
            training_batch = self._transformer_forward_and_compute_loss(training_batch)
        self.optimizer.step()
        return training_batch

    def _log(self, step, training_batch):
        self.logged.append((step, float(training_batch.total_loss)))

    def train(self, max_train_steps):
        training_batch = TrainingBatch()
        for step in range(1, max_train_steps + 1):
            training_batch = self.train_one_step(training_batch)
            if step % self.log_steps == 0:
                self._log(step, training_batch)
        return self.logged


class TrainingPipelineFixed(TrainingPipeline):
    def _transformer_forward_and_compute_loss(self, training_batch):
        model_pred = self.transformer(training_batch.noisy_model_input)
        target = training_batch.noise - training_batch.latents
        loss = F.mse_loss(model_pred.float(), target.float())
        loss = loss / self.gradient_accumulation_steps
        loss.backward()
        # keep the running loss on the device; it is read back in _log
        training_batch.total_loss = training_batch.total_loss + loss.detach()
        return training_batch

    def train_one_step(self, training_batch):
        self.transformer.train()
        self.optimizer.zero_grad()
        training_batch.total_loss = torch.zeros((), device=next(self.transformer.parameters()).device)
        for _ in range(self.gradient_accumulation_steps):
            training_batch = self._get_next_batch(training_batch)
            training_batch = self._prepare_dit_inputs(training_batch)
            training_batch = self._transformer_forward_and_compute_loss(training_batch)
        self.optimizer.step()
        return training_batch


if __name__ == "__main__":
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 8))
    net2 = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 8))
    net2.load_state_dict(net.state_dict())
    torch.manual_seed(1)
    a = TrainingPipeline(net, log_steps=5).train(10)
    torch.manual_seed(1)
    b = TrainingPipelineFixed(net2, log_steps=5).train(10)
    print("logged (buggy):", [(s, round(v, 5)) for s, v in a])
    print("logged (fixed):", [(s, round(v, 5)) for s, v in b])
