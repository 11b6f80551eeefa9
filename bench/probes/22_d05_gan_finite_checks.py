# source: HyperGAN/HyperGAN PR #355 — the trainer's _update read `torch.isfinite(p.grad).all()` once per parameter tensor and checked each loss before backward(): ~100 blocking device->host reads per step
import torch
import torch.nn.functional as F
from torch import nn


class NonFiniteError(RuntimeError):
    pass


class GanTrainer:
    def __init__(self, generator: nn.Module, discriminator: nn.Module, prior_dim: int = 16,
                 lr: float = 2e-4, check_finite: bool = True):
        self.G, self.D = generator, discriminator
        self.opt_g = torch.optim.Adam(generator.parameters(), lr=lr, betas=(0.0, 0.99))
        self.opt_d = torch.optim.Adam(discriminator.parameters(), lr=lr, betas=(0.0, 0.99))
        self.prior_dim = prior_dim
        self.check_finite = check_finite
        self.step_count = 0
        # once, before any training: a host read here is fine
        for name, p in list(generator.named_parameters()) + list(discriminator.named_parameters()):
            if not torch.isfinite(p).all():
                raise NonFiniteError(f"initial weight {name} is not finite")

    def _check_loss(self, loss: torch.Tensor, phase: str) -> None:
        if not torch.isfinite(loss):  # want: D
            raise NonFiniteError(f"{phase} loss is not finite")

    def _check_gradients(self, module: nn.Module, phase: str) -> None:
        for name, p in module.named_parameters():
            if p.grad is None:
                continue
            if not torch.isfinite(p.grad).all():  # want: D
                raise NonFiniteError(f"{phase}: non-finite gradient in {name}")

    def _update(self, real: torch.Tensor):
        z = torch.randn(real.shape[0], self.prior_dim, device=real.device)
        fake = self.G(z)

        d_loss = F.softplus(self.D(fake.detach())).mean() + F.softplus(-self.D(real)).mean()
        if self.check_finite:
            self._check_loss(d_loss, "D")
        self.opt_d.zero_grad(set_to_none=True)
        d_loss.backward()
        if self.check_finite:
            self._check_gradients(self.D, "D")
        self.opt_d.step()

        g_loss = F.softplus(-self.D(fake)).mean()
        if self.check_finite:
            self._check_loss(g_loss, "G")
        self.opt_g.zero_grad(set_to_none=True)
        g_loss.backward()
        if self.check_finite:
            self._check_gradients(self.G, "G")
        self.opt_g.step()

        self.step_count += 1
        return d_loss.detach(), g_loss.detach()  # kept on device for the logger

    def fit(self, batches, epochs: int = 1):
        last = None
        for _ in range(epochs):
            for real in batches:
                last = self._update(real)
            # once per epoch, outside the step: fine
            print(f"epoch done, d={last[0].item():.3f} g={last[1].item():.3f}")
        return last


if __name__ == "__main__":
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
    D = nn.Sequential(nn.Linear(8, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    trainer = GanTrainer(G, D)
    trainer.fit([torch.randn(4, 8) for _ in range(3)])
