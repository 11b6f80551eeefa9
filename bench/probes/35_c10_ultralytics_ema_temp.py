# source: ultralytics/ultralytics https://github.com/ultralytics/ultralytics/pull/25315 — ModelEMA.update did `v *= d; v += (1 - d) * msd[k].detach()` per state-dict tensor, so every floating tensor of the model got a full-size temporary `(1 - d) * model_v` (plus a kernel launch pair) on every optimizer step; the fix collects the tensors and updates them with one batched in-place `torch._foreach_lerp_(ema_v, model_v, 1 - d)`.
import math
from copy import deepcopy

import torch
import torch.nn as nn
from torch.utils._pytree import tree_flatten
from torch.utils._python_dispatch import TorchDispatchMode


def unwrap_model(m):
    return m.module if hasattr(m, "module") else m


class ModelEMA:
    def __init__(self, model, decay=0.9999, tau=2000, updates=0):
        self.ema = deepcopy(unwrap_model(model)).eval()  # FP32 EMA
        self.updates = updates  # number of EMA updates
        self.decay = lambda x: decay * (1 - math.exp(-x / tau))  # decay exponential ramp (to help early epochs)
        for p in self.ema.parameters():
            p.requires_grad_(False)
        self.enabled = True

    def update(self, model):
        if self.enabled:
            self.updates += 1
            d = self.decay(self.updates)

            msd = unwrap_model(model).state_dict()  # model state_dict
            for k, v in self.ema.state_dict().items():
                if v.dtype.is_floating_point:  # true for FP16 and FP32
                    v *= d
                    v += (1 - d) * msd[k].detach()  # want: C


class ModelEMAFixed(ModelEMA):
    def update(self, model):
        if self.enabled:
            self.updates += 1
            d = self.decay(self.updates)

            msd = unwrap_model(model).state_dict()  # model state_dict
            ema_v, model_v = [], []
            for k, v in self.ema.state_dict().items():
                if v.dtype.is_floating_point:  # true for FP16 and FP32
                    ema_v.append(v)
                    model_v.append(msd[k])
            if ema_v:
                torch._foreach_lerp_(ema_v, model_v, 1 - d)


class NewStorageBytes(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.bytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        ins = {t.untyped_storage().data_ptr() for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)}
        for o in tree_flatten(out)[0]:
            if isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() not in ins:
                self.bytes += o.untyped_storage().nbytes()
        return out


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.SiLU(), nn.Conv2d(64, 128, 3), nn.BatchNorm2d(128))
    e1, e2 = ModelEMA(model), ModelEMAFixed(model)
    for _ in range(3):
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn_like(p) * 0.1)
        with NewStorageBytes() as c1:
            e1.update(model)
        with NewStorageBytes() as c2:
            e2.update(model)
    for a, b in zip(e1.ema.state_dict().values(), e2.ema.state_dict().values()):
        assert torch.allclose(a.float(), b.float(), atol=1e-6)
    payload = sum(v.nbytes for v in model.state_dict().values() if v.is_floating_point())
    print(f"float state {payload} B; temporaries per update: buggy={c1.bytes} fixed={c2.bytes}")
    assert c1.bytes >= payload and c2.bytes == 0
