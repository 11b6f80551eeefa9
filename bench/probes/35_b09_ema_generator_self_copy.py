# source: zheng-yuwei/enhanced-UGATIT https://github.com/zheng-yuwei/enhanced-UGATIT/issues/4 — UGATIT.model_ema copied `p_ema.copy_(p_ema)` during the warm-up phase, a self-copy that never writes the live generator weights into the EMA generator (so G_ema kept its random init until ema_start); the maintainer confirmed the fix `p_ema.copy_(p)`.
import argparse

import torch
import torch.nn as nn


class ResnetGenerator(nn.Module):
    def __init__(self, ngf=8, n_blocks=2):
        super().__init__()
        layers = [nn.Conv2d(3, ngf, 3, padding=1), nn.InstanceNorm2d(ngf), nn.ReLU(True)]
        for _ in range(n_blocks):
            layers += [nn.Conv2d(ngf, ngf, 3, padding=1), nn.BatchNorm2d(ngf), nn.ReLU(True)]
        layers += [nn.Conv2d(ngf, 3, 3, padding=1), nn.Tanh()]
        self.model = nn.Sequential(*layers)

    def forward(self, x):
        return self.model(x)


class UGATIT(object):
    def __init__(self, args):
        self.args = args
        torch.manual_seed(0)
        self.genA2B = ResnetGenerator()
        torch.manual_seed(1)
        self.genA2B_ema = ResnetGenerator().eval()
        for p in self.genA2B_ema.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def model_ema(self, step, G_ema, G):
        if step > self.args.ema_start * self.args.iteration:
            for p_ema, p in zip(G_ema.parameters(), G.parameters()):
                p_ema.copy_(p.lerp(p_ema, self.args.ema_beta))
        else:
            for p_ema, p in zip(G_ema.parameters(), G.parameters()):
                p_ema.copy_(p_ema)  # want: B
        for b_ema, b in zip(G_ema.buffers(), G.buffers()):
            b_ema.copy_(b)
        return


class UGATITFixed(UGATIT):
    @torch.no_grad()
    def model_ema(self, step, G_ema, G):
        if step > self.args.ema_start * self.args.iteration:
            for p_ema, p in zip(G_ema.parameters(), G.parameters()):
                p_ema.copy_(p.lerp(p_ema, self.args.ema_beta))
        else:
            for p_ema, p in zip(G_ema.parameters(), G.parameters()):
                p_ema.copy_(p)
        for b_ema, b in zip(G_ema.buffers(), G.buffers()):
            b_ema.copy_(b)
        return


def train(trainer_cls, steps=5):
    args = argparse.Namespace(ema_start=0.5, iteration=100, ema_beta=0.999)
    gan = trainer_cls(args)
    opt = torch.optim.Adam(gan.genA2B.parameters(), lr=1e-3)
    for step in range(1, steps + 1):
        x = torch.randn(2, 3, 16, 16)
        loss = (gan.genA2B(x) - x).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        gan.model_ema(step, gan.genA2B_ema, gan.genA2B)
    w, w_ema = gan.genA2B.model[0].weight, gan.genA2B_ema.model[0].weight
    return torch.equal(w, w_ema)


if __name__ == "__main__":
    ok = train(UGATIT)
    print("buggy: ema follows G during warm-up:", ok)
    assert not ok
    ok = train(UGATITFixed)
    print("fixed: ema follows G during warm-up:", ok)
    assert ok
