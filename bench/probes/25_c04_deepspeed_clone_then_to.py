# source: deepspeedai/DeepSpeed PR #6761 ("Removes unnecessary cloning") — deepspeed/checkpoint/utils.py clone_tensors_for_torch_save() did `item.detach().clone().to(device)`: when the tensor lives on another device (GPU weights saved to 'cpu', the default) `.to()` already makes the copy, so the clone is a second full-size copy on the GPU; the reporter saw memory bloat every time a Whisper state_dict was cloned for saving under ZeRO-0/1
import io
import os
import tempfile
from collections import OrderedDict

import torch
from torch import nn


def clone_tensors_for_torch_save(item, device=torch.device("cpu")):
    """
    Returns a copy of ``item`` with all enclosed tensors replaced by clones on a specified device.
    Works on individual tensors, and tensors contained/nested in lists, tuples, and dicts.
    (torch.save of a view would otherwise serialize the whole shared storage.)
    """
    if torch.is_tensor(item):
        return item.detach().clone().to(device)  # want: C
    elif isinstance(item, list):
        return [clone_tensors_for_torch_save(v, device) for v in item]
    elif isinstance(item, tuple):
        return tuple([clone_tensors_for_torch_save(v, device) for v in item])
    elif isinstance(item, dict):
        return type(item)({k: clone_tensors_for_torch_save(v, device) for k, v in item.items()})
    else:
        return item


def clone_tensors_for_torch_save_fixed(item, device=torch.device("cpu")):
    if torch.is_tensor(item):
        if type(device) is str:
            device = torch.device(device)
        if device == item.device:
            return item.detach().clone()  # same device: this clone is the only copy
        else:
            return item.detach().to(device)  # cross-device .to() already copies
    elif isinstance(item, list):
        return [clone_tensors_for_torch_save_fixed(v, device) for v in item]
    elif isinstance(item, tuple):
        return tuple([clone_tensors_for_torch_save_fixed(v, device) for v in item])
    elif isinstance(item, dict):
        return type(item)({k: clone_tensors_for_torch_save_fixed(v, device) for k, v in item.items()})
    else:
        return item


class FusedQKVBlock(nn.Module):
    """A state_dict with views into one fused buffer: the reason the helper clones at all."""

    def __init__(self, dim=32):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return self.out(torch.softmax(q @ k.transpose(-1, -2), -1) @ v)

    def split_state_dict(self):
        sd = OrderedDict()
        w = self.qkv.weight.detach()
        sd["q.weight"], sd["k.weight"], sd["v.weight"] = w.chunk(3, dim=0)  # views into qkv.weight
        sd["out.weight"] = self.out.weight.detach()
        return sd


def save_16bit_model(engine_module: nn.Module, save_dir: str, cloner=clone_tensors_for_torch_save):
    """DeepSpeedEngine.save_16bit_model / HF Trainer._save path."""
    state_dict = cloner(engine_module.split_state_dict())
    path = os.path.join(save_dir, "pytorch_model.bin")
    torch.save(state_dict, path)
    return path


if __name__ == "__main__":
    torch.manual_seed(0)
    model = FusedQKVBlock()
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        p1 = save_16bit_model(model, d1)
        p2 = save_16bit_model(model, d2, cloner=clone_tensors_for_torch_save_fixed)
        a, b = torch.load(p1), torch.load(p2)
        assert all(torch.equal(a[k], b[k]) for k in a)
        # the clone keeps each view's file small: a bare view would drag the whole fused storage along
        buf_view, buf_clone = io.BytesIO(), io.BytesIO()
        torch.save({"q": model.split_state_dict()["q.weight"]}, buf_view)
        torch.save({"q": b["q.weight"]}, buf_clone)
        assert buf_clone.tell() < buf_view.tell()
        # on the same device the fixed helper still copies exactly once
        w = model.out.weight.detach()
        c = clone_tensors_for_torch_save_fixed(w, "cpu")
        assert c.data_ptr() != w.data_ptr()
    print("ok")
