# source: Project-MONAI/MONAI PR #7763 ("Only have contigous calls after attention blocks", towards #7227) — DiffusionModelUNet forced `.contiguous()` on tensors that were already dense conv/GroupNorm/SiLU outputs: at the top of every DiffusionUNetResnetBlock.forward, on x and h before the upsampler when the batch was >= 64, on h before the middle block and before the output conv; the PR deletes those and keeps the calls only right after the attention blocks
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def zero_module(module: nn.Module) -> nn.Module:
    for p in module.parameters():
        nn.init.zeros_(p)
    return module


def get_timestep_embedding(timesteps: torch.Tensor, embedding_dim: int, max_period: int = 10000) -> torch.Tensor:
    half_dim = embedding_dim // 2
    exponent = -math.log(max_period) * torch.arange(half_dim, dtype=torch.float32, device=timesteps.device)
    freqs = torch.exp(exponent / half_dim)
    args = timesteps[:, None].float() * freqs[None, :]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class DiffusionUNetResnetBlock(nn.Module):
    def __init__(self, in_channels, temb_channels, out_channels=None, up=False, down=False, norm_num_groups=8):
        super().__init__()
        self.out_channels = out_channels or in_channels
        self.norm1 = nn.GroupNorm(norm_num_groups, in_channels, eps=1e-6)
        self.nonlinearity = nn.SiLU()
        self.conv1 = nn.Conv2d(in_channels, self.out_channels, 3, padding=1)
        self.upsample = nn.Upsample(scale_factor=2.0, mode="nearest") if up else None
        self.downsample = nn.AvgPool2d(2) if (down and not up) else None
        self.time_emb_proj = nn.Linear(temb_channels, self.out_channels)
        self.norm2 = nn.GroupNorm(norm_num_groups, self.out_channels, eps=1e-6)
        self.conv2 = zero_module(nn.Conv2d(self.out_channels, self.out_channels, 3, padding=1))
        self.skip_connection = nn.Identity() if self.out_channels == in_channels else nn.Conv2d(in_channels, self.out_channels, 1)

    def forward(self, x: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        h = x.contiguous()  # want: C
        h = self.norm1(h)
        h = self.nonlinearity(h)

        if self.upsample is not None:
            if h.shape[0] >= 64:
                x = x.contiguous()  # want: C
                h = h.contiguous()  # want: C
            x = self.upsample(x)
            h = self.upsample(h)
        elif self.downsample is not None:
            x = self.downsample(x)
            h = self.downsample(h)

        h = self.conv1(h)
        h = h + self.time_emb_proj(self.nonlinearity(emb))[:, :, None, None]
        h = self.norm2(h)
        h = self.nonlinearity(h)
        h = self.conv2(h)
        return self.skip_connection(x) + h


class SpatialTransformer(nn.Module):
    def __init__(self, in_channels, num_heads=2, norm_num_groups=8):
        super().__init__()
        self.num_heads = num_heads
        self.norm = nn.GroupNorm(norm_num_groups, in_channels, eps=1e-6)
        self.proj_in = nn.Conv2d(in_channels, in_channels, 1)
        self.to_qkv = nn.Linear(in_channels, 3 * in_channels)
        self.proj_out = zero_module(nn.Conv2d(in_channels, in_channels, 1))

    def forward(self, x: torch.Tensor, context=None) -> torch.Tensor:
        batch, channel, height, width = x.shape
        residual = x
        x = self.proj_in(self.norm(x))
        x = x.permute(0, 2, 3, 1).reshape(batch, height * width, channel)
        q, k, v = self.to_qkv(x).view(batch, height * width, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        x = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(batch, height * width, channel)
        x = x.reshape(batch, height, width, channel).permute(0, 3, 1, 2).contiguous()  # after a permute: a real relayout
        return self.proj_out(x) + residual


class AttnDownBlock(nn.Module):
    def __init__(self, in_ch, out_ch, temb_ch, add_downsample=True):
        super().__init__()
        self.resnets = nn.ModuleList([DiffusionUNetResnetBlock(in_ch, temb_ch, out_ch)])
        self.attentions = nn.ModuleList([SpatialTransformer(out_ch)])
        self.downsampler = nn.Conv2d(out_ch, out_ch, 3, stride=2, padding=1) if add_downsample else None

    def forward(self, hidden_states, temb, context=None):
        output_states = []
        for resnet, attn in zip(self.resnets, self.attentions):
            hidden_states = resnet(hidden_states, temb)
            hidden_states = attn(hidden_states).contiguous()  # maybe: C (the PR moved the calls here on purpose; this output is conv + residual, already dense)
            output_states.append(hidden_states)
        if self.downsampler is not None:
            hidden_states = self.downsampler(hidden_states)
            output_states.append(hidden_states)
        return hidden_states, output_states


class AttnMidBlock(nn.Module):
    def __init__(self, ch, temb_ch):
        super().__init__()
        self.resnet_1 = DiffusionUNetResnetBlock(ch, temb_ch)
        self.attention = SpatialTransformer(ch)
        self.resnet_2 = DiffusionUNetResnetBlock(ch, temb_ch)

    def forward(self, hidden_states, temb, context=None):
        hidden_states = self.resnet_1(hidden_states, temb)
        hidden_states = self.attention(hidden_states)
        return self.resnet_2(hidden_states, temb)


class UpBlock(nn.Module):
    def __init__(self, in_ch, prev_ch, out_ch, temb_ch, num_res_blocks=2, add_upsample=True):
        super().__init__()
        resnets = []
        for i in range(num_res_blocks):
            res_skip = in_ch if i == num_res_blocks - 1 else out_ch
            resnet_in = prev_ch if i == 0 else out_ch
            resnets.append(DiffusionUNetResnetBlock(resnet_in + res_skip, temb_ch, out_ch))
        self.resnets = nn.ModuleList(resnets)
        self.upsampler = DiffusionUNetResnetBlock(out_ch, temb_ch, out_ch, up=True) if add_upsample else None

    def forward(self, hidden_states, res_hidden_states_list, temb, context=None):
        for resnet in self.resnets:
            res_hidden_states = res_hidden_states_list[-1]
            res_hidden_states_list = res_hidden_states_list[:-1]
            hidden_states = torch.cat([hidden_states, res_hidden_states], dim=1)
            hidden_states = resnet(hidden_states, temb)
        if self.upsampler is not None:
            hidden_states = self.upsampler(hidden_states, temb)
        return hidden_states


class DiffusionModelUNet(nn.Module):
    def __init__(self, in_channels=1, out_channels=1, ch=(16, 32), temb_mult=4):
        super().__init__()
        self.block_out_channels = ch
        temb = ch[0] * temb_mult
        self.time_embed = nn.Sequential(nn.Linear(ch[0], temb), nn.SiLU(), nn.Linear(temb, temb))
        self.conv_in = nn.Conv2d(in_channels, ch[0], 3, padding=1)
        self.down_blocks = nn.ModuleList([AttnDownBlock(ch[0], ch[0], temb, True), AttnDownBlock(ch[0], ch[1], temb, False)])
        self.middle_block = AttnMidBlock(ch[1], temb)
        self.up_blocks = nn.ModuleList([UpBlock(ch[0], ch[1], ch[1], temb, 2, True), UpBlock(ch[0], ch[1], ch[0], temb, 2, False)])
        self.out = nn.Sequential(nn.GroupNorm(8, ch[0], eps=1e-6), nn.SiLU(), zero_module(nn.Conv2d(ch[0], out_channels, 3, padding=1)))

    def forward(self, x, timesteps, context=None):
        t_emb = get_timestep_embedding(timesteps, self.block_out_channels[0]).to(dtype=x.dtype)
        emb = self.time_embed(t_emb)
        h = self.conv_in(x)
        down_block_res_samples = [h]
        for downsample_block in self.down_blocks:
            h, res_samples = downsample_block(hidden_states=h, temb=emb, context=context)
            down_block_res_samples.extend(res_samples)

        h = self.middle_block(hidden_states=h.contiguous(), temb=emb, context=context)  # want: C

        for upsample_block in self.up_blocks:
            res_samples = down_block_res_samples[-len(upsample_block.resnets):]
            down_block_res_samples = down_block_res_samples[: -len(upsample_block.resnets)]
            h = upsample_block(hidden_states=h, res_hidden_states_list=res_samples, temb=emb, context=context)

        output: torch.Tensor = self.out(h.contiguous())  # want: C
        return output


if __name__ == "__main__":
    torch.manual_seed(0)
    unet = DiffusionModelUNet().eval()
    x = torch.randn(2, 1, 16, 16)
    t = torch.randint(0, 1000, (2,))
    with torch.no_grad():
        y = unet(x, t)
        assert y.shape == x.shape
        h = unet.conv_in(x)
        assert h.is_contiguous() and h.contiguous().data_ptr() == h.data_ptr()  # the removed calls were no-ops on dense input
        # a channels_last activation is where a .contiguous() would really copy
        hc = h.to(memory_format=torch.channels_last)
        assert not hc.is_contiguous()
    print("ok", tuple(y.shape))
