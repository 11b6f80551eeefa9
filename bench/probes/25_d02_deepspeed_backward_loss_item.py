# source: deepspeedai/DeepSpeed PR #5135 ("tensorboard logging: avoid item() outside gas to improve performance") — DeepSpeedEngine.backward() did `self.losses += loss.mean().item()` on every micro-step so the monitor could log Train/Samples/train_loss at the gradient-accumulation boundary; the read blocks the host on the device once per micro-batch; the fix accumulates a detached device tensor and calls .item() only at the boundary, on rank 0, when the monitor is enabled
import torch
from torch import nn


class Monitor:
    def __init__(self, enabled=True):
        self.enabled = enabled
        self.events = []

    def write_events(self, events):
        self.events.extend(events)


class DeepSpeedEngine(nn.Module):
    def __init__(self, model, optimizer, gradient_accumulation_steps=4, micro_batch_size=8, monitor=None, global_rank=0):
        super().__init__()
        self.module = model
        self.optimizer = optimizer
        self._gas = gradient_accumulation_steps
        self._micro_bs = micro_batch_size
        self.monitor = monitor or Monitor()
        self.global_rank = global_rank
        self.micro_steps = 0
        self.global_steps = 0
        self.global_samples = 0
        self.losses = 0.0

    def gradient_accumulation_steps(self):
        return self._gas

    def is_gradient_accumulation_boundary(self):
        return (self.micro_steps + 1) % self.gradient_accumulation_steps() == 0

    def _scale_loss_by_gas(self, prescaled_loss):
        return prescaled_loss / self.gradient_accumulation_steps()

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    def backward(self, loss, retain_graph=False, scale_wrt_gas=True):
        if self.gradient_accumulation_steps() > 1 and scale_wrt_gas:
            loss = self._scale_loss_by_gas(loss.float())

        # Log training loss
        self.losses += loss.mean().item()  # want: D
        if self.monitor.enabled:
            if self.is_gradient_accumulation_boundary():
                if self.global_rank == 0:
                    self.summary_events = [("Train/Samples/train_loss", self.losses, self.global_samples)]
                    self.monitor.write_events(self.summary_events)

        loss.backward(retain_graph=retain_graph)
        return loss

    def step(self):
        if self.is_gradient_accumulation_boundary():
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
            self.global_steps += 1
            self.global_samples += self._micro_bs * self.gradient_accumulation_steps()
            self.losses = 0.0
        self.micro_steps += 1


class DeepSpeedEngineFixed(DeepSpeedEngine):
    """After the PR: accumulate on the device, read once per optimizer step."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.losses = None

    def backward(self, loss, retain_graph=False, scale_wrt_gas=True):
        if self.gradient_accumulation_steps() > 1 and scale_wrt_gas:
            loss = self._scale_loss_by_gas(loss.float())

        mean_loss = loss.mean().detach()
        self.losses = mean_loss if self.losses is None else self.losses + mean_loss
        if self.monitor.enabled:
            if self.is_gradient_accumulation_boundary():
                if self.global_rank == 0:
                    self.summary_events = [("Train/Samples/train_loss", self.losses.item(), self.global_samples)]  # once per GAS boundary
                    self.monitor.write_events(self.summary_events)

        loss.backward(retain_graph=retain_graph)
        return loss

    def step(self):
        boundary = self.is_gradient_accumulation_boundary()
        super().step()
        if boundary:
            self.losses = None


def train(engine, batches):
    for x, y in batches:
        loss = nn.functional.cross_entropy(engine(x), y)
        engine.backward(loss)
        engine.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    data = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(8)]
    logs = []
    for cls in (DeepSpeedEngine, DeepSpeedEngineFixed):
        torch.manual_seed(1)
        model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
        engine = cls(model, torch.optim.SGD(model.parameters(), lr=0.1), gradient_accumulation_steps=4)
        train(engine, data)
        logs.append([v for _, v, _ in engine.monitor.events])
    assert len(logs[0]) == len(logs[1]) == 2
    assert all(abs(a - b) < 1e-5 for a, b in zip(*logs))
    print("ok", [round(v, 4) for v in logs[1]])
