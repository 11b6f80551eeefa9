# source: NVIDIA-NeMo/Speech https://github.com/NVIDIA-NeMo/Speech/pull/7095 — with the distributed optimizer's contiguous param buffer every model parameter became a view into one large flat buffer, and since pickled tensors carry their whole storage, GPT checkpoints grew by redundant copies of all parameters; the fix disables the contiguous buffer by default and copies the all-gathered values into each parameter's own storage instead.
import io

import torch
import torch.nn as nn


class DistributedFusedAdam(torch.optim.Optimizer):
    """Single-process stand-in: params are packed into one flat bucket that the
    (simulated) all-gather writes after every step."""

    def __init__(self, params, lr=1e-2, contiguous_param_buffer=True):
        params = list(params)
        super().__init__(params, dict(lr=lr))
        self.contiguous_param_buffer = contiguous_param_buffer
        self._param_buffer = None
        self._offsets = []
        self.init_params_bucket(params)

    def init_params_bucket(self, params):
        total = sum(p.numel() for p in params)
        self._master = torch.cat([p.detach().reshape(-1).float() for p in params])
        if self.contiguous_param_buffer:
            self._param_buffer = torch.empty(total, dtype=params[0].dtype)
        offset = 0
        for p in params:
            n = p.numel()
            self._offsets.append((p, offset, n))
            if self.contiguous_param_buffer:
                self._param_buffer[offset:offset + n].copy_(p.detach().view(-1))
                p.data = self._param_buffer[offset:offset + n].view_as(p)  # want: A
            offset += n

    def _all_gather_params(self):
        if self.contiguous_param_buffer:
            self._param_buffer.copy_(self._master)
        else:
            for p, offset, n in self._offsets:
                p.data.copy_(self._master[offset:offset + n].view_as(p))

    @torch.no_grad()
    def step(self, closure=None):
        grads = torch.cat([p.grad.reshape(-1) for p, _, _ in self._offsets])
        self._master.add_(grads, alpha=-self.param_groups[0]['lr'])
        self._all_gather_params()


# ---------------------------------------------------------------- fixed version
class DistributedFusedAdamFixed(DistributedFusedAdam):
    def __init__(self, params, lr=1e-2, contiguous_param_buffer=False):
        super().__init__(params, lr=lr, contiguous_param_buffer=contiguous_param_buffer)

    def init_params_bucket(self, params):
        self._master = torch.cat([p.detach().reshape(-1).float() for p in params])
        offset = 0
        for p in params:
            self._offsets.append((p, offset, p.numel()))
            offset += p.numel()


def save_layer_checkpoints(model):
    sizes = []
    for name, layer in model.named_children():
        buf = io.BytesIO()
        torch.save(layer.state_dict(), buf)
        sizes.append(buf.getbuffer().nbytes)
    return sizes


def build():
    torch.manual_seed(0)
    return nn.Sequential(*[nn.Linear(128, 128) for _ in range(8)])


if __name__ == "__main__":
    results = {}
    for cls in (DistributedFusedAdam, DistributedFusedAdamFixed):
        model = build()
        opt = cls(model.parameters())
        model(torch.randn(4, 128)).sum().backward()
        opt.step()
        results[cls.__name__] = (save_layer_checkpoints(model), model[0].weight.detach().clone())
    bad, w_bad = results["DistributedFusedAdam"]
    good, w_good = results["DistributedFusedAdamFixed"]
    print("per-layer ckpt bytes, views into flat buffer:", sum(bad), " own storage:", sum(good))
    assert torch.allclose(w_bad, w_good)
    assert sum(bad) > 5 * sum(good)
