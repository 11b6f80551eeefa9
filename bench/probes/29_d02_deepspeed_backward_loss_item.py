# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/pull/5135 — DeepSpeedEngine.backward logged the training loss with `self.losses += loss.mean().item()` on every micro-step, a device/host sync even when no monitor was enabled; the fix accumulates a detached device tensor and calls .item() only at the gradient-accumulation boundary when the monitor writes an event.
import torch
import torch.nn as nn


class Monitor:
    def __init__(self, enabled):
        self.enabled = enabled
        self.events = []

    def write_events(self, events):
        self.events.extend(events)


class DeepSpeedEngine(nn.Module):
    def __init__(self, module, optimizer, gradient_accumulation_steps=4, monitor_enabled=False):
        super().__init__()
        self.module = module
        self.optimizer = optimizer
        self._gas = gradient_accumulation_steps
        self.monitor = Monitor(monitor_enabled)
        self.global_rank = 0
        self.global_samples = 0
        self.micro_steps = 0
        self.scale_wrt_gas = None
        self.losses = 0.0

    def gradient_accumulation_steps(self):
        return self._gas

    def is_gradient_accumulation_boundary(self):
        return (self.micro_steps + 1) % self.gradient_accumulation_steps() == 0

    def _scale_loss_by_gas(self, prescaled_loss):
        return prescaled_loss / self.gradient_accumulation_steps()

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)

    def backward(self, loss, allreduce_gradients=True, release_loss=False, retain_graph=False, scale_wrt_gas=True):
        if self.scale_wrt_gas is not None:
            scale_wrt_gas = self.scale_wrt_gas

        # scale loss w.r.t. gradient accumulation if needed
        if self.gradient_accumulation_steps() > 1 and scale_wrt_gas:
            loss = self._scale_loss_by_gas(loss.float())

        # Log training loss
        self.losses += loss.mean().item()  # want: D
        if self.monitor.enabled:
            if self.is_gradient_accumulation_boundary():
                if self.global_rank == 0:
                    self.summary_events = [(
                        f"Train/Samples/train_loss",
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
            self.optimizer.zero_grad()
            self._reset_losses()
        self.global_samples += 1
        self.micro_steps += 1


class DeepSpeedEngineFixed(DeepSpeedEngine):
    def backward(self, loss, allreduce_gradients=True, release_loss=False, retain_graph=False, scale_wrt_gas=True):
        if self.scale_wrt_gas is not None:
            scale_wrt_gas = self.scale_wrt_gas

        if self.gradient_accumulation_steps() > 1 and scale_wrt_gas:
            loss = self._scale_loss_by_gas(loss.float())

        # Log training loss
        mean_loss = loss.mean().detach()
        self.losses = mean_loss if self.losses is None else self.losses + mean_loss
        if self.monitor.enabled:
            if self.is_gradient_accumulation_boundary():
                if self.global_rank == 0:
                    self.summary_events = [(
                        f"Train/Samples/train_loss",
                        self.losses.item(),
                        self.global_samples,
                    )]
                    self.monitor.write_events(self.summary_events)

        loss.backward(retain_graph=retain_graph)
        return loss

    def _reset_losses(self):
        self.losses = None


def train(engine_cls, monitor_enabled):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    engine = engine_cls(model, opt, gradient_accumulation_steps=4, monitor_enabled=monitor_enabled)
    if engine_cls is DeepSpeedEngineFixed:
        engine.losses = None
    for _ in range(16):
        x, y = torch.randn(8, 16), torch.randn(8, 1)
        loss = nn.functional.mse_loss(engine(x), y)
        engine.backward(loss)
        engine.step()
    return engine.monitor.events


if __name__ == "__main__":
    a = train(DeepSpeedEngine, True)
    b = train(DeepSpeedEngineFixed, True)
    for (_, la, _), (_, lb, _) in zip(a, b):
        assert abs(la - lb) < 1e-5
    print("logged losses:", [round(e[1], 4) for e in b])
    train(DeepSpeedEngine, False)  # still syncs every micro-step
    train(DeepSpeedEngineFixed, False)  # no host read at all
