# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/117167 — when nn.Module._apply could not use `param.data =` it registered a brand-new nn.Parameter, so an optimizer built before `model.to(...)` kept stepping the old tensors and the module weights were silently never updated; the PR adds a torch.utils.swap_tensors path that converts the existing Parameter objects in place.
import torch
import torch.nn as nn


def compute_should_use_set_data(tensor, tensor_applied, overwrite_on_conversion):
    if torch._has_compatible_shallow_copy_type(tensor, tensor_applied):
        return not overwrite_on_conversion
    return False


def _apply(module, fn, overwrite_on_conversion=True):
    for child in module.children():
        _apply(child, fn, overwrite_on_conversion)
    for key, param in module._parameters.items():
        if param is None:
            continue
        with torch.no_grad():
            param_applied = fn(param)
        if compute_should_use_set_data(param, param_applied, overwrite_on_conversion):
            param.data = param_applied
        else:
            module._parameters[key] = nn.Parameter(param_applied, param.requires_grad)  # maybe: B (replacing the Parameter object strands optimizer-held references; not an in-place write)
    return module


def _apply_swap(module, fn, overwrite_on_conversion=True):
    for child in module.children():
        _apply_swap(child, fn, overwrite_on_conversion)
    for key, param in module._parameters.items():
        if param is None:
            continue
        with torch.no_grad():
            param_applied = fn(param)
        torch.utils.swap_tensors(param, nn.Parameter(param_applied, param.requires_grad))
    return module


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def train_one_step(apply_fn):
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)  # built before the conversion
    apply_fn(model, lambda t: t.to(torch.float64))
    before = model.fc1.weight.detach().clone()
    x = torch.randn(16, 4, dtype=torch.float64)
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    return not torch.equal(before, model.fc1.weight.detach())


if __name__ == "__main__":
    moved = train_one_step(_apply)
    print("buggy: optimizer step changed module weights:", moved)
    assert not moved
    moved = train_one_step(_apply_swap)
    print("fixed: optimizer step changed module weights:", moved)
    assert moved
