# source: huggingface/transformers https://github.com/huggingface/transformers/pull/36538 — MimiConv1d/EncodecConv1d.__init__ registered `torch.tensor(kernel_size - stride, dtype=torch.int64)` although `kernel_size - stride` is already a fresh int64 tensor, so torch.tensor copy-constructed it again (and warned); the fix registers `kernel_size - stride` directly.
import warnings

import torch
from torch import nn
import torch.nn.functional as F


class MimiConv1d(nn.Module):
    """Conv1d with asymmetric or causal padding and normalization."""

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        dilation=1,
        groups=1,
        pad_mode="constant",
        bias=True,
    ):
        super().__init__()
        self.pad_mode = pad_mode

        self.conv = nn.Conv1d(
            in_channels, out_channels, kernel_size, stride, dilation=dilation, groups=groups, bias=bias
        )

        kernel_size = self.conv.kernel_size[0]
        stride = torch.tensor(self.conv.stride[0], dtype=torch.int64)
        dilation = self.conv.dilation[0]

        # Effective kernel size with dilations.
        kernel_size = torch.tensor((kernel_size - 1) * dilation + 1, dtype=torch.int64)

        self.register_buffer("stride", stride, persistent=False)
        self.register_buffer("kernel_size", kernel_size, persistent=False)
        self.register_buffer("padding_total", torch.tensor(kernel_size - stride, dtype=torch.int64), persistent=False)  # want: C

        # Asymmetric padding required for odd strides
        self.padding_right = self.padding_total // 2
        self.padding_left = self.padding_total - self.padding_right

    def _get_extra_padding_for_conv1d(self, hidden_states):
        length = hidden_states.shape[-1]
        n_frames = (length - self.kernel_size + self.padding_total) / self.stride + 1
        n_frames = torch.ceil(n_frames).to(torch.int64) - 1
        ideal_length = n_frames * self.stride + self.kernel_size - self.padding_total
        return ideal_length - length

    def forward(self, hidden_states):
        extra_padding = self._get_extra_padding_for_conv1d(hidden_states)
        hidden_states = F.pad(hidden_states, (self.padding_total, extra_padding), mode=self.pad_mode)
        return self.conv(hidden_states)


class MimiConv1dFixed(MimiConv1d):
    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        dilation=1,
        groups=1,
        pad_mode="constant",
        bias=True,
    ):
        nn.Module.__init__(self)
        self.pad_mode = pad_mode

        self.conv = nn.Conv1d(
            in_channels, out_channels, kernel_size, stride, dilation=dilation, groups=groups, bias=bias
        )

        kernel_size = self.conv.kernel_size[0]
        stride = torch.tensor(self.conv.stride[0], dtype=torch.int64)
        dilation = self.conv.dilation[0]

        # Effective kernel size with dilations.
        kernel_size = torch.tensor((kernel_size - 1) * dilation + 1, dtype=torch.int64)

        self.register_buffer("stride", stride, persistent=False)
        self.register_buffer("kernel_size", kernel_size, persistent=False)
        self.register_buffer("padding_total", kernel_size - stride, persistent=False)

        # Asymmetric padding required for odd strides
        self.padding_right = self.padding_total // 2
        self.padding_left = self.padding_total - self.padding_right


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(2, 4, 37)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        buggy = MimiConv1d(4, 8, kernel_size=7, stride=2)
    n_buggy = sum("copy construct" in str(w.message) for w in caught)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fixed = MimiConv1dFixed(4, 8, kernel_size=7, stride=2)
    n_fixed = sum("copy construct" in str(w.message) for w in caught)

    fixed.load_state_dict(buggy.state_dict())
    assert torch.allclose(buggy(x), fixed(x))
    assert int(buggy.padding_total) == int(fixed.padding_total) == 5

    # the buggy __init__ copy-constructs an already-fresh tensor (one extra alloc + copy + warning)
    print("copy-construct warnings buggy/fixed:", n_buggy, n_fixed)
    assert n_buggy == 1 and n_fixed == 0
