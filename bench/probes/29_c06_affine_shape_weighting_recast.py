# source: kornia/kornia https://github.com/kornia/kornia/pull/4079 — PatchAffineShapeEstimator kept its Gaussian weighting as a plain attribute and every forward re-bound it with `self.weighting = self.weighting.to(patch.dtype).to(patch.device)` (a per-call dtype cast then device copy of module state); the fix registers it as a non-persistent buffer so .to() moves it once and forward only makes a local view.
import math

import torch
from torch import nn
import torch.nn.functional as F


def get_gaussian_kernel1d(kernel_size, sigma):
    x = torch.arange(kernel_size, dtype=torch.float32) - (kernel_size - 1) / 2.0
    gauss = torch.exp(-x.pow(2.0) / (2 * sigma**2))
    return gauss / gauss.sum()


def get_gaussian_kernel2d(kernel_size, sigma, force_even=False):
    kernel_x = get_gaussian_kernel1d(kernel_size[0], sigma[0])
    kernel_y = get_gaussian_kernel1d(kernel_size[1], sigma[1])
    return torch.outer(kernel_x, kernel_y)


class SpatialGradient(nn.Module):
    """Stand-in for kornia.filters.SpatialGradient (central differences, replicate border)."""

    def __init__(self, mode="sobel", order=1):
        super().__init__()

    def forward(self, x):
        p = F.pad(x, (1, 1, 1, 1), mode="replicate")
        gx = (p[..., 1:-1, 2:] - p[..., 1:-1, :-2]) * 0.5
        gy = (p[..., 2:, 1:-1] - p[..., :-2, 1:-1]) * 0.5
        return torch.stack([gx, gy], dim=2)


class PatchAffineShapeEstimator(nn.Module):
    """Module, which estimates the second moment matrix of the patch gradients."""

    def __init__(self, patch_size=19, eps=1e-10):
        super().__init__()
        self.patch_size = patch_size
        self.gradient = SpatialGradient("sobel", 1)
        self.eps = eps
        sigma = float(self.patch_size) / math.sqrt(2.0)
        self.weighting = get_gaussian_kernel2d((self.patch_size, self.patch_size), (sigma, sigma), True)

    def forward(self, patch):
        _, CH, W, H = patch.size()
        if (W != self.patch_size) or (H != self.patch_size) or (CH != 1):
            raise TypeError(f"input shape should be must be [Bx1x{self.patch_size}x{self.patch_size}]. Got {patch.size()}")
        self.weighting = self.weighting.to(patch.dtype).to(patch.device)  # want: C
        grads = self.gradient(patch) * self.weighting
        # unpack the edges
        gx = grads[:, :, 0]
        gy = grads[:, :, 1]
        # abc == 1st axis, mixture, 2nd axis. Ellipse_shape is a 2nd moment matrix.
        ellipse_shape = torch.cat(
            [
                gx.pow(2).mean(dim=2).mean(dim=2, keepdim=True),
                (gx * gy).mean(dim=2).mean(dim=2, keepdim=True),
                gy.pow(2).mean(dim=2).mean(dim=2, keepdim=True),
            ],
            dim=2,
        )
        return ellipse_shape


class PatchAffineShapeEstimatorFixed(PatchAffineShapeEstimator):
    def __init__(self, patch_size=19, eps=1e-10):
        nn.Module.__init__(self)
        self.patch_size = patch_size
        self.gradient = SpatialGradient("sobel", 1)
        self.eps = eps
        sigma = float(self.patch_size) / math.sqrt(2.0)
        self.register_buffer(
            "weighting",
            get_gaussian_kernel2d((self.patch_size, self.patch_size), (sigma, sigma), True),
            persistent=False,
        )

    def forward(self, patch):
        _, CH, W, H = patch.size()
        if (W != self.patch_size) or (H != self.patch_size) or (CH != 1):
            raise TypeError(f"input shape should be must be [Bx1x{self.patch_size}x{self.patch_size}]. Got {patch.size()}")
        weighting = self.weighting.to(device=patch.device, dtype=patch.dtype)
        grads = self.gradient(patch) * weighting
        # unpack the edges
        gx = grads[:, :, 0]
        gy = grads[:, :, 1]
        # abc == 1st axis, mixture, 2nd axis. Ellipse_shape is a 2nd moment matrix.
        ellipse_shape = torch.cat(
            [
                gx.pow(2).mean(dim=2).mean(dim=2, keepdim=True),
                (gx * gy).mean(dim=2).mean(dim=2, keepdim=True),
                gy.pow(2).mean(dim=2).mean(dim=2, keepdim=True),
            ],
            dim=2,
        )
        return ellipse_shape


if __name__ == "__main__":
    torch.manual_seed(0)
    buggy = PatchAffineShapeEstimator(19)
    fixed = PatchAffineShapeEstimatorFixed(19)
    patches = torch.rand(4, 1, 19, 19)

    assert torch.allclose(buggy(patches), fixed(patches))

    # a float64 call re-binds the buggy module state to a fresh float64 copy; fixed keeps its buffer
    ptr_a, ptr_b = buggy.weighting.data_ptr(), fixed.weighting.data_ptr()
    buggy(patches.double())
    fixed(patches.double())
    print("buggy weighting:", buggy.weighting.dtype, "new storage:", buggy.weighting.data_ptr() != ptr_a)
    print("fixed weighting:", fixed.weighting.dtype, "new storage:", fixed.weighting.data_ptr() != ptr_b)
    assert buggy.weighting.dtype == torch.float64 and fixed.weighting.dtype == torch.float32
    # and only the fixed module follows Module.to()
    print("buffers moved by .to():", "weighting" in dict(fixed.named_buffers()), "weighting" in dict(buggy.named_buffers()))
