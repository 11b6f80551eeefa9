# source: ai2cm/ace https://github.com/ai2cm/ace/pull/1061 — EMATracker.from_state decoupled restored state with `state["num_updates"].clone().to(device)` and `param.clone().to(device)`, cloning every EMA parameter on the source device and then copying it again to the target device; review changed both to `.to(device, copy=True)`, which copies exactly once whether or not a transfer happens.
import logging

import torch
from torch import nn

_DEVICE = torch.device("cpu")


def get_device():
    return _DEVICE


class EMATracker:
    """Exponential Moving Average (EMA) tracker."""

    def __init__(self, model, decay, faster_decay_at_start=True):
        super().__init__()
        if decay < 0.0 or decay > 1.0:
            raise ValueError("Decay must be between 0 and 1")

        self._module_name_to_ema_name = {}
        self.decay = torch.tensor(decay, dtype=torch.float32).to(get_device())  # maybe: C (host scalar then moved; untouched by the fix)
        self._faster_decay_at_start = faster_decay_at_start
        self.num_updates = torch.tensor(0, dtype=torch.int).to(get_device())  # maybe: C (host scalar then moved; untouched by the fix)

        self._ema_params = {}

        for name, p in model.named_parameters():
            if p.requires_grad:
                # remove as '.'-character is not allowed in buffers
                ema_name = name.replace(".", "")
                self._module_name_to_ema_name.update({name: ema_name})
                self._ema_params[ema_name] = p.clone().detach().data

    def get_state(self):
        return {
            "decay": self.decay.clone(),
            "num_updates": self.num_updates.clone(),
            "faster_decay_at_start": self._faster_decay_at_start,
            "module_name_to_ema_name": dict(self._module_name_to_ema_name),
            "ema_params": {
                name: param.clone().detach() for name, param in self._ema_params.items()
            },
        }

    @classmethod
    def from_state(cls, state, model):
        device = get_device()
        ema = cls(model, float(state["decay"]), state["faster_decay_at_start"])
        ema.num_updates = state["num_updates"].clone().to(device)  # want: C
        ema._module_name_to_ema_name = state["module_name_to_ema_name"]
        if "ema_params" in state:
            ema._ema_params = {
                name: param.clone().to(device)  # want: C
                for name, param in state["ema_params"].items()
            }
        else:
            logging.warning("EMA params not found in state and will not be restored.")
        return ema


class EMATrackerFixed(EMATracker):
    @classmethod
    def from_state(cls, state, model):
        device = get_device()
        ema = cls(model, float(state["decay"]), state["faster_decay_at_start"])
        ema.num_updates = state["num_updates"].to(device, copy=True)
        ema._module_name_to_ema_name = state["module_name_to_ema_name"]
        if "ema_params" in state:
            ema._ema_params = {
                name: param.to(device, copy=True)
                for name, param in state["ema_params"].items()
            }
        else:
            logging.warning("EMA params not found in state and will not be restored.")
        return ema


if __name__ == "__main__":
    from torch.utils._python_dispatch import TorchDispatchMode

    class CountCopies(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.bytes = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func in (torch.ops.aten.clone.default, torch.ops.aten._to_copy.default):
                self.bytes += out.numel() * out.element_size()
            return out

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64), nn.Linear(64, 8))
    state = EMATracker(model, decay=0.999).get_state()
    payload = sum(p.numel() * p.element_size() for p in state["ema_params"].values())

    # same device: both make one decoupled copy
    a = EMATracker.from_state(state, model)
    b = EMATrackerFixed.from_state(state, model)
    for k in a._ema_params:
        assert torch.equal(a._ema_params[k], b._ema_params[k])
        assert a._ema_params[k].data_ptr() != state["ema_params"][k].data_ptr()
        assert b._ema_params[k].data_ptr() != state["ema_params"][k].data_ptr()

    # restoring onto another device ("meta" stands in for the accelerator)
    _DEVICE = torch.device("meta")
    with CountCopies() as ca:
        EMATracker.from_state(state, model)
    with CountCopies() as cb:
        EMATrackerFixed.from_state(state, model)
    print("EMA payload", payload, "| bytes copied in from_state: buggy", ca.bytes, "fixed", cb.bytes)
    assert ca.bytes - cb.bytes >= payload
