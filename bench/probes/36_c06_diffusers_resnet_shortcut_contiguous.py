# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/12977 — ResnetBlock2D.forward always ran `self.conv_shortcut(input_tensor.contiguous())`; with channels_last activations (the fast layout on CPU) this converts the whole feature map back to NCHW on every block call during inference. The `.contiguous()` was only needed for a DDP gradient-stride warning in training, so the fix applies it only when `self.training`.
import torch
from torch import nn


class ResnetBlock2D(nn.Module):
    def __init__(self, in_channels, out_channels, temb_channels=16, groups=4, output_scale_factor=1.0):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, in_channels)
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.time_emb_proj = nn.Linear(temb_channels, out_channels)
        self.norm2 = nn.GroupNorm(groups, out_channels)
        self.dropout = nn.Dropout(0.0)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1)
        self.nonlinearity = nn.SiLU()
        self.output_scale_factor = output_scale_factor
        self.conv_shortcut = nn.Conv2d(in_channels, out_channels, 1) if in_channels != out_channels else None

    def _body(self, input_tensor, temb):
        hidden_states = self.norm1(input_tensor)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.conv1(hidden_states)
        temb = self.time_emb_proj(self.nonlinearity(temb))[:, :, None, None]
        hidden_states = self.norm2(hidden_states + temb)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.dropout(hidden_states)
        return self.conv2(hidden_states)

    def forward(self, input_tensor, temb):
        hidden_states = self._body(input_tensor, temb)
        if self.conv_shortcut is not None:
            input_tensor = self.conv_shortcut(input_tensor.contiguous())  # want: C
        return (input_tensor + hidden_states) / self.output_scale_factor

    def forward_fixed(self, input_tensor, temb):
        hidden_states = self._body(input_tensor, temb)
        if self.conv_shortcut is not None:
            # Only use contiguous() during training to avoid DDP gradient stride mismatch warning.
            if self.training:
                input_tensor = input_tensor.contiguous()
            input_tensor = self.conv_shortcut(input_tensor)
        return (input_tensor + hidden_states) / self.output_scale_factor


if __name__ == "__main__":
    torch.manual_seed(0)
    block = ResnetBlock2D(8, 16).eval().to(memory_format=torch.channels_last)
    sample = torch.randn(2, 8, 16, 16).to(memory_format=torch.channels_last)
    temb = torch.randn(2, 16)
    shortcut_inputs = []
    block.conv_shortcut.register_forward_pre_hook(lambda mod, args: shortcut_inputs.append(args[0].data_ptr()))
    with torch.no_grad():
        out_bug = block(sample, temb)
        ptr_bug = shortcut_inputs[-1]
        out_fix = block.forward_fixed(sample, temb)
        ptr_fix = shortcut_inputs[-1]
    assert torch.allclose(out_bug, out_fix, atol=1e-5)
    assert ptr_bug != sample.data_ptr()  # NHWC -> NCHW copy of the whole feature map
    assert ptr_fix == sample.data_ptr()  # inference keeps the channels_last tensor as is
    print("eval-mode contiguous() copied", sample.numel() * sample.element_size(), "bytes per block call")
