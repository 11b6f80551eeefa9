# source: huggingface/pytorch-image-models https://github.com/huggingface/pytorch-image-models/pull/1553 — ModelEmaV2.update passed a lambda that builds `decay * e + (1 - decay) * m` out of place for every state-dict tensor (two full-size temporaries per tensor per step) and then copied the result back with `ema_v.copy_(...)`; the fix updates floating-point EMA tensors in place instead of materialising the new value.
from copy import deepcopy

import torch
import torch.nn as nn
from torch.utils._pytree import tree_flatten
from torch.utils._python_dispatch import TorchDispatchMode


class ModelEmaV2(nn.Module):
    """Model Exponential Moving Average V2 (as in timm/utils/model_ema.py before the fix)."""

    def __init__(self, model, decay=0.9999, device=None):
        super(ModelEmaV2, self).__init__()
        # make a copy of the model for accumulating moving average of weights
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        self.device = device  # perform ema on different device from model if set
        if self.device is not None:
            self.module.to(device=device)

    def _update(self, model, update_fn):
        with torch.no_grad():
            for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                if self.device is not None:
                    model_v = model_v.to(device=self.device)
                ema_v.copy_(update_fn(ema_v, model_v))  # maybe: C (copies back a freshly materialised tensor; harmless for set())

    def update(self, model):
        self._update(model, update_fn=lambda e, m: self.decay * e + (1. - self.decay) * m)  # want: C

    def set(self, model):
        self._update(model, update_fn=lambda e, m: m)


class ModelEmaV2Fixed(ModelEmaV2):
    """In-place EMA, as merged."""

    @torch.no_grad()
    def update(self, model):
        for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
            if self.device is not None:
                model_v = model_v.to(device=self.device)
            if ema_v.is_floating_point():
                ema_v.lerp_(model_v, weight=1. - self.decay)
            else:
                ema_v.copy_(model_v)


class NewStorageBytes(TorchDispatchMode):
    """Counts bytes of tensors produced by ops that do not alias any input storage."""

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


def make_model():
    return nn.Sequential(nn.Linear(256, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Linear(256, 256))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = make_model()
    ema_bug, ema_fix = ModelEmaV2(model, decay=0.99), ModelEmaV2Fixed(model, decay=0.99)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p))
    payload = sum(t.numel() * t.element_size() for t in model.state_dict().values())
    with NewStorageBytes() as c_bug:
        ema_bug.update(model)
    with NewStorageBytes() as c_fix:
        ema_fix.update(model)
    for a, b in zip(ema_bug.module.state_dict().values(), ema_fix.module.state_dict().values()):
        assert torch.allclose(a.float(), b.float(), atol=1e-6)
    print(f"state payload {payload} B; new bytes per update: buggy={c_bug.bytes} fixed={c_fix.bytes}")
    assert c_bug.bytes > payload and c_fix.bytes < c_bug.bytes
