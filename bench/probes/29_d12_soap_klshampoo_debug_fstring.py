# source: NVIDIA-NeMo/Emerging-Optimizers https://github.com/NVIDIA-NeMo/Emerging-Optimizers/pull/255 — update_kronecker_factors_kl_shampoo logged `logging.debug(f"scale_factor[{idx}]: {scale_factor}")`; the f-string formats the CUDA tensor (a device-to-host copy) for every parameter on every step even when DEBUG is off; the fix switches to lazy %-style logging arguments.
import logging

import torch
from torch import nn


def conjugate(a: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    return p.T @ a @ p


@torch.no_grad()  # type: ignore[misc]
def update_kronecker_factors_kl_shampoo(
    kronecker_factor_list: list[torch.Tensor],
    grad: torch.Tensor,
    shampoo_beta: float,
    eigenbasis_list: list[torch.Tensor],
    eigvals_list: list[torch.Tensor],
    eps: float,
    eigval_exp: float = -1.0,
) -> None:
    if grad.dim() != 2:
        raise TypeError("KL-Shampoo mathematical correction is only supported for 2D tensors")

    updates = []
    for idx, (eigenbasis, approx_eigvals) in enumerate(zip(eigenbasis_list, eigvals_list, strict=True)):
        scale_factor = 1 / grad.shape[idx] * approx_eigvals.clamp_min(eps) ** eigval_exp

        logging.debug(f"scale_factor[{idx}]: {scale_factor}")  # want: D

        correction = (eigenbasis * scale_factor[None, :]) @ eigenbasis.T

        maybe_transpose_grad = grad.T if idx == 1 else grad
        updates.append(conjugate(correction, maybe_transpose_grad))

    # Note that updates caculated in previous loop are in reverse order of the kronecker factor list they apply to
    for kronecker_factor, update in zip(kronecker_factor_list, updates[::-1], strict=True):
        kronecker_factor.lerp_(update, 1 - shampoo_beta)


@torch.no_grad()  # type: ignore[misc]
def update_kronecker_factors_kl_shampoo_fixed(
    kronecker_factor_list: list[torch.Tensor],
    grad: torch.Tensor,
    shampoo_beta: float,
    eigenbasis_list: list[torch.Tensor],
    eigvals_list: list[torch.Tensor],
    eps: float,
    eigval_exp: float = -1.0,
) -> None:
    if grad.dim() != 2:
        raise TypeError("KL-Shampoo mathematical correction is only supported for 2D tensors")

    updates = []
    for idx, (eigenbasis, approx_eigvals) in enumerate(zip(eigenbasis_list, eigvals_list, strict=True)):
        scale_factor = 1 / grad.shape[idx] * approx_eigvals.clamp_min(eps) ** eigval_exp

        logging.debug("scale_factor[%s]: %s", idx, scale_factor)

        correction = (eigenbasis * scale_factor[None, :]) @ eigenbasis.T

        maybe_transpose_grad = grad.T if idx == 1 else grad
        updates.append(conjugate(correction, maybe_transpose_grad))

    for kronecker_factor, update in zip(kronecker_factor_list, updates[::-1], strict=True):
        kronecker_factor.lerp_(update, 1 - shampoo_beta)


class SOAP(torch.optim.Optimizer):
    kl_update = staticmethod(update_kronecker_factors_kl_shampoo)

    def __init__(self, params, lr=3e-3, shampoo_beta=0.95, eps=1e-8):
        super().__init__(params, dict(lr=lr, shampoo_beta=shampoo_beta, eps=eps))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["L"] = torch.eye(grad.shape[0], device=grad.device)
                    state["R"] = torch.eye(grad.shape[1], device=grad.device)
                    state["QL"] = torch.eye(grad.shape[0], device=grad.device)
                    state["QR"] = torch.eye(grad.shape[1], device=grad.device)
                    state["eigvals"] = [torch.ones(grad.shape[0]), torch.ones(grad.shape[1])]
                self.kl_update(
                    [state["L"], state["R"]], grad, group["shampoo_beta"],
                    [state["QL"], state["QR"]], state["eigvals"], group["eps"],
                )
                precond = state["QL"].T @ grad @ state["QR"]
                p.add_(state["QL"] @ precond @ state["QR"].T, alpha=-group["lr"])


class SOAPFixed(SOAP):
    kl_update = staticmethod(update_kronecker_factors_kl_shampoo_fixed)


def train(opt_cls):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16, bias=False), nn.Tanh(), nn.Linear(16, 4, bias=False))
    opt = opt_cls(model.parameters())
    for _ in range(5):
        loss = model(torch.randn(32, 8)).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    return [opt.state[p]["L"].clone() for p in model.parameters()]


if __name__ == "__main__":
    a, b = train(SOAP), train(SOAPFixed)
    assert all(torch.allclose(x, y) for x, y in zip(a, b))
    print("L factor traces:", [round(float(t.trace()), 4) for t in b])
