# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/pull/5135 — DeepSpeedEngine.backward accumulated the monitored training loss with `self.losses += loss.mean().item()` on every micro-step, forcing a device/host sync even between gradient-accumulation boundaries; the fix ("avoid item() outside gas") keeps a detached device tensor and calls .item() only when the monitor writes the event at the boundary.
import torch
import torch.nn as nn


class Monitor:
    def __init__(self, enabled=True):
        self.enabled = enabled
        self.events = []

    def write_events(self, events):
        self.events.extend(events)


class DeepSpeedEngine:
    def __init__(self, module, optimizer, gradient_accumulation_steps=4, monitor=None):
        self.module = module
        self.optimizer = optimizer
        self._gas = gradient_accumulation_steps
        self.monitor = monitor if monitor is not None else Monitor()
        self.global_rank = 0
        self.micro_steps = 0
        self.global_samples = 0
        self.summary_events = []
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
                    self.summary_events = [(
                        "Train/Samples/train_loss",
                        self.losses,
                        self.global_samples,
                    )]
                    self.monitor.write_events(self.summary_events)

        loss.backward(retain_graph=retain_graph)
        return loss

    def _reset_losses(self):
        self.losses = 0.0

    def step(self):
        if self.is_gradient_accumulation_boundary():
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
            self._reset_losses()
        self.global_samples += 1
        self.micro_steps += 1


class DeepSpeedEngineFixed(DeepSpeedEngine):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.losses = None

    def backward(self, loss, retain_graph=False, scale_wrt_gas=True):
        if self.gradient_accumulation_steps() > 1 and scale_wrt_gas:
            loss = self._scale_loss_by_gas(loss.float())

        # Log training loss
        mean_loss = loss.mean().detach()
        self.losses = mean_loss if self.losses is None else self.losses + mean_loss
        if self.monitor.enabled:
            if self.is_gradient_accumulation_boundary():
                if self.global_rank == 0:
                    self.summary_events = [(
                        "Train/Samples/train_loss",
                        self.losses.item(),
                        self.global_samples,
                    )]
                    self.monitor.write_events(self.summary_events)

        loss.backward(retain_graph=retain_graph)
        return loss

    def _reset_losses(self):
        self.losses = None


if __name__ == "__main__":
    for cls in (DeepSpeedEngine, DeepSpeedEngineFixed):
        torch.manual_seed(0)
        model = nn.Linear(8, 1)
        engine = cls(model, torch.optim.SGD(model.parameters(), lr=0.1))
        for _ in range(8):
            x, y = torch.randn(4, 8), torch.randn(4, 1)
            loss = nn.functional.mse_loss(engine.forward(x), y)
            engine.backward(loss)
            engine.step()
        print(cls.__name__, "events:", len(engine.monitor.events))
