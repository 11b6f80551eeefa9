# source: aradha/recursive_feature_machines PR #10 — EigenPro's `tensor()` helper and preconditioner setup call `torch.tensor(...)` on values that are already tensors (then `.to(device)`), copying each one and raising "To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach()".
import numpy as np
import torch
import torch.nn as nn


def nystrom_kernel_eig(samples: torch.Tensor, kernel_fn, q: int):
    kmat = kernel_fn(samples, samples) / samples.shape[0]
    eigvals, eigvecs = torch.linalg.eigh(kmat)
    return eigvals.flip(0)[:q], eigvecs.flip(1)[:, :q]


def asm_eigenpro_fn(samples: torch.Tensor, kernel_fn, top_q: int, alpha: float = 0.95):
    eigvals, eigvecs = nystrom_kernel_eig(samples, kernel_fn, top_q)
    eigvals, tail_eigval = eigvals[:top_q - 1], eigvals[top_q - 1]
    eigvecs = eigvecs[:, :top_q - 1]
    device = samples.device
    eigvals_t = torch.tensor(eigvals.numpy().copy()).to(device)  # from a numpy array: torch.tensor is the right call
    eigvecs_t = torch.tensor(eigvecs).to(device)  # want: C
    tail_eigval_t = torch.tensor(tail_eigval, dtype=torch.float).to(device)  # want: C
    diag_t = (1 - torch.pow(tail_eigval_t / eigvals_t, alpha)) / eigvals_t

    def eigenpro_fn(grad, kmat):
        return torch.mm(eigvecs_t * diag_t, torch.mm(torch.mm(grad.t(), kmat), eigvecs_t).t())

    return eigenpro_fn, float(eigvals[0] / tail_eigval)


class FKR_EigenPro(nn.Module):
    def __init__(self, kernel_fn, centers: torch.Tensor, y_dim: int, device="cpu"):
        super().__init__()
        self.kernel_fn, self.device = kernel_fn, device
        self.n_centers, self.x_dim = centers.shape
        self.centers = self.tensor(centers)  # want: C
        self.weight = self.tensor(torch.zeros(self.n_centers, y_dim))  # want: C
        self.ids = torch.as_tensor(np.arange(self.n_centers), device=device)  # shares numpy memory on CPU: fine

    def tensor(self, data, dtype=None):
        return torch.tensor(data, dtype=dtype, requires_grad=False).to(self.device)  # maybe: C (callers pass numpy arrays as well as tensors)

    def forward(self, samples):
        return self.kernel_fn(samples, self.centers).mm(self.weight)

    def evaluate(self, x_eval: np.ndarray):
        x_batch = self.tensor(x_eval)  # a numpy batch: the copy is needed
        return self.forward(x_batch)


def laplacian(a, b, bandwidth=10.0):
    return torch.exp(-torch.cdist(a, b) / bandwidth)


if __name__ == "__main__":
    import warnings

    torch.manual_seed(0)
    centers = torch.randn(32, 5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = FKR_EigenPro(laplacian, centers, 2)
        fn, gap = asm_eigenpro_fn(centers, laplacian, 8)
    assert sum("copy construct" in str(w.message) for w in caught) == 4
    assert model.centers.data_ptr() != centers.data_ptr()  # torch.tensor copied a tensor
    assert fn(torch.randn(32, 2), laplacian(centers, centers)).shape == (32, 2) and gap > 1
    assert model.evaluate(np.random.randn(4, 5).astype(np.float32)).shape == (4, 2)
    print("ok: torch.tensor(existing_tensor) makes a copy (and .to(device) may make another)")
