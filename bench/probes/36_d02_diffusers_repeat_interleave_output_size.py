# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/11030 — Attention.prepare_attention_mask and the DC-AE up-block shortcut called `repeat_interleave(repeats, dim=...)` without `output_size`, so ATen builds a device repeats tensor and reads `cumsum[-1].item()` to size the result: a stream sync on every attention call / decoder block; the fix passes `output_size=x.shape[dim] * repeats`, which the host already knows.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, query_dim: int = 16, heads: int = 4):
        super().__init__()
        self.heads = heads
        self.to_q = nn.Linear(query_dim, query_dim)

    def prepare_attention_mask(self, attention_mask, target_length, batch_size, out_dim=3):
        head_size = self.heads
        if attention_mask is None:
            return attention_mask
        current_length: int = attention_mask.shape[-1]
        if current_length != target_length:
            attention_mask = F.pad(attention_mask, (0, target_length), value=0.0)
        if out_dim == 3:
            if attention_mask.shape[0] < batch_size * head_size:
                attention_mask = attention_mask.repeat_interleave(head_size, dim=0)  # want: D
        elif out_dim == 4:
            attention_mask = attention_mask.unsqueeze(1)
            attention_mask = attention_mask.repeat_interleave(head_size, dim=1)  # want: D
        return attention_mask


class AttentionFixed(Attention):
    def prepare_attention_mask(self, attention_mask, target_length, batch_size, out_dim=3):
        head_size = self.heads
        if attention_mask is None:
            return attention_mask
        current_length: int = attention_mask.shape[-1]
        if current_length != target_length:
            attention_mask = F.pad(attention_mask, (0, target_length), value=0.0)
        if out_dim == 3:
            if attention_mask.shape[0] < batch_size * head_size:
                attention_mask = attention_mask.repeat_interleave(
                    head_size, dim=0, output_size=attention_mask.shape[0] * head_size
                )
        elif out_dim == 4:
            attention_mask = attention_mask.unsqueeze(1)
            attention_mask = attention_mask.repeat_interleave(
                head_size, dim=1, output_size=attention_mask.shape[1] * head_size
            )
        return attention_mask


class DCUpBlock2d(nn.Module):
    def __init__(self, in_channels: int = 8, out_channels: int = 4, factor: int = 2):
        super().__init__()
        self.factor = factor
        self.repeats = out_channels * factor**2 // in_channels
        self.conv = nn.Conv2d(in_channels, out_channels * factor**2, 3, padding=1)

    def forward(self, hidden_states):
        x = F.pixel_shuffle(self.conv(hidden_states), self.factor)
        y = hidden_states.repeat_interleave(self.repeats, dim=1)  # want: D
        return x + F.pixel_shuffle(y, self.factor)


class DCUpBlock2dFixed(DCUpBlock2d):
    def forward(self, hidden_states):
        x = F.pixel_shuffle(self.conv(hidden_states), self.factor)
        y = hidden_states.repeat_interleave(self.repeats, dim=1, output_size=hidden_states.shape[1] * self.repeats)
        return x + F.pixel_shuffle(y, self.factor)


if __name__ == "__main__":
    torch.manual_seed(0)
    attn, attn_fixed = Attention(), AttentionFixed()
    mask = torch.zeros(2, 1, 7)
    for out_dim in (3, 4):
        a = attn.prepare_attention_mask(mask, 7, batch_size=2, out_dim=out_dim)
        b = attn_fixed.prepare_attention_mask(mask, 7, batch_size=2, out_dim=out_dim)
        assert torch.equal(a, b)
    up, up_fixed = DCUpBlock2d(), DCUpBlock2dFixed()
    up_fixed.load_state_dict(up.state_dict())
    h = torch.randn(1, 8, 4, 4)
    assert torch.equal(up(h), up_fixed(h))
    print("identical outputs; only the output_size hint differs (no cumsum[-1].item() on CUDA)")
