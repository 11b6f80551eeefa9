# source: NVIDIA-NeMo/RL https://github.com/NVIDIA-NeMo/RL/pull/1158 — clip_grad_by_total_norm_ built `grads = [to_local_if_dtensor(p.grad.detach()).to(dtype) ...]` and then did `g.mul_(clip_coeff)`; for bf16 params `.to(float32)` is a copy, so gradient clipping silently did nothing. The fix drops the dtype cast and scales the real gradient tensors in place.
import torch
import torch.nn as nn

try:
    from torch.distributed.tensor import DTensor
except ImportError:  # older torch
    from torch.distributed._tensor import DTensor


def to_local_if_dtensor(tensor):
    with torch.no_grad():
        return tensor.to_local() if isinstance(tensor, DTensor) else tensor


def get_grad_norm(parameters, dp_group=None, tp_group=None, norm_type=2, dtype=torch.float32):
    if isinstance(parameters, (torch.Tensor, DTensor)):
        parameters = [parameters]
    grads_for_norm = [to_local_if_dtensor(p.grad.detach()).to(dtype) for p in parameters if p.grad is not None]
    total_norm = torch.tensor(0.0, dtype=dtype)
    for grad in grads_for_norm:
        grad_norm = torch.linalg.vector_norm(grad, ord=norm_type, dtype=dtype)
        total_norm += torch.pow(grad_norm, norm_type)
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.all_reduce(total_norm, group=dp_group)
    return float(total_norm.item() ** (1.0 / norm_type))


def clip_grad_by_total_norm_(parameters, max_grad_norm, total_norm, dtype=torch.float32):
    """Clips gradient of an iterable of parameters by total norm (modified in place)."""
    if isinstance(parameters, (torch.Tensor, DTensor)):
        parameters = [parameters]

    # Grads.
    grads = [to_local_if_dtensor(p.grad.detach()).to(dtype) for p in parameters if p.grad is not None]  # want: B

    # Scale.
    clip_coeff = max_grad_norm / (total_norm + 1.0e-6)
    if clip_coeff < 1.0:
        for g in grads:
            g.mul_(clip_coeff)


def clip_grad_by_total_norm_fixed(parameters, max_grad_norm, total_norm):
    if isinstance(parameters, (torch.Tensor, DTensor)):
        parameters = [parameters]
    clip_coeff = max_grad_norm / (total_norm + 1.0e-6)
    if clip_coeff < 1.0:
        grads = [to_local_if_dtensor(p.grad.detach()) for p in parameters if p.grad is not None]
        for g in grads:
            g.mul_(clip_coeff)


def train_step(model, batch, max_grad_norm, clip_fn):
    model.zero_grad()
    loss = model(batch).float().pow(2).sum() * 100.0
    loss.backward()
    grad_norm = get_grad_norm(list(model.parameters()), dtype=torch.float32)
    clip_fn(list(model.parameters()), max_grad_norm=max_grad_norm, total_norm=grad_norm)
    return grad_norm, get_grad_norm(list(model.parameters()), dtype=torch.float32)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 8)).to(torch.bfloat16)
    batch = torch.randn(4, 32, dtype=torch.bfloat16)
    before, after = train_step(model, batch, 1.0, clip_grad_by_total_norm_)
    print(f"buggy: grad norm {before:.2f} -> {after:.2f} after clipping to 1.0")
    before_f, after_f = train_step(model, batch, 1.0, clip_grad_by_total_norm_fixed)
    print(f"fixed: grad norm {before_f:.2f} -> {after_f:.2f} after clipping to 1.0")
    assert after > 1.5 and after_f < 1.1
