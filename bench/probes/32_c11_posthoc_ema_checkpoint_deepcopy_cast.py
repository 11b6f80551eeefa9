# source: lucidrains/ema-pytorch https://github.com/lucidrains/ema-pytorch/issues/35 — PostHocEMA.checkpoint built each saved package with `deepcopy(ema_model).to(self.checkpoint_dtype).state_dict()`, cloning every EMA model on its device and then casting that clone again (GPU memory kept growing across checkpoints); the fix (0.7.7) takes the live state_dict and converts each tensor once with `v.to(device='cpu', dtype=checkpoint_dtype, copy=True)`.
import tempfile
from copy import deepcopy
from pathlib import Path

import torch
import torch.nn as nn


class KarrasEMA(nn.Module):
    def __init__(self, model, sigma_rel=0.05):
        super().__init__()
        self.sigma_rel = sigma_rel
        self.ema_model = deepcopy(model)
        self.ema_model.requires_grad_(False)

    @torch.no_grad()
    def update(self, model, beta):
        for ema_p, p in zip(self.ema_model.parameters(), model.parameters()):
            ema_p.lerp_(p.detach(), 1.0 - beta)


class PostHocEMA(nn.Module):
    def __init__(self, model, sigma_rels=(0.05, 0.28), checkpoint_every_num_steps=10,
                 checkpoint_folder="./post-hoc-ema-checkpoints", checkpoint_dtype=torch.float16):
        super().__init__()
        self.ema_models = nn.ModuleList([KarrasEMA(model, sigma_rel=s) for s in sigma_rels])
        self.checkpoint_folder = Path(checkpoint_folder)
        self.checkpoint_folder.mkdir(exist_ok=True, parents=True)
        self.checkpoint_every_num_steps = checkpoint_every_num_steps
        self.checkpoint_dtype = checkpoint_dtype
        self.step = 0

    def update(self, model):
        self.step += 1
        for ema_model in self.ema_models:
            ema_model.update(model, beta=1.0 - ema_model.sigma_rel)
        if self.step % self.checkpoint_every_num_steps == 0:
            self.checkpoint()

    def checkpoint(self):
        step = self.step
        for ind, ema_model in enumerate(self.ema_models):
            filename = f"{ind}.{step}.pt"
            path = self.checkpoint_folder / filename

            pkg = deepcopy(ema_model).to(self.checkpoint_dtype).state_dict()  # want: C
            torch.save(pkg, str(path))


class PostHocEMAFixed(PostHocEMA):
    def checkpoint(self):
        step = self.step
        for ind, ema_model in enumerate(self.ema_models):
            filename = f"{ind}.{step}.pt"
            path = self.checkpoint_folder / filename

            pkg = {
                k: v.to(device="cpu", dtype=self.checkpoint_dtype, copy=True)
                for k, v in ema_model.state_dict().items()
            }
            torch.save(pkg, str(path))


if __name__ == "__main__":
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 128))
    with tempfile.TemporaryDirectory() as tmp:
        buggy = PostHocEMA(net, checkpoint_folder=Path(tmp) / "buggy")
        fixed = PostHocEMAFixed(net, checkpoint_folder=Path(tmp) / "fixed")
        for _ in range(10):
            with torch.no_grad():
                for p in net.parameters():
                    p.add_(torch.randn_like(p) * 0.01)
            buggy.update(net)
            fixed.update(net)
        for ind in range(2):
            a = torch.load(Path(tmp) / "buggy" / f"{ind}.10.pt")
            b = torch.load(Path(tmp) / "fixed" / f"{ind}.10.pt")
            assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
            assert all(v.dtype == torch.float16 for v in b.values())
        n_bytes = sum(p.numel() * 4 for p in net.parameters())
        print(f"buggy: full fp32 module clone ({n_bytes} B) + fp16 cast per EMA per checkpoint; fixed: one fp16 cpu copy")
