# source: rosinality/style-based-gan-pytorch https://github.com/rosinality/style-based-gan-pytorch/pull/50 — train() read grad_penalty.item(), (real_predict + fake_predict).item() and loss.item() on every iteration for the tqdm status line; "each call of item() causes synchronization with the GPU" (CPU and GPU take turns waiting). The fix ("Increase training speed") only calls .item() when i % 10 == 0.
import torch
from torch import nn, optim
from torch.autograd import grad
from torch.nn import functional as F


class _Pbar:
    def __init__(self, n):
        self.n, self.desc = n, ""

    def __iter__(self):
        return iter(range(self.n))

    def set_description(self, desc):
        self.desc = desc


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


def train(args, generator, discriminator, g_optimizer, d_optimizer, device):
    pbar = _Pbar(args["iters"])
    requires_grad(generator, False)
    requires_grad(discriminator, True)
    disc_loss_val = gen_loss_val = grad_loss_val = 0

    for i in pbar:
        discriminator.zero_grad()
        real_image = torch.randn(args["batch"], 64, device=device)
        b_size = real_image.size(0)

        real_image.requires_grad = True
        real_scores = discriminator(real_image)
        real_predict = F.softplus(-real_scores).mean()
        real_predict.backward(retain_graph=True)
        grad_real = grad(outputs=real_scores.sum(), inputs=real_image, create_graph=True)[0]
        grad_penalty = (grad_real.view(grad_real.size(0), -1).norm(2, dim=1) ** 2).mean()
        grad_penalty = 10 / 2 * grad_penalty
        grad_penalty.backward()
        grad_loss_val = grad_penalty.item()  # want: D

        gen_in1, gen_in2 = torch.randn(2, b_size, 32, device=device).chunk(2, 0)
        fake_image = generator(gen_in1.squeeze(0))
        fake_predict = discriminator(fake_image)
        fake_predict = F.softplus(fake_predict).mean()
        fake_predict.backward()
        disc_loss_val = (real_predict + fake_predict).item()  # want: D

        d_optimizer.step()

        if (i + 1) % args["n_critic"] == 0:
            generator.zero_grad()
            requires_grad(generator, True)
            requires_grad(discriminator, False)
            predict = discriminator(generator(gen_in2.squeeze(0)))
            loss = F.softplus(-predict).mean()
            gen_loss_val = loss.item()  # want: D
            loss.backward()
            g_optimizer.step()
            requires_grad(generator, False)
            requires_grad(discriminator, True)

        state_msg = f"G: {gen_loss_val:.3f}; D: {disc_loss_val:.3f}; Grad: {grad_loss_val:.3f}"
        pbar.set_description(state_msg)
    return pbar.desc


def train_fixed(args, generator, discriminator, g_optimizer, d_optimizer, device):
    pbar = _Pbar(args["iters"])
    requires_grad(generator, False)
    requires_grad(discriminator, True)
    disc_loss_val = gen_loss_val = grad_loss_val = 0

    for i in pbar:
        discriminator.zero_grad()
        real_image = torch.randn(args["batch"], 64, device=device)
        b_size = real_image.size(0)

        real_image.requires_grad = True
        real_scores = discriminator(real_image)
        real_predict = F.softplus(-real_scores).mean()
        real_predict.backward(retain_graph=True)
        grad_real = grad(outputs=real_scores.sum(), inputs=real_image, create_graph=True)[0]
        grad_penalty = (grad_real.view(grad_real.size(0), -1).norm(2, dim=1) ** 2).mean()
        grad_penalty = 10 / 2 * grad_penalty
        grad_penalty.backward()
        if i % 10 == 0:
            grad_loss_val = grad_penalty.item()

        gen_in1, gen_in2 = torch.randn(2, b_size, 32, device=device).chunk(2, 0)
        fake_image = generator(gen_in1.squeeze(0))
        fake_predict = discriminator(fake_image)
        fake_predict = F.softplus(fake_predict).mean()
        fake_predict.backward()
        if i % 10 == 0:
            disc_loss_val = (real_predict + fake_predict).item()

        d_optimizer.step()

        if (i + 1) % args["n_critic"] == 0:
            generator.zero_grad()
            requires_grad(generator, True)
            requires_grad(discriminator, False)
            predict = discriminator(generator(gen_in2.squeeze(0)))
            loss = F.softplus(-predict).mean()
            if i % 10 == 0:
                gen_loss_val = loss.item()
            loss.backward()
            g_optimizer.step()
            requires_grad(generator, False)
            requires_grad(discriminator, True)

        state_msg = f"G: {gen_loss_val:.3f}; D: {disc_loss_val:.3f}; Grad: {grad_loss_val:.3f}"
        pbar.set_description(state_msg)
    return pbar.desc


if __name__ == "__main__":
    dev = torch.device("cpu")
    args = {"iters": 30, "batch": 16, "n_critic": 1}
    for fn in (train, train_fixed):
        torch.manual_seed(0)
        generator = nn.Sequential(nn.Linear(32, 64), nn.LeakyReLU(0.2), nn.Linear(64, 64))
        discriminator = nn.Sequential(nn.Linear(64, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))
        g_opt = optim.Adam(generator.parameters(), lr=1e-3, betas=(0.0, 0.99))
        d_opt = optim.Adam(discriminator.parameters(), lr=1e-3, betas=(0.0, 0.99))
        print(fn.__name__, fn(args, generator, discriminator, g_opt, d_opt, dev))
