import torch


class Pipeline:
    def __init__(self, unet, scheduler, vae):
        self.unet = unet
        self.scheduler = scheduler
        self.vae = vae

    @torch.no_grad()
    def __call__(self, latents, text_emb, steps=50):
        self.scheduler.set_timesteps(steps)
        for t in self.scheduler.timesteps:
            noise = self.unet(latents, t, encoder_hidden_states=text_emb).sample
            latents = self.scheduler.step(noise, t, latents).prev_sample
            if torch.isnan(latents).any():  # want: D
                raise RuntimeError("nan")
        return self.vae.decode(latents).sample
