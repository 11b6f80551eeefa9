"""Kinds of code met in pass thirty, on a fifth blind set of reconstructed public bugs and a fifteenth audit of
libraries never read before (flash-linear-attention, GPyTorch, Pyro, PyG). Each lint kind is checked with the
prefilter on and off; what a finding claims, with real torch."""

from __future__ import annotations

from conftest import lint_snippet as _lint, run_snippet as _run

# ------------------------------------------- a docstring type with a non-tensor alternative says nothing
DOCUMENTED = """
    import torch


    class Guide:
        def quantiles(self, quantiles, loc):
            '''
            :param quantiles: A list of requested quantiles between 0 and 1.
            :type quantiles: torch.Tensor or list
            '''
            return torch.tensor(quantiles, dtype=loc.dtype, device=loc.device)

        def scaled(self, scale, loc):
            '''
            Args:
                scale (float or torch.Tensor): how much to scale by
            '''
            return torch.tensor(scale, device=loc.device) * loc

        def masked(self, mask, loc):
            '''
            Args:
                mask (torch.Tensor): a bool or float mask tensor
            '''
            return torch.tensor(mask, device=loc.device) * loc
"""


def test_a_docstring_type_with_a_list_or_number_alternative_is_not_a_tensor():
    found = _lint(DOCUMENTED)
    assert [c for _, c in found if c == "VL307"] == ["VL307"]  # only the parameter documented as a tensor alone
    assert [line for line, c in found if c == "VL307"] == [24]
    scope = _run(DOCUMENTED)
    torch = scope["torch"]
    guide, loc = scope["Guide"](), torch.zeros(3)
    assert guide.quantiles([0.05, 0.5, 0.95], loc).tolist() == [0.05000000074505806, 0.5, 0.949999988079071]
    assert guide.scaled(2.0, loc).tolist() == [0.0, 0.0, 0.0]  # a float: `torch.tensor` is the way to make it one
