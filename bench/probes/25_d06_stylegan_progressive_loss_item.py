# source: rosinality/style-based-gan-pytorch PR #50 ("Increase training speed": "Call item() less frequently", commit 038db65) — train.py read grad_penalty.item(), (real_predict - fake_predict).item() / (real_predict + fake_predict).item() and loss.item() on every iteration just to refresh the tqdm description; the author saw in perf/py-spy that "each call of item() causes synchronization with the GPU" and wrapped them in `if i % 10 == 0:`
import math
import random
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import grad


class Generator(nn.Module):
    def __init__(self, code_size=32, max_res=16):
        super().__init__()
        self.code_size = code_size
        self.fc = nn.Linear(code_size, 16 * 4 * 4)
        self.ups = nn.ModuleList([nn.Conv2d(16, 16, 3, padding=1) for _ in range(int(math.log2(max_res)) - 2)])
        self.to_rgb = nn.Conv2d(16, 3, 1)

    def forward(self, z, step=0, alpha=1.0):
        if isinstance(z, list):  # style mixing: average the two codes in this toy
            z = (z[0] + z[1]) / 2
        x = self.fc(z).view(-1, 16, 4, 4)
        for conv in self.ups[:step]:
            x = F.leaky_relu(conv(F.interpolate(x, scale_factor=2)), 0.2)
        return torch.tanh(self.to_rgb(x))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.from_rgb = nn.Conv2d(3, 16, 1)
        self.conv = nn.Conv2d(16, 16, 3, padding=1)
        self.linear = nn.Linear(16, 1)

    def forward(self, x, step=0, alpha=1.0):
        h = F.leaky_relu(self.conv(F.leaky_relu(self.from_rgb(x), 0.2)), 0.2)
        return self.linear(h.mean((2, 3)))


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


def accumulate(model1, model2, decay=0.999):
    par1 = dict(model1.named_parameters())
    par2 = dict(model2.named_parameters())
    for k in par1.keys():
        par1[k].data.mul_(decay).add_(par2[k].data, alpha=1 - decay)


def train(args, data, generator, discriminator, g_running, g_optimizer, d_optimizer, device, n_critic=1):
    step = args.step
    alpha = 0
    used_sample = 0
    code_size = generator.code_size
    disc_loss_val = gen_loss_val = grad_loss_val = 0
    log = []

    for i in range(args.iters):  # tqdm(range(3_000_000)) in the original
        discriminator.zero_grad()
        alpha = min(1, 1 / args.phase * (used_sample + 1))
        real_image = data[i % len(data)]
        used_sample += real_image.shape[0]
        b_size = real_image.size(0)
        real_image = real_image.to(device)

        if args.loss == "wgan-gp":
            real_predict = discriminator(real_image, step=step, alpha=alpha)
            real_predict = real_predict.mean() - 0.001 * (real_predict ** 2).mean()
            (-real_predict).backward()
        elif args.loss == "r1":
            real_image.requires_grad = True
            real_scores = discriminator(real_image, step=step, alpha=alpha)
            real_predict = F.softplus(-real_scores).mean()
            real_predict.backward(retain_graph=True)
            grad_real = grad(outputs=real_scores.sum(), inputs=real_image, create_graph=True)[0]
            grad_penalty = (grad_real.view(grad_real.size(0), -1).norm(2, dim=1) ** 2).mean()
            grad_penalty = 10 / 2 * grad_penalty
            grad_penalty.backward()
            grad_loss_val = grad_penalty.item()  # want: D

        if args.mixing and random.random() < 0.9:
            gen_in11, gen_in12, gen_in21, gen_in22 = torch.randn(4, b_size, code_size, device=device).chunk(4, 0)
            gen_in1 = [gen_in11.squeeze(0), gen_in12.squeeze(0)]
            gen_in2 = [gen_in21.squeeze(0), gen_in22.squeeze(0)]
        else:
            gen_in1, gen_in2 = torch.randn(2, b_size, code_size, device=device).chunk(2, 0)
            gen_in1, gen_in2 = gen_in1.squeeze(0), gen_in2.squeeze(0)

        fake_image = generator(gen_in1, step=step, alpha=alpha)
        fake_predict = discriminator(fake_image, step=step, alpha=alpha)

        if args.loss == "wgan-gp":
            fake_predict = fake_predict.mean()
            fake_predict.backward()
            eps = torch.rand(b_size, 1, 1, 1, device=device)
            x_hat = eps * real_image.data + (1 - eps) * fake_image.data
            x_hat.requires_grad = True
            hat_predict = discriminator(x_hat, step=step, alpha=alpha)
            grad_x_hat = grad(outputs=hat_predict.sum(), inputs=x_hat, create_graph=True)[0]
            grad_penalty = ((grad_x_hat.view(grad_x_hat.size(0), -1).norm(2, dim=1) - 1) ** 2).mean()
            grad_penalty = 10 * grad_penalty
            grad_penalty.backward()
            grad_loss_val = grad_penalty.item()  # want: D
            disc_loss_val = (real_predict - fake_predict).item()  # want: D
        elif args.loss == "r1":
            fake_predict = F.softplus(fake_predict).mean()
            fake_predict.backward()
            disc_loss_val = (real_predict + fake_predict).item()  # want: D

        d_optimizer.step()

        if (i + 1) % n_critic == 0:
            generator.zero_grad()
            requires_grad(generator, True)
            requires_grad(discriminator, False)
            fake_image = generator(gen_in2, step=step, alpha=alpha)
            predict = discriminator(fake_image, step=step, alpha=alpha)
            if args.loss == "wgan-gp":
                loss = -predict.mean()
            else:
                loss = F.softplus(-predict).mean()
            gen_loss_val = loss.item()  # want: D
            loss.backward()
            g_optimizer.step()
            accumulate(g_running, generator)
            requires_grad(generator, False)
            requires_grad(discriminator, True)

        if (i + 1) % args.sample_every == 0:
            with torch.no_grad():
                sample = g_running(torch.randn(4, code_size, device=device), step=step, alpha=alpha).data.cpu()  # every N iterations
            log.append(("sample", tuple(sample.shape)))

        state_msg = f"Size: {4 * 2 ** step}; G: {gen_loss_val:.3f}; D: {disc_loss_val:.3f}; Grad: {grad_loss_val:.3f}; Alpha: {alpha:.5f}"
        log.append(state_msg)
    return log


def train_pr50(args, data, generator, discriminator, g_optimizer, d_optimizer, device):
    """The merged version: the same reads, once every 10 iterations."""
    step, code_size = args.step, generator.code_size
    disc_loss_val = gen_loss_val = grad_loss_val = 0
    log = []
    for i in range(args.iters):
        discriminator.zero_grad()
        real_image = data[i % len(data)].to(device).requires_grad_(True)
        real_scores = discriminator(real_image, step=step)
        real_predict = F.softplus(-real_scores).mean()
        real_predict.backward(retain_graph=True)
        grad_real = grad(outputs=real_scores.sum(), inputs=real_image, create_graph=True)[0]
        grad_penalty = 10 / 2 * (grad_real.view(grad_real.size(0), -1).norm(2, dim=1) ** 2).mean()
        grad_penalty.backward()
        if i % 10 == 0:
            grad_loss_val = grad_penalty.item()
        fake_predict = F.softplus(discriminator(generator(torch.randn(real_image.size(0), code_size, device=device), step=step), step=step)).mean()
        fake_predict.backward()
        if i % 10 == 0:
            disc_loss_val = (real_predict + fake_predict).item()
        d_optimizer.step()

        generator.zero_grad()
        requires_grad(discriminator, False)
        loss = F.softplus(-discriminator(generator(torch.randn(real_image.size(0), code_size, device=device), step=step), step=step)).mean()
        if i % 10 == 0:
            gen_loss_val = loss.item()
        loss.backward()
        g_optimizer.step()
        requires_grad(discriminator, True)
        log.append(f"G: {gen_loss_val:.3f}; D: {disc_loss_val:.3f}; Grad: {grad_loss_val:.3f}")
    return log


if __name__ == "__main__":
    import copy

    torch.manual_seed(0)
    random.seed(0)
    device = torch.device("cpu")
    data = [torch.randn(4, 3, 8, 8) for _ in range(3)]
    for loss_name in ("wgan-gp", "r1"):
        args = SimpleNamespace(loss=loss_name, mixing=True, phase=600, iters=6, step=1, sample_every=3)
        g, d = Generator(), Discriminator()
        g_running = copy.deepcopy(g).eval()
        requires_grad(g_running, False)
        g_opt = torch.optim.Adam(g.parameters(), lr=1e-3, betas=(0.0, 0.99))
        d_opt = torch.optim.Adam(d.parameters(), lr=1e-3, betas=(0.0, 0.99))
        log = train(args, data, g, d, g_running, g_opt, d_opt, device)
        assert sum(1 for e in log if isinstance(e, tuple)) == 2
    g2, d2 = Generator(), Discriminator()
    log2 = train_pr50(args, data, g2, d2, torch.optim.Adam(g2.parameters(), lr=1e-3), torch.optim.Adam(d2.parameters(), lr=1e-3), device)
    assert len(log2) == 6
    print("ok", log[-1])
