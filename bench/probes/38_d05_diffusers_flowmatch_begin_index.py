# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/14576 — HunyuanVideo (and Mochi, Lumina2, AuraFlow, Chroma) never called `scheduler.set_begin_index(0)`, so the first `FlowMatchEulerDiscreteScheduler.step()` of every denoising run went through `_init_step_index` -> `index_for_timestep`, which does `(schedule_timesteps == timestep).nonzero()` followed by `indices[pos].item()`, a device-to-host sync inside the denoising loop. The fix (same pattern as #11696 for Flux) sets the begin index before the loop so the step index is taken from host state.
from __future__ import annotations

from typing import List

import numpy as np
import torch
from torch import nn


class FlowMatchEulerDiscreteScheduler:
    def __init__(self, num_train_timesteps: int = 1000, shift: float = 1.0):
        self.num_train_timesteps, self._shift = num_train_timesteps, shift
        self._step_index = self._begin_index = self.timesteps = self.sigmas = None

    @property
    def step_index(self):
        return self._step_index

    @property
    def begin_index(self):
        return self._begin_index

    def set_begin_index(self, begin_index: int = 0):
        self._begin_index = begin_index

    def set_timesteps(self, num_inference_steps: int = None, device=None, sigmas: List[float] = None):
        sigmas = np.array(sigmas).astype(np.float32)
        sigmas = self._shift * sigmas / (1 + (self._shift - 1) * sigmas)
        sigmas = torch.from_numpy(sigmas).to(dtype=torch.float32, device=device)
        self.timesteps = (sigmas * self.num_train_timesteps).to(device=device)
        self.sigmas = torch.cat([sigmas, torch.zeros(1, device=sigmas.device)])
        self._step_index = self._begin_index = None

    def index_for_timestep(self, timestep, schedule_timesteps=None):
        schedule_timesteps = self.timesteps if schedule_timesteps is None else schedule_timesteps

        indices = (schedule_timesteps == timestep).nonzero()  # want: D
        # The sigma index that is taken for the **very** first `step`
        # is always the second index (or the last index if there is only 1)
        pos = 1 if len(indices) > 1 else 0
        return indices[pos].item()  # want: D

    def _init_step_index(self, timestep):
        if self.begin_index is None:
            if isinstance(timestep, torch.Tensor):
                timestep = timestep.to(self.timesteps.device)
            self._step_index = self.index_for_timestep(timestep)
        else:
            self._step_index = self._begin_index

    def step(self, model_output: torch.FloatTensor, timestep, sample: torch.FloatTensor, return_dict: bool = False):
        if self.step_index is None:
            self._init_step_index(timestep)
        sample = sample.to(torch.float32)
        sigma, sigma_next = self.sigmas[self.step_index], self.sigmas[self.step_index + 1]
        prev_sample = (sample + (sigma_next - sigma) * model_output).to(model_output.dtype)
        self._step_index += 1
        return (prev_sample,)


def retrieve_timesteps(scheduler, num_inference_steps=None, device=None, sigmas=None):
    scheduler.set_timesteps(sigmas=sigmas, device=device)
    return scheduler.timesteps, len(scheduler.timesteps)


class HunyuanVideoTransformer3DModel(nn.Module):
    def __init__(self, channels: int = 4):
        super().__init__()
        self.proj, self.time_proj = nn.Conv3d(channels, channels, 1), nn.Linear(1, channels)

    def forward(self, hidden_states, timestep, encoder_hidden_states, return_dict=False):
        temb = self.time_proj(timestep[:, None] / 1000.0)[:, :, None, None, None]
        return (self.proj(hidden_states) * 0.1 + temb,)


class HunyuanVideoPipeline:
    def __init__(self, transformer, scheduler):
        self.transformer, self.scheduler = transformer, scheduler

    @torch.no_grad()
    def __call__(self, latents: torch.Tensor, prompt_embeds: torch.Tensor, num_inference_steps: int = 50, sigmas: List[float] = None):
        device, transformer_dtype = latents.device, self.transformer.proj.weight.dtype
        sigmas = np.linspace(1.0, 0.0, num_inference_steps + 1)[:-1] if sigmas is None else sigmas
        timesteps, num_inference_steps = retrieve_timesteps(self.scheduler, num_inference_steps, device, sigmas=sigmas)
        for i, t in enumerate(timesteps):
            latent_model_input = latents.to(transformer_dtype)
            timestep = t.expand(latents.shape[0]).to(latents.dtype)
            noise_pred = self.transformer(latent_model_input, timestep, prompt_embeds, return_dict=False)[0]
            # compute the previous noisy sample x_t -> x_t-1
            latents = self.scheduler.step(noise_pred, t, latents, return_dict=False)[0]
        return latents


class HunyuanVideoPipelineFixed(HunyuanVideoPipeline):
    @torch.no_grad()
    def __call__(self, latents: torch.Tensor, prompt_embeds: torch.Tensor, num_inference_steps: int = 50, sigmas: List[float] = None):
        device, transformer_dtype = latents.device, self.transformer.proj.weight.dtype
        sigmas = np.linspace(1.0, 0.0, num_inference_steps + 1)[:-1] if sigmas is None else sigmas
        timesteps, num_inference_steps = retrieve_timesteps(self.scheduler, num_inference_steps, device, sigmas=sigmas)
        # We set the index here to remove DtoH sync, helpful especially during compilation.
        self.scheduler.set_begin_index(0)
        for i, t in enumerate(timesteps):
            latent_model_input = latents.to(transformer_dtype)
            timestep = t.expand(latents.shape[0]).to(latents.dtype)
            noise_pred = self.transformer(latent_model_input, timestep, prompt_embeds, return_dict=False)[0]
            # compute the previous noisy sample x_t -> x_t-1
            latents = self.scheduler.step(noise_pred, t, latents, return_dict=False)[0]
        return latents


if __name__ == "__main__":
    torch.manual_seed(0)
    transformer, latents, prompt_embeds = HunyuanVideoTransformer3DModel(4).eval(), torch.randn(1, 4, 3, 8, 8), torch.randn(1, 7, 16)
    pipe = HunyuanVideoPipeline(transformer, FlowMatchEulerDiscreteScheduler(shift=7.0))
    pipe_fixed = HunyuanVideoPipelineFixed(transformer, FlowMatchEulerDiscreteScheduler(shift=7.0))
    out, out_fixed = pipe(latents, prompt_embeds, num_inference_steps=6), pipe_fixed(latents, prompt_embeds, num_inference_steps=6)
    assert torch.allclose(out, out_fixed)
    assert pipe.scheduler.begin_index is None and pipe_fixed.scheduler.begin_index == 0
    print("ok", float(out.abs().mean()))
