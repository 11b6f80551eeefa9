# source: AutoGPTQ/AutoGPTQ https://github.com/AutoGPTQ/AutoGPTQ/commit/ac3f7054e0d3447139c6ad98ee5762ef9ac21062 — `move_to_device` is the helper AutoGPTQ's `quantize()` calls in its calibration loops to move each cached layer input, attention mask and position id to the current layer's device. For tensors it did `obj.to(device)` and returned `obj`, but `Tensor.to` is out-of-place, so every cached input silently stayed on its original device (only modules, whose `.to` is in-place, were moved). The "big fix" commit assigns `obj = obj.to(device)`.
from typing import Union

import torch
import torch.nn as nn


def get_device(obj: Union[torch.Tensor, nn.Module]):
    if isinstance(obj, torch.Tensor):
        return obj.device
    return next(obj.parameters()).device


def move_to_device(obj: Union[torch.Tensor, nn.Module], device: torch.device):
    if get_device(obj) != device:
        obj.to(device)  # want: B
    return obj


def move_to_device_fixed(obj: Union[torch.Tensor, nn.Module], device: torch.device):
    if get_device(obj) != device:
        obj = obj.to(device)
    return obj


def collect_layer_inputs(examples, data_device, move_fn):
    layer_inputs = []
    attention_masks = []
    position_ids = []
    for example in examples:
        inp, mask, pos_ids = example["hidden"], example["attention_mask"], example["position_ids"]
        for i in range(inp.shape[0]):
            layer_inputs.append(move_fn(inp[i].unsqueeze(0), data_device))
            attention_masks.append(move_fn(mask[i].unsqueeze(0), data_device))
            position_ids.append(move_fn(pos_ids[i].unsqueeze(0), data_device))
    return layer_inputs, attention_masks, position_ids


if __name__ == "__main__":
    examples = [
        {
            "hidden": torch.randn(2, 3, 8),
            "attention_mask": torch.ones(2, 3, dtype=torch.long),
            "position_ids": torch.arange(3).repeat(2, 1),
        }
    ]
    target = torch.device("meta")
    inputs, masks, pos = collect_layer_inputs(examples, target, move_to_device)
    assert all(t.device.type == "cpu" for t in inputs + masks + pos)

    inputs_f, masks_f, pos_f = collect_layer_inputs(examples, target, move_to_device_fixed)
    assert all(t.device.type == "meta" for t in inputs_f + masks_f + pos_f)
    assert inputs_f[0].shape == inputs[0].shape
    print("ok")
