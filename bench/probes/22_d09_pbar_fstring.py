# source: openvdb/fvdb-reality-capture PR #144 (same shape as meta-pytorch/torchtune PR #522) — the splat-fitting loop read the loss for the progress bar on every step and again for the logger; deferring the read to the logging block removed a stream sync per step (+5-10% throughput)
import math

import torch
import torch.nn.functional as F
from torch import nn


class ProgressBar:
    def __init__(self, total: int):
        self.total, self.n, self.desc, self.postfix = total, 0, "", {}

    def set_description(self, desc: str):
        self.desc = desc

    def set_postfix(self, **kw):
        self.postfix = {k: str(v) for k, v in kw.items()}

    def update(self, n: int = 1):
        self.n += n


class SplatModel(nn.Module):
    def __init__(self, n: int = 64, res: int = 8):
        super().__init__()
        self.means = nn.Parameter(torch.randn(n, 2))
        self.colors = nn.Parameter(torch.rand(n, 3))
        self.log_scales = nn.Parameter(torch.zeros(n))
        ys, xs = torch.meshgrid(torch.linspace(-1, 1, res), torch.linspace(-1, 1, res), indexing="ij")
        self.register_buffer("grid", torch.stack([xs, ys], -1).view(-1, 2), persistent=False)
        self.res = res

    def forward(self, cam_shift: torch.Tensor) -> torch.Tensor:
        d2 = torch.cdist(self.grid, self.means + cam_shift).pow(2)
        w = torch.exp(-d2 / (2 * self.log_scales.exp().pow(2)))
        return (w @ self.colors / (w.sum(-1, keepdim=True) + 1e-6)).view(self.res, self.res, 3)


def fit(model, views, num_steps: int, log_every: int = 100, ssim_lambda: float = 0.2, metrics_log=None):
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    pbar = ProgressBar(num_steps)
    metrics_log = [] if metrics_log is None else metrics_log
    for step in range(num_steps):
        cam, image = views[step % len(views)]
        rendered = model(cam)
        l1 = F.l1_loss(rendered, image)
        mse = F.mse_loss(rendered, image)
        loss = (1.0 - ssim_lambda) * l1 + ssim_lambda * mse
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

        psnr = -10.0 * torch.log10(mse.detach())
        pbar.set_description(f"loss={loss:.3f} l1={l1:.4f}")  # want: D
        pbar.set_postfix(psnr=psnr)  # maybe: D (the bar formats the device tensor with str(), a read, when it renders)
        pbar.update()

        if step % log_every == 0:
            metrics_log.append({"step": step, "loss": loss.item(), "psnr": psnr.item()})  # every log_every steps: the fix

        num_splats = model.means.shape[0]  # a shape: host value
        lr_now = opt.param_groups[0]["lr"] * 0.5 * (1 + math.cos(math.pi * step / num_steps))
        for g in opt.param_groups:
            g["lr"] = lr_now
        del num_splats

    print(f"finished {num_steps} steps, final loss {loss.item():.4f}")  # once, after the loop
    return metrics_log


if __name__ == "__main__":
    torch.manual_seed(0)
    m = SplatModel()
    views = [(torch.randn(2) * 0.1, torch.rand(8, 8, 3)) for _ in range(3)]
    print(len(fit(m, views, num_steps=6, log_every=3)))
