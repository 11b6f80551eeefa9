# source: lucidrains/flamingo-pytorch https://github.com/lucidrains/flamingo-pytorch/issues/10 (fix commit 10913abbc8b2ceabb2320560d7d9b85fcb85eee3) — MaskedCrossAttention.forward called `attn.masked_fill(text_without_media_mask, 0.)` without using the result, so text tokens with no preceding image still attended to media; the fix assigns it back (`attn = attn.masked_fill(...)`). (einops calls rewritten as plain torch ops.)
import torch
from torch import nn, einsum


def exists(val):
    return val is not None


class MaskedCrossAttention(nn.Module):
    def __init__(self, *, dim, dim_head=64, heads=8, only_attend_immediate_media=True):
        super().__init__()
        self.scale = dim_head ** -0.5
        self.heads = heads
        inner_dim = dim_head * heads

        self.norm = nn.LayerNorm(dim)

        self.to_q = nn.Linear(dim, inner_dim, bias=False)
        self.to_kv = nn.Linear(dim, inner_dim * 2, bias=False)
        self.to_out = nn.Linear(inner_dim, dim, bias=False)

        # whether for text to only attend to immediate preceding image, or all images
        self.only_attend_immediate_media = only_attend_immediate_media

    def forward(self, x, media, media_locations=None):
        b, t, m = media.shape[:3]
        h = self.heads

        x = self.norm(x)

        q = self.to_q(x)
        media = media.reshape(b, t * m, -1)                       # 'b t n d -> b (t n) d'

        k, v = self.to_kv(media).chunk(2, dim=-1)
        q, k, v = (z.reshape(z.shape[0], z.shape[1], h, -1).transpose(1, 2) for z in (q, k, v))  # 'b n (h d) -> b h n d'

        q = q * self.scale

        sim = einsum('... i d, ... j d -> ... i j', q, k)

        if exists(media_locations):
            text_time = media_locations.cumsum(dim=-1)  # at each boolean of True, increment the time counter (relative to media time)
            media_time = torch.arange(t, device=x.device) + 1

            # text time must equal media time if only attending to most immediate image
            # otherwise, as long as text time is greater than media time (if attending to all previous images / media)
            mask_op = torch.eq if self.only_attend_immediate_media else torch.ge

            text_to_media_mask = mask_op(text_time[:, None, :, None], media_time.repeat_interleave(m)[None, None, None, :])
            sim = sim.masked_fill(~text_to_media_mask, -torch.finfo(sim.dtype).max)

        sim = sim - sim.amax(dim=-1, keepdim=True).detach()
        attn = sim.softmax(dim=-1)

        if exists(media_locations) and self.only_attend_immediate_media:
            # any text without a preceding media needs to have attention zeroed out
            text_without_media_mask = text_time == 0
            text_without_media_mask = text_without_media_mask[:, None, :, None]   # 'b i -> b 1 i 1'
            attn.masked_fill(text_without_media_mask, 0.)  # want: B

        out = einsum('... i j, ... j d -> ... i d', attn, v)
        out = out.transpose(1, 2).reshape(b, out.shape[2], -1)  # 'b h n d -> b n (h d)'
        return self.to_out(out), attn


class MaskedCrossAttentionFixed(MaskedCrossAttention):
    def zero_text_without_media(self, attn, text_time):
        text_without_media_mask = (text_time == 0)[:, None, :, None]
        attn = attn.masked_fill(text_without_media_mask, 0.)
        return attn


if __name__ == "__main__":
    torch.manual_seed(0)
    layer = MaskedCrossAttention(dim=16, dim_head=8, heads=2)
    text = torch.randn(1, 6, 16)
    media = torch.randn(1, 2, 3, 16)                          # 2 images, 3 latents each
    media_locations = torch.tensor([[False, False, True, False, True, False]])  # tokens 0,1 precede any image
    _, attn = layer(text, media, media_locations)
    print("buggy: attention mass of tokens 0-1 (no preceding image):", attn[0, :, :2].sum().item())
    text_time = media_locations.cumsum(dim=-1)
    attn = MaskedCrossAttentionFixed(dim=16, dim_head=8, heads=2).zero_text_without_media(attn, text_time)
    print("fixed: attention mass of tokens 0-1:", attn[0, :, :2].sum().item())
