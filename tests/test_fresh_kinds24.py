"""Kinds of code met in pass twenty-four: each lint kind is checked with the prefilter on and off; what a message
claims, with real torch."""

from __future__ import annotations

import pytest

from conftest import lint_snippet as _lint, run_snippet as _run


# ---------------------------------------------------------------- linear algebra that checks for errors on the host
LINALG = """
    import torch
    from torch import nn
    from torch.linalg import solve


    class Pose:
        def inverse(self):
            return Pose()


    class Step(nn.Module):
        def __init__(self, intrinsics):
            super().__init__()
            self.register_buffer("k_inv", torch.linalg.inv(intrinsics))

        def forward(self, cams: torch.Tensor, cov: torch.Tensor, rhs: torch.Tensor, pose: Pose):
            view = torch.linalg.inv(cams)
            lower = torch.linalg.cholesky(cov)
            x = solve(cov, rhs)
            values = torch.linalg.eigvalsh(cov)
            flipped = cams.inverse()
            quiet = torch.linalg.inv_ex(cams).inverse
            back = pose.inverse()
            return view, lower, x, values, flipped, quiet, back


    def checked(a):
        return torch.linalg.inv(a)
"""


def test_error_checking_linear_algebra_in_a_hot_path_is_a_host_read():
    # The `_ex` twin, another object's `.inverse()`, set-up in `__init__` and a function no hot path calls stay quiet.
    assert _lint(LINALG) == [(17, "VL401"), (18, "VL401"), (19, "VL401"), (20, "VL401"), (21, "VL401")]


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


# ---------------------------------------------------------------- a bare call of a function that only makes a tensor
MAKERS = """
    import math
    import torch
    from torch import nn

    CACHE = {}


    def random_weight(shape):
        fan_in = math.prod(shape[1:])
        w = torch.randn(shape) * math.sqrt(2.0 / fan_in)
        w.requires_grad = True
        return w


    def zero_weight(shape):
        return torch.zeros(shape, requires_grad=True)


    def scaled(x):
        y = x * 2
        y.add_(1)
        return y


    def cached(shape):
        w = torch.randn(shape)
        CACHE[shape] = w
        return w


    def filled(x):
        x.fill_(0)
        return x.clone()


    def checked(x):
        assert x.dim() == 2
        return x.float()


    def logged(x):
        print(x.shape)
        return x * 2


    def aliased(x):
        y = x
        y += 1
        return y * 1


    def init_weights(m):
        if isinstance(m, nn.Linear):
            random_weight(m.weight.size())
            zero_weight(m.bias.size())
            scaled(m.weight)
            cached((2, 2))
            filled(m.weight)
            checked(m.weight)
            logged(m.weight)
            aliased(m.weight)


    def init_weights_fixed(m):
        if isinstance(m, nn.Linear):
            m.weight.data = random_weight(m.weight.size())
            m.bias.data = zero_weight(m.bias.size())
"""


def test_a_bare_call_of_a_function_that_only_makes_a_tensor_loses_it():
    # Quiet where the function writes into what it is given, into module state, prints, checks (assert) or aliases its
    # argument: the call may be made for that.
    assert [row for row, code in _lint(MAKERS) if code == "VL205"] == [54, 55, 56]


def test_what_the_makers_message_claims_torch_does():
    # "changes nothing else": the module is as it was after the bare calls; the fixed twin changes it.
    scope = _run(MAKERS)
    torch = scope["torch"]
    layer = torch.nn.Linear(3, 2)
    before = layer.weight.detach().clone(), layer.bias.detach().clone()
    for name in ("random_weight", "zero_weight", "scaled"):
        scope[name](layer.weight.size() if name != "scaled" else layer.weight.detach())
    assert torch.equal(layer.weight, before[0]) and torch.equal(layer.bias, before[1])
    scope["init_weights_fixed"](layer)
    assert not torch.equal(layer.weight, before[0]) and not layer.bias.any()


def test_a_function_that_converts_or_sorts_what_it_is_given_is_not_a_maker():
    # `module.half()` converts the module in place; `items.sort()` sorts the caller's list.
    source = """
        import torch


        def halved(module):
            module.half()
            return torch.zeros(1)


        def ordered(items):
            items.sort()
            return torch.tensor(items[:1])


        def run(module, items):
            halved(module)
            ordered(items)
    """
    assert [row for row, code in _lint(source) if code == "VL205"] == []


def test_a_cached_function_is_called_to_fill_its_cache():
    # vLLM's `@cache def value_rows(device, rows, heads): return torch.empty(...)`, called bare to allocate once before
    # the KV cache is sized: the cache keeps the tensor. `@torch.no_grad()` changes only what autograd records.
    source = """
        from functools import cache

        import torch


        @cache
        def value_rows(rows, heads):
            return torch.empty(heads * rows * 128)


        @torch.no_grad()
        def noise(n):
            return torch.randn(n)


        def prepare(rows, heads):
            value_rows(rows, heads)
            noise(4)
    """
    assert [row for row, code in _lint(source) if code == "VL205"] == [18]


def test_what_makes_only_answers_does_not_depend_on_what_was_asked_before():
    # A callee is read with less depth than the function asked about: asking it first must not change the answer.
    import ast

    from viewlint.analysis.callgraph import callgraph_of
    from viewlint.analysis.module_index import build_index_from_ast
    from viewlint.analysis.purity import makes_only

    source = (
        "import torch\n\n\n"
        "def f(n):\n    return torch.zeros(n)\n\n\n"
        "def g(n):\n    return f(n) + 1\n\n\n"
        "def h(n):\n    return g(n) * 2\n"
    )

    def answers(order):
        graph = callgraph_of(build_index_from_ast(ast.parse(source), source))
        return {name: makes_only(graph, name) for name in order}

    first = answers(["h", "g", "f"])
    assert first == answers(["f", "g", "h"])
    assert first["f"] and first["g"]
