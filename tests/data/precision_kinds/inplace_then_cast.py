# VL205: `bias.data.add_(delta).to(orig_dtype)`: the in-place add already wrote into the bias; the cast back to
# the dtype it was read with is dead code at most, not a lost update (peft tuners/beft/layer.py:118)
import torch
from torch import nn


def merge_bias(layer: nn.Linear, delta: torch.Tensor) -> None:
    orig_dtype = layer.bias.data.dtype
    layer.bias.data.add_(delta.squeeze()).to(orig_dtype)
