# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/373 — UNet2DModel.forward broadcast the scalar timestep to the batch with `timesteps = timesteps * torch.ones(sample.shape[0], ...)`, allocating a ones tensor and a multiplied copy on every denoising call. As suggested by @bes-dev, the PR switched to `timesteps.expand(sample.shape[0])`, which only plays with strides and takes no memory.
import math

import torch
import torch.nn as nn


def get_timestep_embedding(timesteps, embedding_dim, flip_sin_to_cos=False, downscale_freq_shift=1, scale=1, max_period=10000):
    assert len(timesteps.shape) == 1, "Timesteps should be a 1d-array"
    half_dim = embedding_dim // 2
    exponent = -math.log(max_period) * torch.arange(start=0, end=half_dim, dtype=torch.float32, device=timesteps.device)
    exponent = exponent / (half_dim - downscale_freq_shift)
    emb = torch.exp(exponent)
    emb = timesteps[:, None].float() * emb[None, :]
    emb = scale * emb
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)
    if flip_sin_to_cos:
        emb = torch.cat([emb[:, half_dim:], emb[:, :half_dim]], dim=-1)
    return emb


class Timesteps(nn.Module):
    def __init__(self, num_channels, flip_sin_to_cos, downscale_freq_shift):
        super().__init__()
        self.num_channels = num_channels
        self.flip_sin_to_cos = flip_sin_to_cos
        self.downscale_freq_shift = downscale_freq_shift

    def forward(self, timesteps):
        return get_timestep_embedding(timesteps, self.num_channels, self.flip_sin_to_cos, self.downscale_freq_shift)


class UNet2DModel(nn.Module):
    def __init__(self, in_channels=3, block_out_channels=16, time_embedding_dim=32):
        super().__init__()
        self.time_proj = Timesteps(block_out_channels, flip_sin_to_cos=True, downscale_freq_shift=0)
        self.time_embedding = nn.Sequential(nn.Linear(block_out_channels, time_embedding_dim), nn.SiLU(), nn.Linear(time_embedding_dim, block_out_channels))
        self.conv_in = nn.Conv2d(in_channels, block_out_channels, kernel_size=3, padding=1)
        self.conv_out = nn.Conv2d(block_out_channels, in_channels, kernel_size=3, padding=1)

    def forward(self, sample: torch.Tensor, timestep):
        # 1. time
        timesteps = timestep
        if not torch.is_tensor(timesteps):
            timesteps = torch.tensor([timesteps], dtype=torch.long, device=sample.device)
        elif torch.is_tensor(timesteps) and len(timesteps.shape) == 0:
            timesteps = timesteps[None].to(sample.device)

        # broadcast to batch dimension
        timesteps = timesteps * torch.ones(sample.shape[0], dtype=timesteps.dtype, device=timesteps.device)  # want: C

        t_emb = self.time_proj(timesteps)
        emb = self.time_embedding(t_emb)

        # 2. pre-process
        sample = self.conv_in(sample)
        sample = sample + emb[:, :, None, None]

        # 3. post-process
        return self.conv_out(torch.nn.functional.silu(sample))


class UNet2DModelFixed(UNet2DModel):
    def forward(self, sample: torch.Tensor, timestep):
        # 1. time
        timesteps = timestep
        if not torch.is_tensor(timesteps):
            timesteps = torch.tensor([timesteps], dtype=torch.long, device=sample.device)
        elif torch.is_tensor(timesteps) and len(timesteps.shape) == 0:
            timesteps = timesteps[None].to(sample.device)

        # broadcast to batch dimension
        timesteps = timesteps.expand(sample.shape[0])

        t_emb = self.time_proj(timesteps)
        emb = self.time_embedding(t_emb)

        # 2. pre-process
        sample = self.conv_in(sample)
        sample = sample + emb[:, :, None, None]

        # 3. post-process
        return self.conv_out(torch.nn.functional.silu(sample))


if __name__ == "__main__":
    torch.manual_seed(0)
    old, new = UNet2DModel().eval(), UNet2DModelFixed().eval()
    new.load_state_dict(old.state_dict())
    sample = torch.randn(4, 3, 8, 8)
    t = torch.tensor([500])
    seen = {}
    for name, mod in (("old", old), ("new", new)):
        orig = mod.time_proj.forward
        mod.time_proj.forward = lambda ts, _o=orig, _n=name: (seen.__setitem__(_n, ts), _o(ts))[1]
    with torch.no_grad():
        a, b = old(sample, t), new(sample, t)
    assert torch.allclose(a, b, atol=1e-6)
    assert seen["old"].data_ptr() != t.data_ptr()  # new tensor materialized per call
    assert seen["new"].data_ptr() == t.data_ptr() and seen["new"].stride() == (0,)
    print("ok")
