# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/pull/6761 — clone_tensors_for_torch_save() did `item.detach().clone().to(device)` when the target device differed, copying every tensor twice (the `.to()` already copies); the fix drops the `.clone()` on that branch.
import io

import torch
from torch import nn


# We pass cloned tensors to torch.save() to avoid checkpoint bloat that occurs when torch.save()
# saves the underlying storage rather than the slice of the storage corresponding to individual tensors.
def clone_tensors_for_torch_save(item, device=torch.device('cpu')):
    """
    Returns a copy of ``item`` with all enclosed tensors replaced by clones on a specified device.
    Works on individual tensors, and tensors contained/nested in lists, tuples, and dicts.
    """
    if torch.is_tensor(item):
        if type(device) is str:
            device = torch.device(device)
        if device == item.device:
            return item.detach().clone()
        else:
            return item.detach().clone().to(device)  # want: C
    elif isinstance(item, list):
        return [clone_tensors_for_torch_save(v, device) for v in item]
    elif isinstance(item, tuple):
        return tuple([clone_tensors_for_torch_save(v, device) for v in item])
    elif isinstance(item, dict):
        return type(item)({k: clone_tensors_for_torch_save(v, device) for k, v in item.items()})
    else:
        return item


def clone_tensors_for_torch_save_fixed(item, device=torch.device('cpu')):
    # the merged version (look-alike)
    if torch.is_tensor(item):
        if type(device) is str:
            device = torch.device(device)
        if device == item.device:
            return item.detach().clone()
        else:
            return item.detach().to(device)
    elif isinstance(item, dict):
        return type(item)({k: clone_tensors_for_torch_save_fixed(v, device) for k, v in item.items()})
    return item


class Engine:
    def __init__(self, module):
        self.module = module

    def save_lean(self, buf, device):
        lean_state_dict = clone_tensors_for_torch_save(self.module.state_dict(), device=device)
        if all(t.device.type != "meta" for t in lean_state_dict.values()):
            torch.save(lean_state_dict, buf)
        return lean_state_dict


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    engine = Engine(model)
    buf = io.BytesIO()
    sd_cpu = engine.save_lean(buf, "cpu")           # same-device branch
    sd_meta = engine.save_lean(buf, "meta")         # other-device branch (stands in for gpu->cpu)
    sd_fixed = clone_tensors_for_torch_save_fixed(model.state_dict(), "meta")
    print("ok", len(sd_cpu), len(sd_meta), len(sd_fixed), buf.tell() > 0)
