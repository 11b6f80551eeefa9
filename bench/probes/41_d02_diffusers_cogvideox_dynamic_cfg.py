# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/14589 — CogVideoXPipeline's denoising loop computed the dynamic guidance scale from `t.item()` and passed the device timestep `t` to `CogVideoXDDIMScheduler.step`, which indexes the host-side `alphas_cumprod` with it (`alphas_cumprod[timestep]`, `alphas_cumprod[prev_timestep] if prev_timestep >= 0`); with `use_dynamic_cfg` that is four device-to-host copies per step (79 stalls over 20 steps, ~331 ms of blocked CPU per step in the PR's profile). The PR removes the per-step host syncs by giving the scheduler and the dynamic-CFG formula host-side timestep values, so nothing inside the loop reads device memory.
import math

import numpy as np
import torch


class CogVideoXDDIMScheduler:
    def __init__(self, num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012):
        self.num_train_timesteps = num_train_timesteps
        betas = torch.linspace(beta_start**0.5, beta_end**0.5, num_train_timesteps, dtype=torch.float64) ** 2
        self.alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        self.final_alpha_cumprod = torch.tensor(1.0, dtype=torch.float64)
        self.num_inference_steps = None

    def set_timesteps(self, num_inference_steps, device=None):
        self.num_inference_steps = num_inference_steps
        step_ratio = self.num_train_timesteps // num_inference_steps
        timesteps = (np.arange(0, num_inference_steps) * step_ratio).round()[::-1].copy().astype(np.int64)
        self.timesteps_np = timesteps
        self.timesteps = torch.from_numpy(timesteps).to(device)

    def step(self, model_output, timestep, sample):
        prev_timestep = timestep - self.num_train_timesteps // self.num_inference_steps
        alpha_prod_t = self.alphas_cumprod[timestep]  # maybe: D (host table indexed with the device timestep)
        alpha_prod_t_prev = self.alphas_cumprod[prev_timestep] if prev_timestep >= 0 else self.final_alpha_cumprod  # maybe: D (tensor compared in a Python conditional)
        beta_prod_t = 1 - alpha_prod_t
        a_t = ((1 - alpha_prod_t_prev) / (1 - alpha_prod_t)) ** 0.5
        b_t = alpha_prod_t_prev**0.5 - alpha_prod_t**0.5 * a_t
        pred_original_sample = (alpha_prod_t**0.5) * sample - (beta_prod_t**0.5) * model_output
        prev_sample = a_t * sample + b_t * pred_original_sample
        return prev_sample.to(sample.dtype), pred_original_sample


class CogVideoXPipeline:
    def __init__(self, transformer, scheduler):
        self.transformer = transformer
        self.scheduler = scheduler

    @property
    def guidance_scale(self):
        return self._guidance_scale

    def __call__(self, latents, prompt_embeds, num_inference_steps=6, guidance_scale=6.0, use_dynamic_cfg=True):
        self._guidance_scale = guidance_scale
        self.scheduler.set_timesteps(num_inference_steps, device=latents.device)
        timesteps = self.scheduler.timesteps
        for i, t in enumerate(timesteps):
            latent_model_input = torch.cat([latents] * 2)
            timestep = t.expand(latent_model_input.shape[0])
            noise_pred = self.transformer(latent_model_input, prompt_embeds, timestep).float()
            if use_dynamic_cfg:
                self._guidance_scale = 1 + guidance_scale * (
                    (1 - math.cos(math.pi * ((num_inference_steps - t.item()) / num_inference_steps) ** 5.0)) / 2  # want: D
                )
            noise_pred_uncond, noise_pred_text = noise_pred.chunk(2)
            noise_pred = noise_pred_uncond + self.guidance_scale * (noise_pred_text - noise_pred_uncond)
            latents, _ = self.scheduler.step(noise_pred, t, latents)
        return latents


class CogVideoXPipelineFixed(CogVideoXPipeline):
    def __call__(self, latents, prompt_embeds, num_inference_steps=6, guidance_scale=6.0, use_dynamic_cfg=True):
        self._guidance_scale = guidance_scale
        self.scheduler.set_timesteps(num_inference_steps, device=latents.device)
        timesteps = self.scheduler.timesteps
        host_timesteps = [int(v) for v in self.scheduler.timesteps_np]
        for i, t in enumerate(timesteps):
            t_host = host_timesteps[i]
            latent_model_input = torch.cat([latents] * 2)
            timestep = t.expand(latent_model_input.shape[0])
            noise_pred = self.transformer(latent_model_input, prompt_embeds, timestep).float()
            if use_dynamic_cfg:
                self._guidance_scale = 1 + guidance_scale * (
                    (1 - math.cos(math.pi * ((num_inference_steps - t_host) / num_inference_steps) ** 5.0)) / 2
                )
            noise_pred_uncond, noise_pred_text = noise_pred.chunk(2)
            noise_pred = noise_pred_uncond + self.guidance_scale * (noise_pred_text - noise_pred_uncond)
            latents, _ = self.scheduler.step(noise_pred, t_host, latents)
        return latents


def toy_transformer(x, ctx, timestep):
    return torch.tanh(x * 0.5 + ctx.mean() + timestep.view(-1, 1, 1).float() / 1000.0)


if __name__ == "__main__":
    torch.manual_seed(0)
    latents = torch.randn(1, 4, 8)
    ctx = torch.randn(2, 3)
    a = CogVideoXPipeline(toy_transformer, CogVideoXDDIMScheduler())(latents.clone(), ctx)
    b = CogVideoXPipelineFixed(toy_transformer, CogVideoXDDIMScheduler())(latents.clone(), ctx)
    assert torch.allclose(a, b), (a - b).abs().max()
    print("ok", float(a.abs().mean()))
