# source: SimplexLab/TorchJD https://github.com/SimplexLab/TorchJD/pull/557 — normalize() branched on a device scalar (`if squared_frobenius_norm < eps:`), forcing a CUDA synchronization every time a Gramian-based aggregator weighted the Jacobian; the fix selects the result with torch.where so the comparison never reaches Python.
import torch
from torch import Tensor, nn


def compute_gramian(matrix: Tensor) -> Tensor:
    """
    Computes the Gramian matrix of a given matrix.
    """
    return matrix @ matrix.T


def normalize(gramian: Tensor, eps: float) -> Tensor:
    """
    Normalizes the gramian `G=AA^T` with respect to the Frobenius norm of `A`.
    """
    squared_frobenius_norm = gramian.diagonal().sum()
    if squared_frobenius_norm < eps:  # want: D
        return torch.zeros_like(gramian)
    else:
        return gramian / squared_frobenius_norm


def normalize_fixed(gramian: Tensor, eps: float) -> Tensor:
    squared_frobenius_norm = gramian.diagonal().sum()
    condition = squared_frobenius_norm < eps

    # Use torch.where rather than a if-else to avoid cuda synchronization.
    output = torch.where(condition, torch.zeros_like(gramian), gramian / squared_frobenius_norm)
    return output


def regularize(gramian: Tensor, eps: float) -> Tensor:
    """
    Adds a regularization term to the gramian to enforce positive definiteness.
    """
    regularization_matrix = eps * torch.eye(gramian.shape[0], dtype=gramian.dtype, device=gramian.device)
    return gramian + regularization_matrix


class _Weighting(nn.Module):
    normalize_fn = staticmethod(normalize)

    def __init__(self, norm_eps=0.0001, reg_eps=0.0001, n_iters=20):
        super().__init__()
        self.norm_eps = norm_eps
        self.reg_eps = reg_eps
        self.n_iters = n_iters

    def forward(self, gramian: Tensor) -> Tensor:
        G = regularize(self.normalize_fn(gramian, self.norm_eps), self.reg_eps)
        # Device-side projected-gradient solve of min_w w^T G w s.t. w >= 1/m (fixed iteration count).
        m = G.shape[0]
        w = torch.full((m,), 1.0 / m, dtype=G.dtype, device=G.device)
        step = 1.0 / (G.diagonal().sum() + self.reg_eps)
        for _ in range(self.n_iters):
            w = (w - step * (G @ w)).clamp(min=1.0 / m)
        return w


class _WeightingFixed(_Weighting):
    normalize_fn = staticmethod(normalize_fixed)


class Aggregator(nn.Module):
    def __init__(self, weighting):
        super().__init__()
        self.weighting = weighting

    def forward(self, matrix: Tensor) -> Tensor:
        weights = self.weighting(compute_gramian(matrix))
        return weights @ matrix


def jac_to_grad(params, jacobians, aggregator):
    for p, jac in zip(params, jacobians):
        p.grad = aggregator(jac.flatten(1)).view_as(p)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Linear(6, 2)
    x = torch.randn(8, 6)
    losses = [model(x)[:, 0].pow(2).mean(), model(x)[:, 1].abs().mean()]
    params = list(model.parameters())
    jacs = [torch.stack(js) for js in zip(*[torch.autograd.grad(l, params, retain_graph=True) for l in losses])]
    jac_to_grad(params, jacs, Aggregator(_Weighting()))
    g_bug = [p.grad.clone() for p in params]
    jac_to_grad(params, jacs, Aggregator(_WeightingFixed()))
    assert all(torch.allclose(a, p.grad) for a, p in zip(g_bug, params))
    zero = torch.zeros(3, 3)
    assert torch.equal(normalize(zero, 1e-4), normalize_fixed(zero, 1e-4))
    print("aggregated grad norm:", float(params[0].grad.norm()))
