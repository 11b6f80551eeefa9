# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/10642 — The Lumina2 denoising loop decided CFG truncation with `1 - t.item() / num_train_timesteps < cfg_trunc_ratio` on the CUDA timestep every step (profiled at ~0.27-0.30 s extra per step from the GPU->CPU stream sync); the fix derives the decision from the host-side loop index, `(i + 1) / num_inference_steps > cfg_trunc_ratio`, and keeps the timestep arithmetic on device.
import torch
import torch.nn as nn


class FlowMatchEulerDiscreteScheduler:
    def __init__(self, num_train_timesteps=1000):
        self.config = type("Config", (), {"num_train_timesteps": num_train_timesteps})()
        self._step_index = None

    def set_timesteps(self, num_inference_steps, device):
        sigmas = torch.linspace(1.0, 1.0 / num_inference_steps, num_inference_steps)
        self.timesteps = (sigmas * self.config.num_train_timesteps).to(device)
        self.sigmas = torch.cat([sigmas, torch.zeros(1)]).to(device)
        self._step_index = 0

    def step(self, model_output, timestep, sample, return_dict=False):
        sigma = self.sigmas[self._step_index]
        sigma_next = self.sigmas[self._step_index + 1]
        prev_sample = sample + (sigma_next - sigma) * model_output
        self._step_index += 1
        return (prev_sample,)


class TinyTransformer(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.proj = nn.Conv2d(channels, channels, 1)
        self.t_embed = nn.Linear(1, channels)

    def forward(self, hidden_states, timestep, encoder_hidden_states):
        emb = self.t_embed(timestep[:, None])[:, :, None, None]
        return self.proj(hidden_states) + emb + encoder_hidden_states.mean() * 0.0


class Lumina2Pipeline:
    def __init__(self, transformer, scheduler):
        self.transformer = transformer
        self.scheduler = scheduler

    @torch.no_grad()
    def denoise(self, latents, prompt_embeds, negative_prompt_embeds, num_inference_steps=8,
                guidance_scale=4.0, cfg_trunc_ratio=0.25):
        do_classifier_free_guidance = guidance_scale > 1.0
        self.scheduler.set_timesteps(num_inference_steps, device=latents.device)
        timesteps = self.scheduler.timesteps
        for i, t in enumerate(timesteps):
            # expand the latents if we are doing classifier free guidance
            do_cfg = do_classifier_free_guidance and 1 - t.item() / self.scheduler.config.num_train_timesteps < cfg_trunc_ratio  # want: D
            latent_model_input = torch.cat([latents] * 2) if do_cfg else latents
            embeds = torch.cat([prompt_embeds, negative_prompt_embeds]) if do_cfg else prompt_embeds
            current_timestep = 1 - t / self.scheduler.config.num_train_timesteps
            current_timestep = current_timestep.expand(latent_model_input.shape[0])
            noise_pred = self.transformer(latent_model_input, current_timestep, embeds)
            if do_cfg:
                noise_pred_cond, noise_pred_uncond = noise_pred.chunk(2)
                noise_pred = noise_pred_uncond + guidance_scale * (noise_pred_cond - noise_pred_uncond)
            noise_pred = -noise_pred
            latents = self.scheduler.step(noise_pred, t, latents, return_dict=False)[0]
        return latents


class Lumina2PipelineFixed(Lumina2Pipeline):
    @torch.no_grad()
    def denoise(self, latents, prompt_embeds, negative_prompt_embeds, num_inference_steps=8,
                guidance_scale=4.0, cfg_trunc_ratio=0.25):
        do_classifier_free_guidance = guidance_scale > 1.0
        self.scheduler.set_timesteps(num_inference_steps, device=latents.device)
        timesteps = self.scheduler.timesteps
        for i, t in enumerate(timesteps):
            # compute whether apply classifier-free truncation on this timestep
            do_classifier_free_truncation = (i + 1) / num_inference_steps > cfg_trunc_ratio
            do_cfg = do_classifier_free_guidance and not do_classifier_free_truncation
            latent_model_input = torch.cat([latents] * 2) if do_cfg else latents
            embeds = torch.cat([prompt_embeds, negative_prompt_embeds]) if do_cfg else prompt_embeds
            current_timestep = 1 - t / self.scheduler.config.num_train_timesteps
            current_timestep = current_timestep.expand(latent_model_input.shape[0])
            noise_pred = self.transformer(latent_model_input, current_timestep, embeds)
            if do_cfg:
                noise_pred_cond, noise_pred_uncond = noise_pred.chunk(2)
                noise_pred = noise_pred_uncond + guidance_scale * (noise_pred_cond - noise_pred_uncond)
            noise_pred = -noise_pred
            latents = self.scheduler.step(noise_pred, t, latents, return_dict=False)[0]
        return latents


if __name__ == "__main__":
    torch.manual_seed(0)
    transformer = TinyTransformer()
    latents = torch.randn(1, 4, 8, 8)
    pe, npe = torch.randn(1, 6, 4), torch.randn(1, 6, 4)
    for cls in (Lumina2Pipeline, Lumina2PipelineFixed):
        out = cls(transformer, FlowMatchEulerDiscreteScheduler()).denoise(latents.clone(), pe, npe)
        print(cls.__name__, tuple(out.shape))
