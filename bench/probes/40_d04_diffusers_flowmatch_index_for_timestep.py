# source: huggingface/diffusers https://github.com/huggingface/diffusers/issues/9417 — `FlowMatchEulerDiscreteScheduler.scale_noise`, used to noise latents in every training step, mapped each timestep of the batch to a sigma index with `[self.index_for_timestep(t, schedule_timesteps) for t in timestep]`, and `index_for_timestep` runs `(schedule_timesteps == timestep).nonzero()` and `.item()`, so each sample costs device-to-host syncs; profiling showed it slowing training. The issue proposes replacing the per-sample loop with one batched lookup that stays on the device; the fixed version below does that with a broadcast compare and argmax.
import torch


class FlowMatchEulerDiscreteScheduler:
    def __init__(self, num_train_timesteps: int = 1000, shift: float = 1.0):
        timesteps = torch.linspace(1, num_train_timesteps, num_train_timesteps).flip(0)
        sigmas = timesteps / num_train_timesteps
        sigmas = shift * sigmas / (1 + (shift - 1) * sigmas)
        self.timesteps = sigmas * num_train_timesteps
        self.sigmas = torch.cat([sigmas, torch.zeros(1)])
        self._step_index = None
        self._begin_index = None

    @property
    def step_index(self):
        return self._step_index

    @property
    def begin_index(self):
        return self._begin_index

    def index_for_timestep(self, timestep, schedule_timesteps=None):
        if schedule_timesteps is None:
            schedule_timesteps = self.timesteps

        indices = (schedule_timesteps == timestep).nonzero()  # want: D

        # The sigma index that is taken for the **very** first `step`
        # is always the second index (or the last index if there is only 1)
        pos = 1 if len(indices) > 1 else 0

        return indices[pos].item()  # want: D

    def scale_noise(self, sample, timestep, noise=None):
        sigmas = self.sigmas.to(device=sample.device, dtype=sample.dtype)
        schedule_timesteps = self.timesteps.to(sample.device)
        timestep = timestep.to(sample.device)

        if self.begin_index is None:
            step_indices = [self.index_for_timestep(t, schedule_timesteps) for t in timestep]  # maybe: D (one sync per sample of the batch)
        elif self.step_index is not None:
            step_indices = [self.step_index] * timestep.shape[0]
        else:
            step_indices = [self.begin_index] * timestep.shape[0]

        sigma = sigmas[step_indices].flatten()
        while len(sigma.shape) < len(sample.shape):
            sigma = sigma.unsqueeze(-1)

        sample = sigma * noise + (1.0 - sigma) * sample
        return sample


class FlowMatchEulerDiscreteSchedulerFixed(FlowMatchEulerDiscreteScheduler):
    def index_for_timestep(self, timestep, schedule_timesteps=None):
        if schedule_timesteps is None:
            schedule_timesteps = self.timesteps
        timestep = timestep.reshape(-1)
        matches = schedule_timesteps[None, :] == timestep[:, None]
        first = matches.int().argmax(dim=1)
        second = (matches & (matches.cumsum(dim=1) == 2)).int().argmax(dim=1)
        return torch.where(matches.sum(dim=1) > 1, second, first)

    def scale_noise(self, sample, timestep, noise=None):
        sigmas = self.sigmas.to(device=sample.device, dtype=sample.dtype)
        schedule_timesteps = self.timesteps.to(sample.device)
        timestep = timestep.to(sample.device)

        if self.begin_index is None:
            step_indices = self.index_for_timestep(timestep, schedule_timesteps)
        elif self.step_index is not None:
            step_indices = [self.step_index] * timestep.shape[0]
        else:
            step_indices = [self.begin_index] * timestep.shape[0]

        sigma = sigmas[step_indices].flatten()
        while len(sigma.shape) < len(sample.shape):
            sigma = sigma.unsqueeze(-1)

        sample = sigma * noise + (1.0 - sigma) * sample
        return sample


if __name__ == "__main__":
    torch.manual_seed(0)
    sched, sched_fixed = FlowMatchEulerDiscreteScheduler(shift=3.0), FlowMatchEulerDiscreteSchedulerFixed(shift=3.0)
    latents = torch.randn(4, 4, 8, 8)
    noise = torch.randn_like(latents)
    timesteps = sched.timesteps[torch.tensor([0, 17, 500, 999])]
    a = sched.scale_noise(latents, timesteps, noise)
    b = sched_fixed.scale_noise(latents, timesteps, noise)
    assert torch.equal(a, b)
    print("ok", a.flatten()[:4].tolist())
