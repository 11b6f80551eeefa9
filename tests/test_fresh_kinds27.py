"""Kinds of code met in pass twenty-seven, on the held-out dev models (`bench/truth.py --models heldout-dev`):
objects of a choice of classes (a list annotated `list[A | B]`, a submodule an `if` builds from classes of other
modules). Each lint kind is checked with the prefilter on and off; what a belief claims, with real torch."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import lint_snippet as _lint, run_snippet as _run
from viewlint.beliefs import beliefs_of_text
from viewlint.engine import lint_path
from viewlint.settings import Settings


def _beliefs(source: str, display: str = "m.py", source_path: str | None = None) -> dict[tuple[int, str], dict]:
    text = textwrap.dedent(source).lstrip("\n")
    return {(r["line"], r["target"]): r for r in beliefs_of_text(text, display, source_path=source_path)}


# ---------------------------------------------------------------- items of a list annotated with a union of classes
LAYERS = """
    import torch
    from abc import ABC, abstractmethod


    class Layer(ABC):
        @abstractmethod
        def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]: ...


    class Dynamic(Layer):
        def __init__(self):
            self.k = None
            self.v = None

        def update(self, k, v):
            self.k = k if self.k is None else torch.cat([self.k, k], dim=-2)
            self.v = v if self.v is None else torch.cat([self.v, v], dim=-2)
            return self.k, self.v


    class Linear(ABC):
        def update_state(self, s: torch.Tensor) -> torch.Tensor:
            return s


    class Cache:
        def __init__(self, layers: list[Layer | Linear] | None = None):
            self.layers = layers if layers is not None else []

        def update(self, k: torch.Tensor, v: torch.Tensor, i: int, path: str):
            keys, values = self.layers[i].update(k, v)
            torch.save(keys[0], path)
            return keys, values
"""


def test_a_method_of_an_item_of_a_list_of_classes_runs_the_classes_that_have_it():
    # `self.layers[i].update(k, v)` of `layers: list[Layer | Linear]`: `Linear` has no `update` (calling it would
    # raise), so it is `Layer.update`, annotated (and implemented) to return two tensors. Before, the union of classes
    # kept only its last one and a list of objects nothing, and `keys` was unknown (transformers' `Cache.update`).
    beliefs = _beliefs(LAYERS)
    assert beliefs[(31, "keys")]["tensor"] is True and beliefs[(31, "values")]["tensor"] is True
    assert beliefs[(28, "self.layers")]["tensor"] is False


def test_a_row_of_what_the_cache_layer_returns_saved_is_found_on_both_paths():
    assert (32, "VL103") in _lint(LAYERS)


def test_what_the_cache_layer_returns_is_a_tensor_whose_row_is_a_view_with_real_torch(tmp_path: Path):
    scope = _run(LAYERS)
    torch = scope["torch"]
    cache = scope["Cache"]([scope["Dynamic"]()])
    keys, values = cache.update(torch.randn(2, 3, 4), torch.randn(2, 3, 4), 0, str(tmp_path / "k.pt"))
    assert isinstance(keys, torch.Tensor) and isinstance(values, torch.Tensor)
    row = keys[0]
    assert row._base is keys and row.untyped_storage().nbytes() == keys.untyped_storage().nbytes() > row.nbytes
    assert torch.load(tmp_path / "k.pt").untyped_storage().nbytes() == keys.untyped_storage().nbytes()


REPLICATED = """
    import torch
    from abc import ABC, abstractmethod


    class Layer(ABC):
        @abstractmethod
        def update(self, k: torch.Tensor) -> torch.Tensor: ...


    class Dynamic(Layer):
        def __init__(self):
            self.k = None

        def update(self, k):
            self.k = k if self.k is None else torch.cat([self.k, k], dim=-2)
            return self.k


    class Cache:
        def __init__(self, layer_class: type[Layer] | None = None):
            self.layers = []
            self.layer_class = layer_class

        def update(self, k: torch.Tensor, i: int, path: str):
            while len(self.layers) <= i:
                self.layers.append(self.layer_class())
            keys = self.layers[i].update(k)
            torch.save(keys[0], path)
            return keys
"""


def test_an_object_built_by_a_class_held_in_an_attribute_is_of_that_class():
    # `self.layer_class()` of `layer_class: type[Layer] | None`: an object of `Layer`, appended to `self.layers`, whose
    # `update` is `Layer.update` (before, what the call built was unknown, and so was every item of the list:
    # transformers' `Cache.update_conv_state` with `layer_class_to_replicate`).
    assert _beliefs(REPLICATED)[(27, "keys")]["tensor"] is True


def test_a_row_of_what_the_replicated_layer_returns_saved_is_found_on_both_paths():
    assert (28, "VL103") in _lint(REPLICATED)


def test_the_replicated_layer_returns_a_tensor_whose_row_is_a_view_with_real_torch(tmp_path: Path):
    scope = _run(REPLICATED)
    torch = scope["torch"]
    cache = scope["Cache"](scope["Dynamic"])
    keys = cache.update(torch.randn(2, 3, 4), 0, str(tmp_path / "k.pt"))
    assert isinstance(cache.layers[0], scope["Dynamic"]) and keys[0]._base is keys
    assert torch.load(tmp_path / "k.pt").untyped_storage().nbytes() == keys.untyped_storage().nbytes() > keys[0].nbytes


UNREADABLE_BASE = """
    import torch
    from somewhere import Base


    class Layer:
        def update(self, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return k, k


    class Other(Base):
        pass


    def run(layers: list[Layer | Other], k: torch.Tensor):
        a, b = layers[0].update(k)
        return a
"""


def test_a_class_whose_base_is_not_read_may_have_the_method():
    # `Other` derives from a class of another package: it may have an `update` of its own; nothing is claimed.
    assert _beliefs(UNREADABLE_BASE)[(15, "a")]["tensor"] is None


# ---------------------------------------------------------------- a submodule built from a choice of imported classes
NORMS = '''
import torch
from torch import nn


class ZeroNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.linear = nn.Linear(dim, 4 * dim)
        self.norm = nn.LayerNorm(dim, elementwise_affine=False)

    def forward(self, x: torch.Tensor, emb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        shift, scale, gate, extra = self.linear(emb).chunk(4, dim=1)
        return self.norm(x) * (1 + scale[:, None]) + shift[:, None], gate, extra, scale


class ZeroNormX(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.linear = nn.Linear(dim, 6 * dim)
        self.norm = nn.LayerNorm(dim, elementwise_affine=False)

    def forward(self, x: torch.Tensor, emb: torch.Tensor) -> tuple[torch.Tensor, ...]:
        shift, scale, gate, extra, more, last = self.linear(emb).chunk(6, dim=1)
        return self.norm(x) * (1 + scale[:, None]) + shift[:, None], gate, extra, scale, more, last
'''

BLOCK = '''
import torch
from torch import nn

from .norms import ZeroNorm, ZeroNormX


class Block(nn.Module):
    def __init__(self, dim, kind):
        super().__init__()
        self.kind = kind
        if kind == "zero_x":
            self.norm1 = ZeroNormX(dim)
        elif kind == "zero":
            self.norm1 = ZeroNorm(dim)
        else:
            self.norm1 = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor, emb: torch.Tensor, path: str) -> torch.Tensor:
        if self.kind == "zero_x":
            h, gate, extra, scale, more, last = self.norm1(x, emb)
        elif self.kind == "zero":
            h, gate, extra, scale = self.norm1(x, emb)
        else:
            h = self.norm1(x)
            gate = emb
        torch.save(gate, path)
        return h * gate[:, None]
'''


def _package(tmp_path: Path) -> Path:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "norms.py").write_text(NORMS.lstrip("\n"))
    (package / "block.py").write_text(BLOCK.lstrip("\n"))
    return package / "block.py"


def test_a_submodule_of_a_choice_of_imported_classes_gives_what_either_forward_returns(tmp_path: Path):
    # `self.norm1` is one of two classes of another module, by the config; each `forward` returns the chunks of a
    # linear layer's output, one a 4-tuple and the other a 6-tuple (or it is a `LayerNorm`). Unpacked into four names,
    # it is the 4-tuple.
    # Before, a choice with an imported class held no class, and an imported `forward` annotated with a tuple gave
    # any module's output (diffusers' `JointTransformerBlock.norm1`: 12 of the dev set's 16 partial-view misses).
    block = _package(tmp_path)
    beliefs = _beliefs(BLOCK, "pkg/block.py", source_path=str(block))
    for row, name in ((20, "gate"), (20, "last"), (22, "gate"), (22, "scale")):
        assert beliefs[(row, name)]["tensor"] is True and beliefs[(row, name)]["view"] is True, (row, name)
    assert beliefs[(22, "h")]["tensor"] is True and beliefs[(22, "h")]["view"] is False
    # Bound to one name in the `else` of the tests of `self.kind`, it is the class built for the other settings: the
    # layer norm (without such a test it would be its tensor or one of the tuples, not known which: T5 binds a
    # layer's tuple to one name and indexes it).
    assert beliefs[(24, "h")]["tensor"] is True


def test_a_chunk_from_a_chosen_imported_norm_saved_is_found_on_both_paths(tmp_path: Path):
    block = _package(tmp_path)
    found = []
    for prefilter in (True, False):
        result = lint_path(block, str(block), Settings(select=("ALL",), prefilter=prefilter))
        found.append(sorted((d.start.row, d.code) for d in result.diagnostics))
    assert found[0] == found[1]
    assert (26, "VL103") in found[0]


def test_the_chunks_either_norm_returns_are_views_of_its_product_with_real_torch(tmp_path: Path):
    scope = _run(NORMS)
    torch = scope["torch"]
    x, emb = torch.randn(2, 3, 8), torch.randn(2, 8)
    for norm, count in ((scope["ZeroNorm"](8), 4), (scope["ZeroNormX"](8), 6)):
        out = norm(x, emb)
        assert len(out) == count
        assert out[0]._base is None
        for chunk in out[1:]:
            assert chunk._base is not None and chunk.untyped_storage().nbytes() == count * chunk.nbytes
    plain = torch.nn.LayerNorm(8)(x)
    assert isinstance(plain, torch.Tensor) and plain._base is None


# ---------------------------------------------------------------- a branch on the setting that chose the submodule
SETTING = """
    import torch
    from torch import nn


    class Zero(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.linear = nn.Linear(dim, 2 * dim)
            self.weight = nn.Parameter(torch.ones(dim))

        def forward(self, x, emb):
            scale, gate = self.linear(emb).chunk(2, dim=1)
            return x * (1 + scale[:, None]), gate


    class Block(nn.Module):
        def __init__(self, dim, norm_type="layer_norm"):
            super().__init__()
            self.norm_type = norm_type
            if norm_type == "zero":
                self.norm1 = Zero(dim)
            else:
                self.norm1 = nn.LayerNorm(dim)

        def forward(self, x, emb, path):
            if self.norm_type == "zero":
                h, gate = self.norm1(x, emb)
                torch.save(gate, path)
            elif self.norm_type in ("layer_norm", "layer_norm_i2vgen"):
                h = self.norm1(x)
            else:
                h = self.norm1(x)
            weight = self.norm1.weight
            return h
"""


def test_a_branch_on_the_setting_that_chose_a_submodule_runs_the_class_built_for_it():
    # `__init__` builds `self.norm1` as `Zero` where `norm_type == "zero"` and a `LayerNorm` elsewhere; `forward`
    # tests `self.norm_type` the same way. Where it is "layer_norm" (or anything but "zero") it is the layer norm, whose
    # output is one tensor; before, a choice that returns a tensor or a tuple bound to one name was unknown (diffusers'
    # `BasicTransformerBlock.norm1`, by `norm_type`).
    beliefs = _beliefs(SETTING)
    assert beliefs[(27, "h")]["tensor"] is True and beliefs[(27, "gate")]["view"] is True
    assert beliefs[(30, "h")]["tensor"] is True and beliefs[(30, "h")]["view"] is False
    assert beliefs[(32, "h")]["tensor"] is True  # neither "zero" (the first test) nor a layer-norm name
    assert beliefs[(33, "weight")]["tensor"] is True  # after the `if`, `self.norm1` reads as it always did


def test_a_chunk_saved_in_the_branch_of_its_setting_is_found_on_both_paths():
    assert (28, "VL103") in _lint(SETTING)


def test_each_setting_builds_the_class_its_branch_calls_with_real_torch(tmp_path: Path):
    scope = _run(SETTING)
    torch = scope["torch"]
    x, emb = torch.randn(2, 3, 4), torch.randn(2, 4)
    block = scope["Block"](4, "zero")
    block(x, emb, str(tmp_path / "gate.pt"))
    gate = scope["Zero"].forward(block.norm1, x, emb)[1]
    assert gate._base is not None and gate.untyped_storage().nbytes() == 2 * gate.nbytes
    assert torch.load(tmp_path / "gate.pt").untyped_storage().nbytes() == 2 * gate.nbytes  # the whole product saved
    plain = scope["Block"](4, "layer_norm")
    out = plain(x, emb, str(tmp_path / "unused.pt"))
    assert isinstance(plain.norm1, torch.nn.LayerNorm) and out._base is None and not (tmp_path / "unused.pt").exists()
