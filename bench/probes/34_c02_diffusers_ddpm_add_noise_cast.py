# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/6704 — DDPMScheduler.add_noise converted self.alphas_cumprod with .to(device=..., dtype=...) on every call and threw the result away, so each training step paid a fresh host-to-device copy of the schedule; the fix stores the device-moved tensor back on self so later calls are no-ops.
import torch


class DDPMScheduler:
    def __init__(self, num_train_timesteps=1000, beta_start=0.0001, beta_end=0.02):
        self.num_train_timesteps = num_train_timesteps
        self.betas = torch.linspace(beta_start, beta_end, num_train_timesteps, dtype=torch.float32)
        self.alphas = 1.0 - self.betas
        self.alphas_cumprod = torch.cumprod(self.alphas, dim=0)

    def add_noise(self, original_samples, noise, timesteps):
        # Make sure alphas_cumprod and timestep have same device and dtype as original_samples
        alphas_cumprod = self.alphas_cumprod.to(device=original_samples.device, dtype=original_samples.dtype)  # want: C
        timesteps = timesteps.to(original_samples.device)

        sqrt_alpha_prod = alphas_cumprod[timesteps] ** 0.5
        sqrt_alpha_prod = sqrt_alpha_prod.flatten()
        while len(sqrt_alpha_prod.shape) < len(original_samples.shape):
            sqrt_alpha_prod = sqrt_alpha_prod.unsqueeze(-1)

        sqrt_one_minus_alpha_prod = (1 - alphas_cumprod[timesteps]) ** 0.5
        sqrt_one_minus_alpha_prod = sqrt_one_minus_alpha_prod.flatten()
        while len(sqrt_one_minus_alpha_prod.shape) < len(original_samples.shape):
            sqrt_one_minus_alpha_prod = sqrt_one_minus_alpha_prod.unsqueeze(-1)

        noisy_samples = sqrt_alpha_prod * original_samples + sqrt_one_minus_alpha_prod * noise
        return noisy_samples


class DDPMSchedulerFixed(DDPMScheduler):
    def add_noise(self, original_samples, noise, timesteps):
        # Make sure alphas_cumprod and timestep have same device and dtype as original_samples
        # Move the self.alphas_cumprod to device to avoid redundant CPU to GPU data movement
        # for the subsequent add_noise calls
        self.alphas_cumprod = self.alphas_cumprod.to(device=original_samples.device)
        alphas_cumprod = self.alphas_cumprod.to(dtype=original_samples.dtype)
        timesteps = timesteps.to(original_samples.device)

        sqrt_alpha_prod = alphas_cumprod[timesteps] ** 0.5
        sqrt_alpha_prod = sqrt_alpha_prod.flatten()
        while len(sqrt_alpha_prod.shape) < len(original_samples.shape):
            sqrt_alpha_prod = sqrt_alpha_prod.unsqueeze(-1)

        sqrt_one_minus_alpha_prod = (1 - alphas_cumprod[timesteps]) ** 0.5
        sqrt_one_minus_alpha_prod = sqrt_one_minus_alpha_prod.flatten()
        while len(sqrt_one_minus_alpha_prod.shape) < len(original_samples.shape):
            sqrt_one_minus_alpha_prod = sqrt_one_minus_alpha_prod.unsqueeze(-1)

        noisy_samples = sqrt_alpha_prod * original_samples + sqrt_one_minus_alpha_prod * noise
        return noisy_samples


def train_steps(scheduler, latents_batches):
    out = []
    for latents in latents_batches:
        noise = torch.randn_like(latents)
        timesteps = torch.randint(0, scheduler.num_train_timesteps, (latents.shape[0],), device=latents.device)
        out.append(scheduler.add_noise(latents, noise, timesteps))
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    # "meta" stands in for the accelerator: it shows where the schedule tensor lives after a step.
    meta_batches = [torch.empty(4, 4, 8, 8, device="meta") for _ in range(3)]
    buggy, fixed = DDPMScheduler(), DDPMSchedulerFixed()
    train_steps(buggy, meta_batches)
    train_steps(fixed, meta_batches)
    print("buggy schedule still on:", buggy.alphas_cumprod.device, "-> re-copied to the sample device every step")
    print("fixed schedule now on:  ", fixed.alphas_cumprod.device, "-> later steps skip the transfer")

    torch.manual_seed(1)
    cpu_batches = [torch.randn(4, 4, 8, 8) for _ in range(2)]
    torch.manual_seed(2)
    a = train_steps(DDPMScheduler(), cpu_batches)
    torch.manual_seed(2)
    b = train_steps(DDPMSchedulerFixed(), cpu_batches)
    assert all(torch.allclose(x, y) for x, y in zip(a, b))
    print("numerics identical")
