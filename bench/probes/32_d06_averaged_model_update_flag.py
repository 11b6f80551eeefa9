# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/175085 — AveragedModel.update_parameters evaluated `bool(self.n_averaged == 0)` (and `if self.n_averaged > 0`) on the device-resident n_averaged buffer on every EMA/SWA update, a CPU/GPU sync per call (333ms -> 6ms per update after the fix); the fix keeps a CPU-side flag recording whether the average has been initialised.
import itertools
from copy import deepcopy

import torch
from torch.nn import Module


def get_ema_multi_avg_fn(decay=0.999):
    @torch.no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        torch._foreach_lerp_(ema_param_list, current_param_list, 1 - decay)

    return ema_update


class AveragedModel(Module):
    def __init__(self, model, device=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", torch.tensor(0, dtype=torch.long, device=device))
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _param_lists(self, model):
        self_param = (
            itertools.chain(self.module.parameters(), self.module.buffers())
            if self.use_buffers
            else self.parameters()
        )
        model_param = (
            itertools.chain(model.parameters(), model.buffers())
            if self.use_buffers
            else model.parameters()
        )
        return self_param, model_param

    def update_parameters(self, model):
        self_param, model_param = self._param_lists(model)
        self_param_detached = []
        model_param_detached = []
        copy_param = bool(self.n_averaged == 0)  # want: D
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            self_param_detached.append(p_averaged.detach())
            model_param_detached.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)

        if self.n_averaged > 0:  # want: D
            self.multi_avg_fn(self_param_detached, model_param_detached, self.n_averaged)

        self.n_averaged += 1


class AveragedModelFixed(AveragedModel):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # host-side mirror of "has the average been initialised"; refreshed on load
        self._initialized = False

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)
        n = state_dict.get(prefix + "n_averaged")
        self._initialized = n is not None and int(n.cpu()) > 0

    def update_parameters(self, model):
        self_param, model_param = self._param_lists(model)
        self_param_detached = []
        model_param_detached = []
        copy_param = not self._initialized
        for p_averaged, p_model in zip(self_param, model_param):
            p_model_ = p_model.detach().to(p_averaged.device)
            self_param_detached.append(p_averaged.detach())
            model_param_detached.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)

        if self._initialized:
            self.multi_avg_fn(self_param_detached, model_param_detached, self.n_averaged)

        self.n_averaged += 1
        self._initialized = True


if __name__ == "__main__":
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 8)
    ema_a = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
    ema_b = AveragedModelFixed(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(10):
        opt.zero_grad()
        model(torch.randn(4, 8)).pow(2).mean().backward()
        opt.step()
        ema_a.update_parameters(model)
        ema_b.update_parameters(model)
    torch.testing.assert_close(ema_a.module.weight, ema_b.module.weight)
    print("EMA weights match after 10 updates")
