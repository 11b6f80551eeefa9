# source: huggingface/accelerate https://github.com/huggingface/accelerate/pull/1720 — AcceleratedOptimizer.step called GradScaler.get_scale() before and after scaler.step()/update() on every optimizer step (each get_scale() reads the device scale tensor back with .item()) just to detect a skipped step; the fix patches the wrapped optimizer's step to set a flag, so no scale is read back.
import torch
from torch.amp import GradScaler


class GradientState:
    def __init__(self):
        self.sync_gradients = True


class AcceleratedOptimizer(torch.optim.Optimizer):
    def __init__(self, optimizer, scaler=None):
        self.optimizer = optimizer
        self.scaler = scaler
        self.gradient_state = GradientState()
        self._is_overflow = False

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    @property
    def state(self):
        return self.optimizer.state

    def zero_grad(self, set_to_none=None):
        self.optimizer.zero_grad(set_to_none=True if set_to_none is None else set_to_none)

    def step(self, closure=None):
        if self.gradient_state.sync_gradients:
            if self.scaler is not None:
                scale_before = self.scaler.get_scale()  # want: D
                self.scaler.step(self.optimizer, closure)
                self.scaler.update()
                scale_after = self.scaler.get_scale()  # want: D
                # If we reduced the loss scale, it means the optimizer step was skipped because of gradient overflow.
                self._is_overflow = scale_after < scale_before
            else:
                self.optimizer.step(closure)

    @property
    def step_was_skipped(self):
        return self._is_overflow


def patch_optimizer_step(accelerated_optimizer, method):
    def patched_step(*args, **kwargs):
        accelerated_optimizer._accelerate_step_called = True
        return method(*args, **kwargs)

    return patched_step


class AcceleratedOptimizerFixed(AcceleratedOptimizer):
    def __init__(self, optimizer, scaler=None):
        super().__init__(optimizer, scaler)
        self._accelerate_step_called = False
        self._optimizer_original_step_method = self.optimizer.step
        self._optimizer_patched_step_method = patch_optimizer_step(self, self.optimizer.step)

    def step(self, closure=None):
        if self.gradient_state.sync_gradients:
            if self.scaler is not None:
                self.optimizer.step = self._optimizer_patched_step_method
                self.scaler.step(self.optimizer, closure)
                self.scaler.update()
                if not self._accelerate_step_called:
                    # If the optimizer step was skipped, gradient overflow was detected.
                    self._is_overflow = True
                else:
                    self._is_overflow = False
                # Reset the step method to the original one
                self.optimizer.step = self._optimizer_original_step_method
                # Reset the indicator
                self._accelerate_step_called = False
            else:
                self.optimizer.step(closure)


def train(opt_cls, inject_inf_at):
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    scaler = GradScaler("cpu", init_scale=2.0**8)
    opt = opt_cls(torch.optim.SGD(model.parameters(), lr=0.1), scaler)
    skipped = []
    for step in range(4):
        x, y = torch.randn(16, 8), torch.randn(16, 1)
        loss = torch.nn.functional.mse_loss(model(x), y)
        if step == inject_inf_at:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        opt.step()
        opt.zero_grad()
        skipped.append(opt.step_was_skipped)
    return skipped, model.weight.detach().clone()


if __name__ == "__main__":
    s1, w1 = train(AcceleratedOptimizer, inject_inf_at=2)
    s2, w2 = train(AcceleratedOptimizerFixed, inject_inf_at=2)
    print("skipped (get_scale)", s1, "skipped (patched step)", s2)
    assert s1 == s2 == [False, False, True, False]
    assert torch.allclose(w1, w2)
