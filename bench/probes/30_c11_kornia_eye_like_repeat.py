# source: kornia/kornia https://github.com/kornia/kornia/pull/2059 — eye_like()/vec_like() built the batched identity / zero vector with `identity[None].repeat(input.shape[0], 1, 1)`, materialising B copies of an (N, N) constant on every call even for read-only uses; the fix returns `identity[None].expand(input.shape[0], n, n)` (a stride-0 view; current kornia exposes this as shared_memory=True for read-only callers).
import torch
from torch import Tensor


def eye_like(n: int, input: Tensor) -> Tensor:
    r"""Return a 2-D tensor with ones on the diagonal and zeros elsewhere with the same batch size as the input.

    Args:
        n: the number of rows :math:`(N)`.
        input: image tensor that will determine the batch size of the output matrix.
          The expected shape is :math:`(B, *)`.

    Returns:
       The identity matrix with the same batch size as the input :math:`(B, N, N)`.
    """
    if n <= 0:
        raise AssertionError(type(n), n)
    if len(input.shape) < 1:
        raise AssertionError(input.shape)

    identity = torch.eye(n, device=input.device, dtype=input.dtype)
    return identity[None].repeat(input.shape[0], 1, 1)  # want: C


def vec_like(n, tensor):
    r"""Return a 2-D tensor with a vector containing zeros with the same batch size as the input."""
    if n <= 0:
        raise AssertionError(type(n), n)
    if len(tensor.shape) < 1:
        raise AssertionError(tensor.shape)

    vec = torch.zeros(n, 1, device=tensor.device, dtype=tensor.dtype)
    return vec[None].repeat(tensor.shape[0], 1, 1)  # want: C


def eye_like_fixed(n: int, input: Tensor) -> Tensor:
    if n <= 0:
        raise AssertionError(type(n), n)
    if len(input.shape) < 1:
        raise AssertionError(input.shape)

    identity = torch.eye(n, device=input.device, dtype=input.dtype)
    return identity[None].expand(input.shape[0], n, n)


def vec_like_fixed(n, tensor):
    if n <= 0:
        raise AssertionError(type(n), n)
    if len(tensor.shape) < 1:
        raise AssertionError(tensor.shape)

    vec = torch.zeros(n, 1, device=tensor.device, dtype=tensor.dtype)
    return vec[None].expand(tensor.shape[0], n, 1)


def projection_from_Rt(rmat: Tensor, tvec: Tensor, eye_fn=eye_like, vec_fn=vec_like) -> Tensor:
    """Read-only use of the batched constants: P = [R | t] composed with the identity."""
    identity = eye_fn(3, rmat)
    zeros = vec_fn(3, rmat)
    Rt = torch.cat([torch.bmm(identity, rmat), tvec + zeros], dim=-1)  # (B, 3, 4)
    return Rt


if __name__ == "__main__":
    torch.manual_seed(0)
    B = 1024
    R = torch.randn(B, 3, 3)
    t = torch.randn(B, 3, 1)
    a = projection_from_Rt(R, t)
    b = projection_from_Rt(R, t, eye_like_fixed, vec_like_fixed)
    assert torch.allclose(a, b)
    img = torch.randn(B, 3, 8, 8)
    r, e = eye_like(64, img), eye_like_fixed(64, img)
    assert torch.equal(r, e)
    print("repeat: storage bytes", r.untyped_storage().nbytes(), "| expand:", e.untyped_storage().nbytes(),
          "stride", e.stride())
