# source: ml-explore/mlx-lm https://github.com/ml-explore/mlx-lm/pull/1077 — GatedDeltaNet kept cache[0] = conv_input[:, -2:], a slice of the (T + k - 1)-long conv input, so each prefill chunk's whole conv input stayed alive (~540 KB/token, OOM at 32K); fix: give the slice its own buffer (mx.contiguous there; .clone() in PyTorch)
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn


class ArraysCache:
    def __init__(self, size: int):
        self.state = [None] * size

    def __getitem__(self, idx):
        return self.state[idx]

    def __setitem__(self, idx, value):
        self.state[idx] = value


class ShortConvMixer(nn.Module):
    def __init__(self, dim: int, kernel_size: int = 4):
        super().__init__()
        self.kernel_size = kernel_size
        self.in_proj = nn.Linear(dim, 3 * dim)
        self.conv = nn.Conv1d(3 * dim, 3 * dim, kernel_size, groups=3 * dim, bias=False)
        self.out_proj = nn.Linear(dim, dim)

    def _mix(self, conv_input: torch.Tensor) -> torch.Tensor:
        out = self.conv(conv_input.transpose(1, 2)).transpose(1, 2)
        q, k, v = F.silu(out).chunk(3, dim=-1)
        return self.out_proj(q * torch.sigmoid(k) * v)

    def forward(self, x: torch.Tensor, cache: Optional[ArraysCache] = None) -> torch.Tensor:
        qkv = self.in_proj(x)
        if cache is not None and cache[0] is not None:
            conv_state = cache[0]
        else:
            conv_state = qkv.new_zeros(x.shape[0], self.kernel_size - 1, qkv.shape[-1])
        conv_input = torch.cat([conv_state, qkv], dim=1)
        if cache is not None:
            cache[0] = conv_input[:, -(self.kernel_size - 1):]  # want: A
        return self._mix(conv_input)


class ShortConvMixerFixed(ShortConvMixer):
    def forward(self, x: torch.Tensor, cache: Optional[ArraysCache] = None) -> torch.Tensor:
        qkv = self.in_proj(x)
        if cache is not None and cache[0] is not None:
            conv_state = cache[0]
        else:
            conv_state = qkv.new_zeros(x.shape[0], self.kernel_size - 1, qkv.shape[-1])
        conv_input = torch.cat([conv_state, qkv], dim=1)
        if cache is not None:
            cache[0] = conv_input[:, -(self.kernel_size - 1):].clone()
        tail = conv_input[:, -1]
        assert tail.shape[-1] == qkv.shape[-1]
        return self._mix(conv_input)


@torch.no_grad()
def chunked_prefill(layer: nn.Module, x: torch.Tensor, chunk: int) -> ArraysCache:
    cache = ArraysCache(2)
    for start in range(0, x.shape[1], chunk):
        layer(x[:, start:start + chunk], cache=cache)
    return cache


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(1, 512, 16)
    leaky = chunked_prefill(ShortConvMixer(16), x, 256)
    state = leaky[0]
    assert state.shape == (1, 3, 48)
    assert state.untyped_storage().nbytes() == (256 + 3) * 48 * 4  # the last chunk's whole conv input
    fixed = chunked_prefill(ShortConvMixerFixed(16), x, 256)
    assert fixed[0].untyped_storage().nbytes() == 3 * 48 * 4
    print("ok")
