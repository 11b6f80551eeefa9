# source: openvinotoolkit/nncf https://github.com/openvinotoolkit/nncf/pull/327 — SymmetricQuantizer.apply_minmax_init (range initialisation run by the compression controller) did `self.scale = torch.nn.Parameter(torch.where(mask, abs_max, ...))`. Range init can run after the optimizer was built from model.parameters(), so the module switched to a brand-new Parameter while the optimizer kept stepping the old one and the learned quantizer scale never trained. The fix ("Do not replace parameter during symmetric range init") writes the new values into the existing parameter with `self.scale.data = torch.where(...)`, keeping the object the optimizer holds.
import torch
import torch.nn as nn


class QuantizerConfig:
    def __init__(self, bits=8, signedness_to_force=None):
        self.bits, self.signedness_to_force = bits, signedness_to_force


def symmetric_quantize(input_, levels, level_low, level_high, scale, eps):
    scale_safe = abs(scale) + eps
    y = torch.clamp(input_ / scale_safe * level_high, level_low, level_high)
    return ((torch.round(y) - y).detach() + y) * scale_safe / level_high


class BaseQuantizer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.signedness_to_force = config.signedness_to_force
        self._num_bits = nn.Parameter(torch.IntTensor([config.bits]), requires_grad=False)
        self.initialized = False
        self.scale_shape = [1]

    def forward(self, x):
        return self.quantize(x)


class SymmetricQuantizer(BaseQuantizer):
    def __init__(self, config):
        super().__init__(config)
        self.signed_tensor = nn.Parameter(torch.IntTensor([0]), requires_grad=False)
        self.scale = nn.Parameter(torch.ones(self.scale_shape), requires_grad=True)
        self.eps = 1e-16
        self.set_level_ranges()

    def set_level_ranges(self):
        self.levels = levels = 2 ** self._num_bits.item()
        self.level_high, self.level_low = ((levels // 2) - 1, -(levels // 2)) if self.signed else (levels - 1, 0)

    @property
    def signed(self):
        return self.signed_tensor.item() == 1

    @signed.setter
    def signed(self, signed: bool):
        self.signed_tensor.fill_(signed)

    def quantize(self, x):
        return symmetric_quantize(x, self.levels, self.level_low, self.level_high, self.scale, self.eps)

    def apply_minmax_init(self, min_values, max_values, log_module_name: str = None):
        if self.initialized: return
        sign = torch.any(torch.lt(min_values, 0))
        self.signed = int(sign)
        self.set_level_ranges()
        abs_max = torch.max(torch.abs(max_values), torch.abs(min_values))
        SCALE_LOWER_THRESHOLD = 0.1
        self.scale.fill_(SCALE_LOWER_THRESHOLD)
        mask = torch.gt(abs_max, SCALE_LOWER_THRESHOLD)
        self.scale = torch.nn.Parameter(torch.where(mask, abs_max, SCALE_LOWER_THRESHOLD * torch.ones_like(self.scale)))  # want: B


class SymmetricQuantizerFixed(SymmetricQuantizer):
    def apply_minmax_init(self, min_values, max_values, log_module_name: str = None):
        if self.initialized: return
        sign = torch.any(torch.lt(min_values, 0))
        self.signed = int(sign)
        self.set_level_ranges()
        abs_max = torch.max(torch.abs(max_values), torch.abs(min_values))
        SCALE_LOWER_THRESHOLD = 0.1
        self.scale.fill_(SCALE_LOWER_THRESHOLD)
        mask = torch.gt(abs_max, SCALE_LOWER_THRESHOLD)
        self.scale.data = torch.where(mask, abs_max, SCALE_LOWER_THRESHOLD * torch.ones_like(self.scale))


class QuantizationController:
    def __init__(self, model, data_loader):
        self.model, self.data_loader = model, data_loader

    def init_range(self):
        with torch.no_grad():
            for q in [m for m in self.model.modules() if isinstance(m, SymmetricQuantizer)]:
                xs = torch.cat([self.model.conv(x) for x, _ in self.data_loader])
                q.apply_minmax_init(xs.min(), xs.max(), log_module_name=type(q).__name__)


class TwoConvTestModel(nn.Module):
    def __init__(self, quantizer_cls):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 2)
        self.act_quantizer = quantizer_cls(QuantizerConfig(bits=4))

    def forward(self, x):
        return self.act_quantizer(self.conv(x)).sum()


def _train(quantizer_cls):
    torch.manual_seed(0)
    model = TwoConvTestModel(quantizer_cls)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [(torch.randn(2, 1, 4, 4), None) for _ in range(3)]
    QuantizationController(model, data).init_range()  # after the optimizer got the parameter list
    scale_after_init = model.act_quantizer.scale.detach().clone()
    for x, _ in data:
        optimizer.zero_grad()
        model(x).backward()
        optimizer.step()
    in_opt = any(p is model.act_quantizer.scale for g in optimizer.param_groups for p in g['params'])
    return scale_after_init, model.act_quantizer.scale.detach().clone(), in_opt


if __name__ == "__main__":
    init, trained, in_opt = _train(SymmetricQuantizer)
    assert not in_opt and torch.equal(init, trained), "buggy: optimizer updates a parameter the quantizer no longer uses"

    init, trained, in_opt = _train(SymmetricQuantizerFixed)
    assert in_opt and not torch.equal(init, trained), "fixed: the initialised scale keeps training"
    print("ok")
