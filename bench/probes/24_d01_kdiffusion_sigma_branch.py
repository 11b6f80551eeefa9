# source: crowsonkb/k-diffusion issue #108 (and AUTOMATIC1111/stable-diffusion-webui PR #15823 "Keep sigmas on CPU") — the samplers branch on `sigmas[i + 1] == 0` and `s_tmin <= sigmas[i] <= s_tmax` while sigmas lives on the GPU, so every step blocks the host on the device
import math

import torch
from torch import nn


def append_zero(x):
    return torch.cat([x, x.new_zeros([1])])


def get_sigmas_karras(n, sigma_min, sigma_max, rho=7.0, device="cpu"):
    ramp = torch.linspace(0, 1, n)
    min_inv_rho = sigma_min ** (1 / rho)
    max_inv_rho = sigma_max ** (1 / rho)
    sigmas = (max_inv_rho + ramp * (min_inv_rho - max_inv_rho)) ** rho
    return append_zero(sigmas).to(device)


def append_dims(x, target_dims):
    return x[(...,) + (None,) * (target_dims - x.ndim)]


def to_d(x, sigma, denoised):
    return (x - denoised) / append_dims(sigma, x.ndim)


@torch.no_grad()
def sample_heun(model, x, sigmas, extra_args=None, callback=None, s_churn=0.0, s_tmin=0.0,
                s_tmax=float("inf"), s_noise=1.0):
    extra_args = {} if extra_args is None else extra_args
    s_in = x.new_ones([x.shape[0]])
    for i in range(len(sigmas) - 1):
        gamma = min(s_churn / (len(sigmas) - 1), 2 ** 0.5 - 1) if s_tmin <= sigmas[i] <= s_tmax else 0.0  # want: D
        eps = torch.randn_like(x) * s_noise
        sigma_hat = sigmas[i] * (gamma + 1)
        if gamma > 0:  # a python float
            x = x + eps * (sigma_hat ** 2 - sigmas[i] ** 2) ** 0.5
        denoised = model(x, sigma_hat * s_in, **extra_args)
        d = to_d(x, sigma_hat * s_in, denoised)
        if callback is not None:
            callback({"x": x, "i": i, "sigma": sigmas[i], "sigma_hat": sigma_hat, "denoised": denoised})
        dt = sigmas[i + 1] - sigma_hat
        if sigmas[i + 1] == 0:  # want: D
            x = x + d * dt
        else:
            x_2 = x + d * dt
            denoised_2 = model(x_2, sigmas[i + 1] * s_in, **extra_args)
            d_2 = to_d(x_2, sigmas[i + 1] * s_in, denoised_2)
            x = x + (d + d_2) / 2 * dt
    return x


@torch.no_grad()
def sample_dpmpp_2m(model, x, sigmas, extra_args=None, callback=None):
    extra_args = {} if extra_args is None else extra_args
    s_in = x.new_ones([x.shape[0]])
    sigma_fn = lambda t: t.neg().exp()
    t_fn = lambda sigma: sigma.log().neg()
    old_denoised = None
    for i in range(len(sigmas) - 1):
        denoised = model(x, sigmas[i] * s_in, **extra_args)
        if callback is not None:
            callback({"x": x, "i": i, "sigma": sigmas[i], "sigma_hat": sigmas[i], "denoised": denoised})
        t, t_next = t_fn(sigmas[i]), t_fn(sigmas[i + 1])
        h = t_next - t
        if old_denoised is None or sigmas[i + 1] == 0:  # want: D
            x = (sigma_fn(t_next) / sigma_fn(t)) * x - (-h).expm1() * denoised
        else:
            h_last = t - t_fn(sigmas[i - 1])
            r = h_last / h
            denoised_d = (1 + 1 / (2 * r)) * denoised - (1 / (2 * r)) * old_denoised
            x = (sigma_fn(t_next) / sigma_fn(t)) * x - (-h).expm1() * denoised_d
        old_denoised = denoised
    return x


@torch.no_grad()
def sample_dpmpp_2m_host_sigmas(model, x, sigmas, extra_args=None):
    """The fix: the schedule stays on the host, so branching on it never waits for the GPU."""
    extra_args = {} if extra_args is None else extra_args
    sigmas = sigmas.cpu()  # once per call, before the loop
    s_in = x.new_ones([x.shape[0]])
    old_denoised = None
    for i in range(len(sigmas) - 1):
        s, s_next = float(sigmas[i]), float(sigmas[i + 1])  # host floats
        denoised = model(x, s * s_in, **extra_args)
        if s_next == 0:
            x = denoised
        else:
            t, t_next = -math.log(s), -math.log(s_next)
            h = t_next - t
            if old_denoised is None:
                x = (s_next / s) * x - math.expm1(-h) * denoised
            else:
                r = (t - (-math.log(float(sigmas[i - 1])))) / h
                denoised_d = (1 + 1 / (2 * r)) * denoised - (1 / (2 * r)) * old_denoised
                x = (s_next / s) * x - math.expm1(-h) * denoised_d
        old_denoised = denoised
    return x


class Denoiser(nn.Module):
    def __init__(self, ch=3):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)

    def forward(self, x, sigma):
        c_in = 1 / (sigma ** 2 + 1) ** 0.5
        return x - append_dims(sigma, x.ndim) * self.conv(x * append_dims(c_in, x.ndim))


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = Denoiser().to(device)
    sigmas = get_sigmas_karras(6, 0.03, 14.6, device=device)
    x = torch.randn(2, 3, 8, 8, device=device) * sigmas[0]
    a = sample_heun(model, x, sigmas, s_churn=0.5, s_tmin=0.05, s_tmax=10.0)
    b = sample_dpmpp_2m(model, x, sigmas)
    c = sample_dpmpp_2m_host_sigmas(model, x, sigmas)
    assert a.shape == x.shape and torch.isfinite(b).all()
    print("ok:", tuple(a.shape), float((b - c).abs().max()))
