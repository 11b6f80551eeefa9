# source: deepmodeling/deepmd-kit https://github.com/deepmodeling/deepmd-kit/pull/5519 — The PyTorch trainer's clip_grad_norm_ helper tested `if not torch.isfinite(total_norm)` on every training step to abort on divergence, reading the device norm back to the host each step; the fix ("avoid grad clip sync") returns the norm without a host read and accumulates the non-finite flag on device in NonFiniteGradGuard, checked only before a checkpoint is written.
import torch
import torch.nn as nn


def raise_nonfinite_gradient_norm():
    raise RuntimeError("Non-finite gradient norm; training has diverged.")


def clip_grad_norm_(parameters, max_norm, stable=True):
    params = [p for p in parameters if p.grad is not None]
    if not params:
        return torch.zeros((), dtype=torch.float64, device="cpu")
    grads = [p.grad for p in params]
    if stable:
        scale = torch.stack(torch._foreach_norm(grads, float("inf"))).max()
        scale = torch.where(scale > 0, scale, scale.new_ones(()))
        scaled = torch._foreach_norm(torch._foreach_div(grads, scale), 2.0)
        total_norm = scale.double() * torch.linalg.vector_norm(torch.stack(scaled).double())
    else:
        total_norm = torch.nn.utils.get_total_norm(grads, error_if_nonfinite=False)
    if not torch.isfinite(total_norm):  # want: D
        raise_nonfinite_gradient_norm()
    torch.nn.utils.clip_grads_with_norm_(params, max_norm, total_norm)
    return total_norm


class Trainer:
    def __init__(self, model, lr=1e-3, gradient_max_norm=1.0):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.gradient_max_norm = gradient_max_norm
        self.saved = []

    def clip(self):
        return clip_grad_norm_(self.model.parameters(), self.gradient_max_norm)

    def step(self, batch, label):
        self.optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(self.model(batch), label)
        loss.backward()
        if self.gradient_max_norm > 0.0:
            self.clip()
        self.optimizer.step()
        return loss.detach()

    def save_checkpoint(self, step_id):
        self.saved.append((step_id, {k: v.clone() for k, v in self.model.state_dict().items()}))


def clip_grad_norm_fixed(parameters, max_norm, stable=True):
    params = [p for p in parameters if p.grad is not None]
    if not params:
        return torch.zeros((), dtype=torch.float64, device="cpu")
    grads = [p.grad for p in params]
    if stable:
        scale = torch.stack(torch._foreach_norm(grads, float("inf"))).max()
        scale = torch.where(scale > 0, scale, scale.new_ones(()))
        scaled = torch._foreach_norm(torch._foreach_div(grads, scale), 2.0)
        total_norm = scale.double() * torch.linalg.vector_norm(torch.stack(scaled).double())
    else:
        total_norm = torch.nn.utils.get_total_norm(grads, error_if_nonfinite=False)
    torch.nn.utils.clip_grads_with_norm_(params, max_norm, total_norm)
    return total_norm


class NonFiniteGradGuard:
    def __init__(self):
        self._nonfinite = None

    def update(self, total_norm):
        nonfinite = ~torch.isfinite(total_norm)
        if self._nonfinite is not None:
            nonfinite |= self._nonfinite.to(nonfinite.device)
        self._nonfinite = nonfinite

    def raise_if_nonfinite(self):
        if self._nonfinite is None:
            return
        diverged = bool(self._nonfinite)
        self._nonfinite = None
        if diverged:
            raise_nonfinite_gradient_norm()


class TrainerFixed(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.grad_guard = NonFiniteGradGuard()

    def clip(self):
        total_norm = clip_grad_norm_fixed(self.model.parameters(), self.gradient_max_norm)
        self.grad_guard.update(total_norm)
        return total_norm

    def save_checkpoint(self, step_id):
        # checkpoint-interval boundary: the only place the flag is read back
        self.grad_guard.raise_if_nonfinite()
        super().save_checkpoint(step_id)


if __name__ == "__main__":
    torch.manual_seed(0)
    for cls in (Trainer, TrainerFixed):
        model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
        trainer = cls(model)
        x, y = torch.randn(32, 8), torch.randn(32, 1)
        for step_id in range(20):
            trainer.step(x, y)
            if step_id % 10 == 9:
                trainer.save_checkpoint(step_id)
        print(cls.__name__, "checkpoints:", [s for s, _ in trainer.saved])
