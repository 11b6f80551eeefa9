# source: mosaicml/composer https://github.com/mosaicml/composer/pull/2091 — The EMA algorithm swapped/transferred EMA weights into the model with `param.data = self.named_parameters_dict[name]` (and `param.data, ema_params[name] = ...`). Under FSDP the module parameters are views into a flat parameter that FSDP and the optimizer actually use, so rebinding `.data` pointed the module attribute at new storage and left the flat buffer with the old weights. The fix ("Patch EMA with FSDP") writes through `param.copy_(...)` / `buffer.copy_(...)`.
import torch
import torch.nn as nn


class FlatParamLinear(nn.Module):
    """FSDP-style unit (use_orig_params=True)."""

    def __init__(self, in_f, out_f):
        super().__init__()
        self.flat_param = torch.zeros(out_f * in_f + out_f)
        self.weight = nn.Parameter(self.flat_param[: out_f * in_f].view(out_f, in_f))
        self.bias = nn.Parameter(self.flat_param[out_f * in_f :])
        self.in_f, self.out_f = in_f, out_f

    def forward(self, x):
        w = self.flat_param[: self.out_f * self.in_f].view(self.out_f, self.in_f)
        b = self.flat_param[self.out_f * self.in_f :]
        return x @ w.t() + b


class EMAParameters:
    def __init__(self, model):
        self.named_parameters_dict = {n: p.detach().clone() for n, p in model.named_parameters()}
        self.named_buffers_dict = {n: b.detach().clone() for n, b in model.named_buffers()}

    def transfer_ema_params(self, model: torch.nn.Module):
        """Transfers the parameters and buffers from the ema model to the supplied model."""
        with torch.no_grad():
            for name, param in model.named_parameters():
                if name in self.named_parameters_dict:
                    param.data = self.named_parameters_dict[name]  # want: B

            for name, buffer in model.named_buffers():
                if name in self.named_buffers_dict:
                    buffer.data = self.named_buffers_dict[name]  # want: B


class EMAParametersFixed(EMAParameters):
    def transfer_ema_params(self, model: torch.nn.Module):
        """Transfers the parameters and buffers from the ema model to the supplied model."""
        with torch.no_grad():
            for name, param in model.named_parameters():
                if name in self.named_parameters_dict:
                    param.copy_(self.named_parameters_dict[name])

            for name, buffer in model.named_buffers():
                if name in self.named_buffers_dict:
                    buffer.copy_(self.named_buffers_dict[name])


def make_ema(cls):
    model = FlatParamLinear(3, 2)
    ema = cls(model)
    for v in ema.named_parameters_dict.values():
        v.fill_(0.5)
    return model, ema


if __name__ == "__main__":
    x = torch.ones(1, 3)
    model, ema = make_ema(EMAParameters)
    ema.transfer_ema_params(model)
    assert torch.all(model.flat_param == 0.0)
    assert torch.all(model(x) == 0.0)

    model_f, ema_f = make_ema(EMAParametersFixed)
    ema_f.transfer_ema_params(model_f)
    assert torch.all(model_f.flat_param == 0.5)
    assert torch.allclose(model_f(x), torch.full((1, 2), 2.0))
    print("ok")
