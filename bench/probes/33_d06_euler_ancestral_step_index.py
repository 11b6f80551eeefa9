# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/4347 — EulerAncestralDiscreteScheduler looked up the current sigma with (self.timesteps == timestep).nonzero().item() in both scale_model_input() and step(), i.e. two device->host syncs per denoising step (issue #3950); the fix keeps a _step_index counter that is advanced after every step() instead of searching the timestep tensor.
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore", category=DeprecationWarning)


class EulerAncestralDiscreteScheduler:
    def __init__(self, num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012):
        betas = torch.linspace(beta_start**0.5, beta_end**0.5, num_train_timesteps, dtype=torch.float32) ** 2
        self.alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        self.num_train_timesteps = num_train_timesteps
        self.timesteps = None
        self.sigmas = None

    @property
    def init_noise_sigma(self):
        return (self.sigmas.max() ** 2 + 1) ** 0.5

    def set_timesteps(self, num_inference_steps, device=None):
        timesteps = np.linspace(0, self.num_train_timesteps - 1, num_inference_steps, dtype=float)[::-1].copy()
        sigmas = np.array(((1 - self.alphas_cumprod) / self.alphas_cumprod) ** 0.5)
        sigmas = np.interp(timesteps, np.arange(0, len(sigmas)), sigmas)
        sigmas = np.concatenate([sigmas, [0.0]]).astype(np.float32)
        self.sigmas = torch.from_numpy(sigmas).to(device=device)
        self.timesteps = torch.from_numpy(timesteps).to(device=device)

    def _index_for(self, timestep):
        if isinstance(timestep, torch.Tensor):
            timestep = timestep.to(self.timesteps.device)
        return (self.timesteps == timestep).nonzero().item()  # want: D

    def scale_model_input(self, sample, timestep):
        step_index = self._index_for(timestep)
        sigma = self.sigmas[step_index]
        return sample / ((sigma**2 + 1) ** 0.5)

    def _advance(self):
        pass

    def step(self, model_output, timestep, sample, generator=None):
        step_index = self._index_for(timestep)
        sigma = self.sigmas[step_index]
        # epsilon prediction
        pred_original_sample = sample - sigma * model_output
        sigma_from = self.sigmas[step_index]
        sigma_to = self.sigmas[step_index + 1]
        sigma_up = (sigma_to**2 * (sigma_from**2 - sigma_to**2) / sigma_from**2) ** 0.5
        sigma_down = (sigma_to**2 - sigma_up**2) ** 0.5
        derivative = (sample - pred_original_sample) / sigma
        dt = sigma_down - sigma
        prev_sample = sample + derivative * dt
        noise = torch.randn(model_output.shape, generator=generator, dtype=model_output.dtype)
        prev_sample = prev_sample + noise.to(model_output.device) * sigma_up
        self._advance()
        return prev_sample


class EulerAncestralDiscreteSchedulerFixed(EulerAncestralDiscreteScheduler):
    def set_timesteps(self, num_inference_steps, device=None):
        super().set_timesteps(num_inference_steps, device=device)
        self._step_index = 0

    @property
    def step_index(self):
        return self._step_index

    def _index_for(self, timestep):
        return self.step_index

    def _advance(self):
        # upon completion increase step index by one
        self._step_index += 1


def denoise(scheduler, unet, latents, num_inference_steps=20, seed=0):
    generator = torch.Generator().manual_seed(seed)
    scheduler.set_timesteps(num_inference_steps, device=latents.device)
    latents = latents * scheduler.init_noise_sigma
    for t in scheduler.timesteps:
        latent_model_input = scheduler.scale_model_input(latents, t)
        noise_pred = unet(latent_model_input, t)
        latents = scheduler.step(noise_pred, t, latents, generator=generator)
    return latents


if __name__ == "__main__":
    torch.manual_seed(0)
    unet = torch.nn.Conv2d(4, 4, 3, padding=1)
    with torch.no_grad():
        fwd = lambda x, t: unet(x) * 0.1
        latents = torch.randn(1, 4, 8, 8)
        a = denoise(EulerAncestralDiscreteScheduler(), fwd, latents)
        b = denoise(EulerAncestralDiscreteSchedulerFixed(), fwd, latents)
    assert torch.allclose(a, b)
    print("final latent std", float(a.std()))
