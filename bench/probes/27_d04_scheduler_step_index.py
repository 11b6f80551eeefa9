# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/11696 — on the first `scheduler.step()` of the Flux denoising loop, `_init_step_index` called `index_for_timestep`, which does `(schedule_timesteps == timestep).nonzero()` and `indices[pos].item()` on device tensors (D2H sync / graph break); the fix makes the pipeline call `self.scheduler.set_begin_index(0)` before the loop so that path is never taken.
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np
import torch


@dataclass
class FlowMatchEulerDiscreteSchedulerOutput:
    prev_sample: torch.FloatTensor


class FlowMatchEulerDiscreteScheduler:
    order = 1

    def __init__(self, num_train_timesteps: int = 1000, shift: float = 1.0):
        self.num_train_timesteps = num_train_timesteps
        self._shift = shift
        self._step_index = None
        self._begin_index = None
        self.timesteps = None
        self.sigmas = None

    @property
    def step_index(self):
        """The index counter for current timestep. It will increase 1 after each scheduler step."""
        return self._step_index

    @property
    def begin_index(self):
        """The index for the first timestep. It should be set from pipeline with `set_begin_index` method."""
        return self._begin_index

    def set_begin_index(self, begin_index: int = 0):
        self._begin_index = begin_index

    def set_timesteps(self, num_inference_steps: int, device: Union[str, torch.device] = None):
        timesteps = np.linspace(self.num_train_timesteps, 1, num_inference_steps, dtype=np.float32)
        sigmas = timesteps / self.num_train_timesteps
        sigmas = self._shift * sigmas / (1 + (self._shift - 1) * sigmas)
        sigmas = torch.from_numpy(sigmas).to(dtype=torch.float32, device=device)
        timesteps = sigmas * self.num_train_timesteps
        self.timesteps = timesteps.to(device=device)
        self.sigmas = torch.cat([sigmas, torch.zeros(1, device=sigmas.device)])
        self._step_index = None
        self._begin_index = None

    def index_for_timestep(self, timestep, schedule_timesteps=None):
        if schedule_timesteps is None:
            schedule_timesteps = self.timesteps

        indices = (schedule_timesteps == timestep).nonzero()  # want: D

        # The sigma index that is taken for the **very** first `step`
        # is always the second index (or the last index if there is only 1)
        # This way we can ensure we don't accidentally skip a sigma in
        # case we start in the middle of the denoising schedule (e.g. for image-to-image)
        pos = 1 if len(indices) > 1 else 0

        return indices[pos].item()  # want: D

    def _init_step_index(self, timestep):
        if self.begin_index is None:
            if isinstance(timestep, torch.Tensor):
                timestep = timestep.to(self.timesteps.device)
            self._step_index = self.index_for_timestep(timestep)
        else:
            self._step_index = self._begin_index

    def step(
        self,
        model_output: torch.FloatTensor,
        timestep: Union[float, torch.FloatTensor],
        sample: torch.FloatTensor,
        generator: Optional[torch.Generator] = None,
        return_dict: bool = True,
    ):
        if self.step_index is None:
            self._init_step_index(timestep)

        # Upcast to avoid precision issues when computing prev_sample
        sample = sample.to(torch.float32)

        sigma_idx = self.step_index
        sigma = self.sigmas[sigma_idx]
        sigma_next = self.sigmas[sigma_idx + 1]
        dt = sigma_next - sigma

        prev_sample = sample + dt * model_output

        # upon completion increase step index by one
        self._step_index += 1
        prev_sample = prev_sample.to(model_output.dtype)

        if not return_dict:
            return (prev_sample,)

        return FlowMatchEulerDiscreteSchedulerOutput(prev_sample=prev_sample)


class FluxPipeline:
    def __init__(self, transformer, scheduler, set_begin_index_before_loop=False):
        self.transformer = transformer
        self.scheduler = scheduler
        self.set_begin_index_before_loop = set_begin_index_before_loop

    @torch.no_grad()
    def __call__(self, latents, num_inference_steps=4, device="cpu"):
        self.scheduler.set_timesteps(num_inference_steps, device=device)
        timesteps = self.scheduler.timesteps

        # 6. Denoising loop
        if self.set_begin_index_before_loop:
            self.scheduler.set_begin_index(0)  # the fix (#11696)
        for i, t in enumerate(timesteps):
            # broadcast to batch dimension in a way that's compatible with ONNX/Core ML
            timestep = t.expand(latents.shape[0]).to(latents.dtype)
            noise_pred = self.transformer(latents) * (timestep / 1000)[:, None, None]
            latents_dtype = latents.dtype
            latents = self.scheduler.step(noise_pred, t, latents, return_dict=False)[0]
            if latents.dtype != latents_dtype:
                latents = latents.to(latents_dtype)
        return latents


if __name__ == "__main__":
    torch.manual_seed(0)
    transformer = torch.nn.Linear(8, 8)
    latents = torch.randn(2, 16, 8)
    out_a = FluxPipeline(transformer, FlowMatchEulerDiscreteScheduler())(latents.clone())
    out_b = FluxPipeline(transformer, FlowMatchEulerDiscreteScheduler(), set_begin_index_before_loop=True)(latents.clone())
    print(torch.allclose(out_a, out_b))
