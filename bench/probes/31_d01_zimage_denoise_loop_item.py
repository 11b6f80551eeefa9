# source: vllm-project/vllm-omni https://github.com/vllm-project/vllm-omni/pull/1105 — the Z-Image denoising loop read `timestep[0].item()` on every step for CFG truncation, the CFG renormalisation branched with `if new_pos_norm > max_new_norm:` on two device norms, and the transformer padded with boolean-mask assignment `x[mask] = pad_token`; each forced a cudaStreamSynchronize per step. The fix precomputes the normalised timesteps as a host list before the loop, turns the renorm branch into torch.where, and pads with torch.where on the expanded mask.
import numpy as np
import torch
import torch.nn as nn


class ZImageTransformer(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.x_pad_token = nn.Parameter(torch.zeros(dim))
        self.proj = nn.Linear(dim, dim)
        self.t_embedder = nn.Linear(1, dim)

    def forward(self, x, t, x_pad_mask):
        x = x.clone()
        x[x_pad_mask] = self.x_pad_token  # want: D
        return self.proj(x) + self.t_embedder(t[:, None])[:, None, :]


class ZImageTransformerFixed(ZImageTransformer):
    def forward(self, x, t, x_pad_mask):
        mask_exp = x_pad_mask.unsqueeze(-1).expand_as(x)
        x = torch.where(mask_exp, self.x_pad_token.expand_as(x), x)
        return self.proj(x) + self.t_embedder(t[:, None])[:, None, :]


class FlowMatchEulerScheduler:
    def __init__(self, num_inference_steps, device):
        sigmas = np.linspace(1.0, 1.0 / num_inference_steps, num_inference_steps)
        self.timesteps_np = sigmas * 1000.0
        self.timesteps = torch.from_numpy(self.timesteps_np).float().to(device)
        self.sigmas = torch.from_numpy(np.append(sigmas, 0.0)).float().to(device)

    def step(self, model_output, i, sample):
        return sample + (self.sigmas[i + 1] - self.sigmas[i]) * model_output


class ZImagePipeline:
    def __init__(self, transformer, scheduler, guidance_scale=4.0, cfg_truncation=0.5, cfg_normalization=1.0):
        self.transformer = transformer
        self.scheduler = scheduler
        self.guidance_scale = guidance_scale
        self._cfg_truncation = cfg_truncation
        self._cfg_normalization = cfg_normalization

    @property
    def do_classifier_free_guidance(self):
        return self.guidance_scale > 1

    @torch.no_grad()
    def __call__(self, latents, pad_mask):
        for i, t in enumerate(self.scheduler.timesteps):
            timestep = t.expand(latents.shape[0])
            timestep = (1000 - timestep) / 1000
            t_norm = timestep[0].item()  # want: D
            current_guidance_scale = self.guidance_scale
            if self.do_classifier_free_guidance and self._cfg_truncation is not None and float(self._cfg_truncation) <= 1:
                if t_norm > self._cfg_truncation:
                    current_guidance_scale = 0.0
            apply_cfg = self.do_classifier_free_guidance and current_guidance_scale > 0
            if apply_cfg:
                out = self.transformer(latents.repeat(2, 1, 1), timestep.repeat(2), pad_mask.repeat(2, 1))
                pos_out, neg_out = out.chunk(2)
                pred = pos_out + current_guidance_scale * (pos_out - neg_out)
                if self._cfg_normalization and float(self._cfg_normalization) > 0.0:
                    ori_pos_norm = torch.linalg.vector_norm(pos_out)
                    new_pos_norm = torch.linalg.vector_norm(pred)
                    max_new_norm = ori_pos_norm * float(self._cfg_normalization)
                    if new_pos_norm > max_new_norm:  # want: D
                        pred = pred * (max_new_norm / new_pos_norm)
            else:
                pred = self.transformer(latents, timestep, pad_mask)
            latents = self.scheduler.step(-pred, i, latents)
        return latents


class ZImagePipelineFixed(ZImagePipeline):
    @torch.no_grad()
    def __call__(self, latents, pad_mask):
        # normalised timesteps come from the scheduler's host copy, once, before the loop
        t_norms = [(1000.0 - float(t)) / 1000.0 for t in self.scheduler.timesteps_np]
        for i, t in enumerate(self.scheduler.timesteps):
            timestep = t.expand(latents.shape[0])
            timestep = (1000 - timestep) / 1000
            t_norm = t_norms[i]
            current_guidance_scale = self.guidance_scale
            if self.do_classifier_free_guidance and self._cfg_truncation is not None and float(self._cfg_truncation) <= 1:
                if t_norm > self._cfg_truncation:
                    current_guidance_scale = 0.0
            apply_cfg = self.do_classifier_free_guidance and current_guidance_scale > 0
            if apply_cfg:
                out = self.transformer(latents.repeat(2, 1, 1), timestep.repeat(2), pad_mask.repeat(2, 1))
                pos_out, neg_out = out.chunk(2)
                pred = pos_out + current_guidance_scale * (pos_out - neg_out)
                if self._cfg_normalization and float(self._cfg_normalization) > 0.0:
                    ori_pos_norm = torch.linalg.vector_norm(pos_out)
                    new_pos_norm = torch.linalg.vector_norm(pred)
                    max_new_norm = ori_pos_norm * float(self._cfg_normalization)
                    scale = torch.where(new_pos_norm > max_new_norm, max_new_norm / new_pos_norm,
                                        torch.ones_like(new_pos_norm))
                    pred = pred * scale
            else:
                pred = self.transformer(latents, timestep, pad_mask)
            latents = self.scheduler.step(-pred, i, latents)
        return latents


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cpu"
    bug_tr = ZImageTransformer()
    fix_tr = ZImageTransformerFixed()
    fix_tr.load_state_dict(bug_tr.state_dict())
    latents = torch.randn(2, 6, 8)
    pad_mask = torch.zeros(2, 6, dtype=torch.bool)
    pad_mask[:, 4:] = True
    out_bug = ZImagePipeline(bug_tr, FlowMatchEulerScheduler(6, device))(latents, pad_mask)
    out_fix = ZImagePipelineFixed(fix_tr, FlowMatchEulerScheduler(6, device))(latents, pad_mask)
    print("max abs diff:", (out_bug - out_fix).abs().max().item())
    assert torch.allclose(out_bug, out_fix, atol=1e-5)
