# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/12072 — QwenImagePipeline's denoising loop passed `txt_seq_lens=prompt_embeds_mask.sum(dim=1).tolist()` (and the negative-prompt twin) to the transformer on every step, one D2H sync per call; the fix computes both lists once before the loop and passes the cached lists.
import torch
import torch.nn as nn


class QwenEmbedRope(nn.Module):
    def __init__(self, theta=10000, axes_dim=16):
        super().__init__()
        self.theta = theta
        self.axes_dim = axes_dim

    def forward(self, video_fhw, txt_seq_lens, device):
        frame, height, width = video_fhw[0]
        max_vid_index = max(height, width)
        max_len = max(txt_seq_lens)
        pos = torch.arange(max_vid_index + max_len, device=device, dtype=torch.float32)
        freqs = 1.0 / (self.theta ** (torch.arange(0, self.axes_dim, 2, device=device).float() / self.axes_dim))
        txt_freqs = torch.outer(pos[max_vid_index:max_vid_index + max_len], freqs)
        img_freqs = torch.outer(pos[: frame * height * width], freqs) if frame * height * width <= pos.numel() else None
        return img_freqs, txt_freqs


class QwenImageTransformer2DModel(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.pos_embed = QwenEmbedRope(axes_dim=dim)
        self.img_in = nn.Linear(dim, dim)
        self.txt_in = nn.Linear(dim, dim)

    def forward(self, hidden_states, timestep, encoder_hidden_states_mask, encoder_hidden_states, img_shapes,
                txt_seq_lens=None, attention_kwargs=None, return_dict=True):
        hidden_states = self.img_in(hidden_states)
        encoder_hidden_states = self.txt_in(encoder_hidden_states) * encoder_hidden_states_mask[..., None]
        image_rotary_emb = self.pos_embed(img_shapes, txt_seq_lens, device=hidden_states.device)
        txt_freqs = image_rotary_emb[1]
        ctx = (encoder_hidden_states[:, : txt_freqs.shape[0]] * txt_freqs.cos().mean()).mean(1, keepdim=True)
        out = hidden_states * timestep[:, None, None] + ctx
        return (out,)


class EulerScheduler:
    order = 1

    def set_timesteps(self, n, device=None):
        self.timesteps = torch.linspace(1000, 1, n, device=device)
        self.sigmas = torch.cat([self.timesteps / 1000, torch.zeros(1, device=device)])
        self._step_index = None

    def set_begin_index(self, begin_index=0):
        self._step_index = begin_index

    def step(self, model_output, timestep, sample, return_dict=True):
        dt = self.sigmas[self._step_index + 1] - self.sigmas[self._step_index]
        self._step_index += 1
        return (sample + dt * model_output,)


class QwenImagePipeline:
    def __init__(self, transformer, scheduler):
        self.transformer = transformer
        self.scheduler = scheduler
        self.attention_kwargs = None

    @torch.no_grad()
    def __call__(self, prompt_embeds, prompt_embeds_mask, negative_prompt_embeds, negative_prompt_embeds_mask,
                 latents, img_shapes, num_inference_steps=4, true_cfg_scale=4.0):
        device = latents.device
        do_true_cfg = true_cfg_scale > 1 and negative_prompt_embeds is not None
        self.scheduler.set_timesteps(num_inference_steps, device=device)
        timesteps = self.scheduler.timesteps
        if self.attention_kwargs is None:
            self._attention_kwargs = {}

        # 6. Denoising loop
        self.scheduler.set_begin_index(0)
        for i, t in enumerate(timesteps):
            timestep = t.expand(latents.shape[0]).to(latents.dtype)
            noise_pred = self.transformer(
                hidden_states=latents,
                timestep=timestep / 1000,
                encoder_hidden_states_mask=prompt_embeds_mask,
                encoder_hidden_states=prompt_embeds,
                img_shapes=img_shapes,
                txt_seq_lens=prompt_embeds_mask.sum(dim=1).tolist(),  # want: D
                attention_kwargs=self.attention_kwargs,
                return_dict=False,
            )[0]

            if do_true_cfg:
                neg_noise_pred = self.transformer(
                    hidden_states=latents,
                    timestep=timestep / 1000,
                    encoder_hidden_states_mask=negative_prompt_embeds_mask,
                    encoder_hidden_states=negative_prompt_embeds,
                    img_shapes=img_shapes,
                    txt_seq_lens=negative_prompt_embeds_mask.sum(dim=1).tolist(),  # want: D
                    attention_kwargs=self.attention_kwargs,
                    return_dict=False,
                )[0]
                comb_pred = neg_noise_pred + true_cfg_scale * (noise_pred - neg_noise_pred)

                cond_norm = torch.norm(noise_pred, dim=-1, keepdim=True)
                noise_norm = torch.norm(comb_pred, dim=-1, keepdim=True)
                noise_pred = comb_pred * (cond_norm / noise_norm)

            latents = self.scheduler.step(noise_pred, t, latents, return_dict=False)[0]
        return latents


class QwenImagePipelineFixed(QwenImagePipeline):
    @torch.no_grad()
    def __call__(self, prompt_embeds, prompt_embeds_mask, negative_prompt_embeds, negative_prompt_embeds_mask,
                 latents, img_shapes, num_inference_steps=4, true_cfg_scale=4.0):
        device = latents.device
        do_true_cfg = true_cfg_scale > 1 and negative_prompt_embeds is not None
        self.scheduler.set_timesteps(num_inference_steps, device=device)
        timesteps = self.scheduler.timesteps
        if self.attention_kwargs is None:
            self._attention_kwargs = {}

        txt_seq_lens = prompt_embeds_mask.sum(dim=1).tolist() if prompt_embeds_mask is not None else None  # maybe: D (one sync per call that the fix deliberately keeps, hoisted out of the loop)
        negative_txt_seq_lens = (
            negative_prompt_embeds_mask.sum(dim=1).tolist() if negative_prompt_embeds_mask is not None else None  # maybe: D (kept, hoisted)
        )

        # 6. Denoising loop
        self.scheduler.set_begin_index(0)
        for i, t in enumerate(timesteps):
            timestep = t.expand(latents.shape[0]).to(latents.dtype)
            noise_pred = self.transformer(
                hidden_states=latents,
                timestep=timestep / 1000,
                encoder_hidden_states_mask=prompt_embeds_mask,
                encoder_hidden_states=prompt_embeds,
                img_shapes=img_shapes,
                txt_seq_lens=txt_seq_lens,
                attention_kwargs=self.attention_kwargs,
                return_dict=False,
            )[0]
            if do_true_cfg:
                neg_noise_pred = self.transformer(
                    hidden_states=latents,
                    timestep=timestep / 1000,
                    encoder_hidden_states_mask=negative_prompt_embeds_mask,
                    encoder_hidden_states=negative_prompt_embeds,
                    img_shapes=img_shapes,
                    txt_seq_lens=negative_txt_seq_lens,
                    attention_kwargs=self.attention_kwargs,
                    return_dict=False,
                )[0]
                comb_pred = neg_noise_pred + true_cfg_scale * (noise_pred - neg_noise_pred)
                cond_norm = torch.norm(noise_pred, dim=-1, keepdim=True)
                noise_norm = torch.norm(comb_pred, dim=-1, keepdim=True)
                noise_pred = comb_pred * (cond_norm / noise_norm)
            latents = self.scheduler.step(noise_pred, t, latents, return_dict=False)[0]
        return latents


if __name__ == "__main__":
    torch.manual_seed(0)
    tr = QwenImageTransformer2DModel()
    pe, ne = torch.randn(2, 10, 16), torch.randn(2, 10, 16)
    pm = torch.tensor([[1] * 7 + [0] * 3, [1] * 10], dtype=torch.long)
    nm = torch.tensor([[1] * 4 + [0] * 6, [1] * 5 + [0] * 5], dtype=torch.long)
    lat = torch.randn(2, 16, 16)
    shapes = [(1, 4, 4)]
    a = QwenImagePipeline(tr, EulerScheduler())(pe, pm, ne, nm, lat.clone(), shapes)
    b = QwenImagePipelineFixed(tr, EulerScheduler())(pe, pm, ne, nm, lat.clone(), shapes)
    print(torch.allclose(a, b))
