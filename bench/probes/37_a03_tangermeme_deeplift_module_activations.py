# source: jmschrei/tangermeme https://github.com/jmschrei/tangermeme/pull/84 — deep_lift_shap's forward hook stored detached views of each nonlinearity's input and output on the module itself (`module.input`, `module.output`), and `_clear_hooks()` only removed the hook handles. The detached tensors share storage with the full batched activations (references x shuffled backgrounds), so every attribution run left those activations pinned on the model until the model itself was freed. The fix deletes `module.input` / `module.output` in `_clear_hooks()`.
import torch
from torch import nn


def _f_hook(module, input, output):
    module.input = input[0].detach()  # want: A
    module.output = output.detach()  # want: A


def _b_hook(module, grad_input, grad_output):
    delta_in = module.input[: module.input.shape[0] // 2] - module.input[module.input.shape[0] // 2:]
    delta_out = module.output[: module.output.shape[0] // 2] - module.output[module.output.shape[0] // 2:]
    ratio = torch.where(delta_in.abs() < 1e-6, torch.ones_like(delta_in), delta_out / delta_in).repeat(2, 1)
    mult = torch.where(ratio == 1, grad_input[0], grad_output[0] * ratio)
    return (mult,)


def _register_hooks(model):
    handles = []
    for module in model.modules():
        if isinstance(module, nn.ReLU):
            handles.append(module.register_forward_hook(_f_hook))
            handles.append(module.register_full_backward_hook(_b_hook))
    return handles


def _clear_hooks(model, handles):
    for handle in handles:
        handle.remove()


def _clear_hooks_fixed(model, handles):
    for handle in handles:
        handle.remove()
    for module in model.modules():
        if hasattr(module, "input"):
            del module.input
        if hasattr(module, "output"):
            del module.output


def deep_lift_shap(model, X, references, clear_hooks=_clear_hooks):
    handles = _register_hooks(model)
    try:
        X_ = torch.cat([X, references]).requires_grad_()
        y = model(X_)[:, 0]
        y.sum().backward()
        attributions = (X_.grad[: X.shape[0]] * (X - references)).detach()
    finally:
        clear_hooks(model, handles)
    return attributions


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 256), nn.ReLU(), nn.Linear(256, 2))
    X = torch.randn(32, 16)
    references = torch.zeros(32, 16)

    attr = deep_lift_shap(model, X, references)
    relu = model[1]
    assert hasattr(relu, "input") and hasattr(relu, "output")
    kept = relu.output.untyped_storage().nbytes() + relu.input.untyped_storage().nbytes()
    assert kept >= 2 * 64 * 256 * 4

    model_fixed = nn.Sequential(nn.Linear(16, 256), nn.ReLU(), nn.Linear(256, 2))
    model_fixed.load_state_dict(model.state_dict())
    attr_fixed = deep_lift_shap(model_fixed, X, references, clear_hooks=_clear_hooks_fixed)
    assert not hasattr(model_fixed[1], "input") and not hasattr(model_fixed[1], "output")
    assert torch.allclose(attr, attr_fixed)
    print("ok")
