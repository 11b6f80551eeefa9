# source: huggingface/diffusers PR #11696 (follow-up #14576) — FlowMatch scheduler's index_for_timestep() did `(timesteps == t).nonzero()` then `.item()` from step(), a DtoH sync inside the denoising loop
import numpy as np
import torch
from torch import nn


class FlowEulerScheduler:
    order = 1

    def __init__(self, num_train_timesteps: int = 1000, shift: float = 3.0):
        self.num_train_timesteps = num_train_timesteps
        self.shift = shift
        grid = np.linspace(1, num_train_timesteps, num_train_timesteps, dtype=np.float32)[::-1].copy()
        sigmas = torch.from_numpy(grid / num_train_timesteps)
        self.sigmas = shift * sigmas / (1 + (shift - 1) * sigmas)
        self.timesteps = self.sigmas * num_train_timesteps
        self.sigma_min = self.sigmas[-1].item()  # once, at construction, on a CPU tensor
        self.sigma_max = float(self.sigmas[0])
        self._step_index = None
        self._begin_index = None

    def set_begin_index(self, begin_index: int = 0):
        self._begin_index = begin_index

    def set_timesteps(self, num_inference_steps: int, device=None):
        sigmas = np.linspace(self.sigma_max, self.sigma_min, num_inference_steps)
        sigmas = torch.from_numpy(sigmas).to(dtype=torch.float32, device=device)
        self.timesteps = sigmas * self.num_train_timesteps
        self.sigmas = torch.cat([sigmas, torch.zeros(1, device=sigmas.device)])
        self._step_index = None

    def index_for_timestep(self, timestep, schedule_timesteps=None):
        if schedule_timesteps is None:
            schedule_timesteps = self.timesteps
        indices = (schedule_timesteps == timestep).nonzero()  # want: D
        # the second match is used when the schedule repeats a timestep (img2img starts mid-schedule)
        pos = 1 if len(indices) > 1 else 0
        return indices[pos].item()  # want: D

    def _init_step_index(self, timestep):
        if self._begin_index is None:
            if isinstance(timestep, torch.Tensor):
                timestep = timestep.to(self.timesteps.device)
            self._step_index = self.index_for_timestep(timestep)
        else:
            self._step_index = self._begin_index

    def scale_model_input(self, sample, timestep):
        # older Euler-style schedulers looked the index up again here, every step
        step_index = self.index_for_timestep(timestep)
        sigma = self.sigmas[step_index]
        return sample / ((sigma**2 + 1) ** 0.5)

    def step(self, model_output, timestep, sample):
        if self._step_index is None:
            self._init_step_index(timestep)
        sample = sample.to(torch.float32)
        sigma = self.sigmas[self._step_index]  # python-int index: no sync
        sigma_next = self.sigmas[self._step_index + 1]
        prev_sample = sample + (sigma_next - sigma) * model_output
        self._step_index += 1
        return prev_sample.to(model_output.dtype)


class TinyDenoiser(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.t_proj = nn.Linear(1, ch)

    def forward(self, x, t):
        return self.conv(x) + self.t_proj(t[:, None] / 1000.0)[:, :, None, None]


@torch.no_grad()
def run_pipeline(denoiser, scheduler, latents, num_inference_steps=4, begin_at_zero=False):
    scheduler.set_timesteps(num_inference_steps, device=latents.device)
    timesteps = scheduler.timesteps
    if begin_at_zero:
        scheduler.set_begin_index(0)
    num_warmup_steps = max(len(timesteps) - num_inference_steps * scheduler.order, 0)  # host ints
    for i, t in enumerate(timesteps):
        model_in = scheduler.scale_model_input(latents, t)
        noise_pred = denoiser(model_in, t.expand(latents.shape[0]))
        latents = scheduler.step(noise_pred, t, latents)
        if i == len(timesteps) - 1 or ((i + 1) > num_warmup_steps and (i + 1) % scheduler.order == 0):
            pass  # progress_bar.update()
    return latents


if __name__ == "__main__":
    out = run_pipeline(TinyDenoiser(), FlowEulerScheduler(), torch.randn(2, 4, 8, 8))
    print(out.shape)
