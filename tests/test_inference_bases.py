"""Whether a tensor that owns its storage has `_base` set all the same (`Value.has_base`), as `viewlint beliefs`
reports it in `view`: a conversion that may return its input, or a view of it, and a module whose `forward` is not
known, are not claimed either way; a linear layer's bias the constructor is given, and the class of a submodule a class
method builds, are read from the module. What the analysis claims is checked against real torch where torch is
installed."""

from __future__ import annotations

import textwrap

import pytest

from test_inference_objects import beliefs

BASES = textwrap.dedent('''
    import torch
    from torch import nn


    class Reshaper(nn.Module):
        def forward(self, x):
            return x.view(-1)


    class Holder(nn.Module):
        def __init__(self, inner: nn.Module):
            super().__init__()
            self.inner = inner
            self.flatten = nn.Flatten()
            self.proj = nn.Linear(4, 4)

        def forward(self, x: torch.Tensor):
            """x (`torch.Tensor` of shape `(batch, seq, 4)`)"""
            strided = torch.empty_strided((3, 4), (1, 3))
            reshaped = strided.reshape(3, 4)
            copied = strided.contiguous()
            projected = self.proj(x.contiguous())
            cast = projected.float()
            held = self.inner(x)
            flat = self.flatten(x)
            return reshaped, copied, cast, held, flat
''').lstrip("\n")

ROWS = {"reshaped": 20, "copied": 21, "cast": 23, "held": 24, "flat": 25}


def test_what_may_return_its_input_or_a_view_of_it_is_not_claimed_either_way():
    found = beliefs(BASES)
    view = {target: found[(row, target)]["view"] for target, row in ROWS.items()}
    # A reshape views memory of any layout where its strides allow (here the same shape): not "owns, no base".
    assert view["reshaped"] is None
    # `.contiguous()` of a tensor that owns its storage and has no `_base`: itself or a copy, neither with one.
    assert view["copied"] is False
    # A cast of a linear layer's view of its product: that view itself when the dtype is already right.
    assert view["cast"] is None
    # A module this code does not know (it is passed in), and `nn.Flatten`: either may hand back a view.
    assert view["held"] is None and view["flat"] is None
    assert found[(20, "reshaped")]["tensor"] is True and found[(24, "held")]["tensor"] is True


def test_what_the_analysis_claims_of_bases_is_what_torch_does():
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(BASES, "bases.py", "exec"), namespace)  # noqa: S102 - the test's own snippet
    holder = namespace["Holder"](namespace["Reshaper"]()).eval()
    with torch.no_grad():
        outputs = dict(zip(["reshaped", "copied", "cast", "held", "flat"], holder(torch.randn(2, 3, 4))))
    found = beliefs(BASES)
    # Where the old claim ("owns its storage, no `_base`") was wrong, torch shows a view.
    assert all(outputs[name]._base is not None for name in ("reshaped", "cast", "held", "flat"))
    for name, row in ROWS.items():
        claimed = found[(row, name)]["view"]
        assert claimed is None or claimed is (outputs[name]._base is not None), name


FLAGS = textwrap.dedent('''
    import torch
    from torch import nn


    class Attention(nn.Module):
        def __init__(self, dim: int, bias: bool = True):
            super().__init__()
            self.out_proj = nn.Linear(dim, dim, bias=bias)

        def forward(self, x: torch.Tensor):
            """x (`torch.Tensor` of shape `(batch, seq, dim)`)"""
            out = self.out_proj(x.contiguous())
            return out


    class Mixed(Attention):
        def __init__(self, dim: int, bias: bool = True):
            super().__init__(dim)
            self.extra = nn.Linear(dim, dim, bias=bias)

        def forward(self, x: torch.Tensor):
            """x (`torch.Tensor` of shape `(batch, seq, dim)`)"""
            out = self.extra(x.contiguous())
            return out


    class Unbuilt(nn.Module):
        def __init__(self, dim: int, bias: bool = True):
            super().__init__()
            self.proj = nn.Linear(dim, dim, bias=bias)

        def forward(self, x: torch.Tensor):
            """x (`torch.Tensor` of shape `(batch, seq, dim)`)"""
            out = self.proj(x.contiguous())
            return out


    class Layer(nn.Module):
        def __init__(self, dim: int):
            super().__init__()
            self.attn = Attention(dim)
            self.cross = Attention(dim=dim)
            self.first = Mixed(dim, False)
            self.second = Mixed(dim)
''').lstrip("\n")


def test_a_bias_the_constructor_is_given_is_settled_by_how_the_module_builds_the_class():
    found = beliefs(FLAGS)
    # Built twice here, neither time given `bias`: its default, so the output is a view of the product.
    assert found[(12, "out")]["view"] is True
    # Built once with `bias=False` (positionally) and once with the default: no claim.
    assert found[(23, "out")]["view"] is None
    # Never built here: nothing shows how it is built.
    assert found[(34, "out")]["view"] is None
    # A subclass whose constructor passes `bias=False` up builds it too: no claim for `Attention` either.
    extended = FLAGS + textwrap.dedent('''


        class NoBias(Attention):
            def __init__(self, dim: int):
                super().__init__(dim, bias=False)
    ''')
    assert beliefs(extended)[(12, "out")]["view"] is None


def test_a_bias_settled_by_the_constructions_is_what_torch_does():
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(FLAGS, "flags.py", "exec"), namespace)  # noqa: S102 - the test's own snippet
    layer = namespace["Layer"](4).eval()
    with torch.no_grad():
        out = layer.attn(torch.randn(2, 3, 4))
    claimed = beliefs(FLAGS)[(12, "out")]
    assert claimed["view"] is (out._base is not None) and claimed["rank"] == out.dim()


BUILT_BY_CLASS_METHOD = textwrap.dedent('''
    from dataclasses import dataclass

    import torch
    from torch import nn


    @dataclass
    class Output:
        last_hidden_state: torch.Tensor


    class Tower(nn.Module):
        @classmethod
        def _from_config(cls, config):
            return cls()

        def forward(self, pixels) -> torch.Tensor:
            return Output(last_hidden_state=pixels * 2)


    class Head(nn.Module):
        @classmethod
        def from_config(cls, config):
            return cls()

        def forward(self, hidden):
            return hidden[:, 0]


    class Model(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.visual = Tower._from_config(config)
            self.head = Head.from_config(config)

        def forward(self, pixels: torch.Tensor):
            outputs = self.visual(pixels)
            first = self.head(pixels)
            return outputs, first
''').lstrip("\n")


def test_a_submodule_built_by_a_class_method_is_an_instance_of_that_class():
    """`self.visual = Tower._from_config(config)`: calls of it run `Tower.forward`, which here returns an output
    object (whatever its annotation says) and there a view of its input."""
    found = beliefs(BUILT_BY_CLASS_METHOD)
    assert found[(37, "outputs")]["tensor"] is False
    assert found[(38, "first")]["view"] is True and found[(38, "first")]["base"] == "pixels"
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(BUILT_BY_CLASS_METHOD, "built.py", "exec"), namespace)  # noqa: S102 - the test's own snippet
    pixels = torch.randn(2, 3)
    outputs, first = namespace["Model"](None)(pixels)
    assert not isinstance(outputs, torch.Tensor) and first._base is pixels
