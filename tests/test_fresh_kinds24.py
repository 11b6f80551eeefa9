"""Kinds of code met in pass twenty-four: each lint kind is checked with the prefilter on and off; what a message
claims, with real torch."""

from __future__ import annotations

import pytest

from conftest import lint_snippet as _lint, run_snippet as _run


# ---------------------------------------------------------------- linear algebra that checks for errors on the host
LINALG = """
    import numpy as np
    import torch
    from torch import nn
    from torch.linalg import solve


    class Step(nn.Module):
        def __init__(self, intrinsics):
            super().__init__()
            self.register_buffer("k_inv", torch.linalg.inv(intrinsics))

        def forward(self, cams: torch.Tensor, cov: torch.Tensor, rhs: torch.Tensor, table: np.ndarray):
            view = torch.linalg.inv(cams)
            lower = torch.linalg.cholesky(cov)
            x = solve(cov, rhs)
            values = torch.linalg.eigvalsh(cov)
            flipped = cams.inverse()
            quiet = torch.linalg.inv_ex(cams).inverse
            host = np.linalg.inv(table)
            return view, lower, x, values, flipped, quiet, host


    def checked(a):
        return torch.linalg.inv(a)
"""


def test_error_checking_linear_algebra_in_a_hot_path_is_a_host_read():
    # The `_ex` twin, NumPy's `inv`, set-up in `__init__` and a function no hot path calls stay quiet.
    assert _lint(LINALG) == [(13, "VL401"), (14, "VL401"), (15, "VL401"), (16, "VL401"), (17, "VL401")]


def test_what_the_linalg_message_claims_torch_does():
    # "checks its result for errors": the plain function raises on a singular input (it read the error codes back),
    # the `_ex` twin hands them over as a tensor and raises nothing.
    scope = _run(LINALG)
    torch = scope["torch"]
    singular = torch.zeros(1, 3, 3)
    with pytest.raises(torch.linalg.LinAlgError):
        scope["checked"](singular)
    _inverse, info = torch.linalg.inv_ex(singular)
    assert int(info[0]) > 0
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.cholesky(singular)
    _lower, info = torch.linalg.cholesky_ex(singular)
    assert int(info[0]) > 0
