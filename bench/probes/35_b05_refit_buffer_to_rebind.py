# source: NVIDIA-NeMo/RL https://github.com/NVIDIA-NeMo/RL/pull/1734 — the policy worker moved model buffers with `v = v.to(device)` inside a loop, which only rebinds the local name: the module kept the old GPU buffers, so memory was not released after refit; the fix uses `torch.utils.swap_tensors(v, v.to(device))` so the module's own buffer objects change device.
import contextlib

import torch
import torch.nn as nn


class RotaryLayer(nn.Module):
    def __init__(self, dim=8, max_len=32):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        t = torch.arange(max_len).float()
        self.register_buffer("cos_cached", torch.outer(t, inv_freq).cos(), persistent=False)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(x)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([RotaryLayer() for _ in range(3)])
        self.norm = nn.LayerNorm(8)


class DTensorPolicyWorker:
    def __init__(self, model):
        self.model = model

    def move_buffer_to_device(self, model, device):
        # FSDP modules do not move buffers automatically
        for v in model.buffers():
            v = v.to(device)  # want: B
        return model

    @contextlib.contextmanager
    def offload_after_refit(self, offload_device):
        self.move_buffer_to_device(self.model, offload_device)
        yield


class DTensorPolicyWorkerFixed(DTensorPolicyWorker):
    def move_buffer_to_device(self, model, device):
        for v in model.buffers():
            torch.utils.swap_tensors(v, v.to(device))
        return model


if __name__ == "__main__":
    # "meta" stands in for the CPU offload target so the move is observable on a CPU box
    w = DTensorPolicyWorker(Policy())
    with w.offload_after_refit("meta"):
        devs = {b.device.type for b in w.model.buffers()}
    print("buggy buffer devices after offload:", devs)
    assert devs == {"cpu"}

    w2 = DTensorPolicyWorkerFixed(Policy())
    with w2.offload_after_refit("meta"):
        devs2 = {b.device.type for b in w2.model.buffers()}
    print("fixed buffer devices after offload:", devs2)
    assert devs2 == {"meta"}
