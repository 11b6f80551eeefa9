# source: huggingface/diffusers issue #9485 and PR #13969 ("Fix CUDA synchronization bottleneck in LCMScheduler") — LCMScheduler.step() indexed the CPU-resident alphas_cumprod with the GPU timestep tensor and branched on `prev_timestep >= 0` (a GPU scalar), so each denoising step ran aten::_local_scalar_dense and waited for the device
import math
from typing import Optional

import numpy as np
import torch
from torch import nn


class LCMScheduler:
    order = 1

    def __init__(self, num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012, original_inference_steps=50,
                 timestep_scaling=10.0, set_alpha_to_one=True):
        self.num_train_timesteps = num_train_timesteps
        self.original_inference_steps = original_inference_steps
        self.timestep_scaling = timestep_scaling
        betas = torch.linspace(beta_start ** 0.5, beta_end ** 0.5, num_train_timesteps, dtype=torch.float32) ** 2
        self.alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)  # stays on the CPU
        self.final_alpha_cumprod = torch.tensor(1.0) if set_alpha_to_one else self.alphas_cumprod[0]
        self.num_inference_steps: Optional[int] = None
        self.timesteps = torch.from_numpy(np.arange(0, num_train_timesteps)[::-1].copy().astype(np.int64))
        self._step_index = None
        self._begin_index = None

    @property
    def step_index(self):
        return self._step_index

    def set_begin_index(self, begin_index: int = 0):
        self._begin_index = begin_index

    def set_timesteps(self, num_inference_steps: int, device=None):
        k = self.num_train_timesteps // self.original_inference_steps
        lcm_origin_timesteps = np.asarray(list(range(1, self.original_inference_steps + 1))) * k - 1
        lcm_origin_timesteps = lcm_origin_timesteps[::-1].copy()
        idx = np.floor(np.linspace(0, len(lcm_origin_timesteps), num=num_inference_steps, endpoint=False)).astype(np.int64)
        timesteps = lcm_origin_timesteps[idx]
        self.num_inference_steps = num_inference_steps
        self.timesteps = torch.from_numpy(timesteps).to(device=device, dtype=torch.long)
        self.cpu_timesteps = torch.from_numpy(timesteps)  # the fix keeps a host copy for indexing
        self._step_index = None

    def _init_step_index(self, timestep):
        self._step_index = self._begin_index if self._begin_index is not None else 0

    def get_scalings_for_boundary_condition_discrete(self, timestep):
        sigma_data = 0.5
        scaled_timestep = timestep * self.timestep_scaling
        c_skip = sigma_data ** 2 / (scaled_timestep ** 2 + sigma_data ** 2)
        c_out = scaled_timestep / (scaled_timestep ** 2 + sigma_data ** 2) ** 0.5
        return c_skip, c_out

    def step(self, model_output, timestep, sample, generator=None):
        if self.num_inference_steps is None:
            raise ValueError("run set_timesteps first")
        if self.step_index is None:
            self._init_step_index(timestep)

        # 1. get previous step value
        prev_step_index = self.step_index + 1
        if prev_step_index < len(self.timesteps):  # python ints
            prev_timestep = self.timesteps[prev_step_index]
        else:
            prev_timestep = timestep

        # 2. compute alphas, betas
        alpha_prod_t = self.alphas_cumprod[timestep]  # want: D
        alpha_prod_t_prev = self.alphas_cumprod[prev_timestep] if prev_timestep >= 0 else self.final_alpha_cumprod  # want: D
        beta_prod_t = 1 - alpha_prod_t
        beta_prod_t_prev = 1 - alpha_prod_t_prev

        # 3. boundary-condition scalings (tensor arithmetic: stays on device)
        c_skip, c_out = self.get_scalings_for_boundary_condition_discrete(timestep)

        # 4. epsilon prediction -> x0
        predicted_original_sample = (sample - beta_prod_t.sqrt().to(sample) * model_output) / alpha_prod_t.sqrt().to(sample)
        denoised = c_out * predicted_original_sample + c_skip * sample

        # 5. inject noise except on the last step (host ints)
        if self.step_index != self.num_inference_steps - 1:
            noise = torch.randn(model_output.shape, generator=generator, dtype=denoised.dtype).to(denoised.device)
            prev_sample = alpha_prod_t_prev.sqrt().to(sample) * denoised + beta_prod_t_prev.sqrt().to(sample) * noise
        else:
            prev_sample = denoised
        self._step_index += 1
        return prev_sample, denoised

    def step_fixed(self, model_output, timestep, sample, generator=None):
        if self.step_index is None:
            self._init_step_index(timestep)
        prev_step_index = self.step_index + 1
        t_host = self.cpu_timesteps[self.step_index]  # host tensor indexed by a host int
        if prev_step_index < len(self.cpu_timesteps):
            prev_host = self.cpu_timesteps[prev_step_index]
        else:
            prev_host = t_host
        alpha_prod_t = self.alphas_cumprod[t_host]
        alpha_prod_t_prev = self.alphas_cumprod[prev_host] if prev_host >= 0 else self.final_alpha_cumprod
        c_skip, c_out = self.get_scalings_for_boundary_condition_discrete(timestep)
        x0 = (sample - (1 - alpha_prod_t).sqrt().to(sample) * model_output) / alpha_prod_t.sqrt().to(sample)
        denoised = c_out * x0 + c_skip * sample
        if self.step_index != self.num_inference_steps - 1:
            noise = torch.randn(model_output.shape, generator=generator, dtype=denoised.dtype).to(denoised.device)
            prev_sample = alpha_prod_t_prev.sqrt().to(sample) * denoised + (1 - alpha_prod_t_prev).sqrt().to(sample) * noise
        else:
            prev_sample = denoised
        self._step_index += 1
        return prev_sample, denoised


class TinyUNet(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.t_embed = nn.Linear(1, ch)

    def forward(self, x, t):
        return self.conv(x) + self.t_embed(t.float().view(1, 1) / 1000.0).view(1, -1, 1, 1)


@torch.no_grad()
def run_lcm(unet, scheduler, latents, steps=4, fixed=False, seed=0):
    scheduler.set_timesteps(steps, device=latents.device)
    scheduler.set_begin_index(0)
    gen = torch.Generator().manual_seed(seed)
    step = scheduler.step_fixed if fixed else scheduler.step
    for i, t in enumerate(scheduler.timesteps):
        model_pred = unet(latents, t)
        latents, denoised = step(model_pred, t, latents, generator=gen)
    return denoised


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    unet = TinyUNet().to(device)
    lat = torch.randn(1, 4, 8, 8, device=device)
    a = run_lcm(unet, LCMScheduler(), lat)
    b = run_lcm(unet, LCMScheduler(), lat, fixed=True)
    assert torch.allclose(a, b, atol=1e-6)
    print("ok:", tuple(a.shape), math.isfinite(float(a.abs().max())))
