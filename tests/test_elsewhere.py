"""Functions and module classes of other modules of the project that no annotation describes: walked where they are
defined (`viewlint.analysis.elsewhere`), for the walker and the prefilter alike."""

from __future__ import annotations

import textwrap
from pathlib import Path

from test_inference_objects import beliefs, package

from viewlint.engine import run
from viewlint.files import SourceFile
from viewlint.settings import Settings

LAYERS = """
    import torch
    from torch import nn


    class Conv1D(nn.Module):
        def __init__(self, nf, nx):
            super().__init__()
            self.nf = nf
            self.weight = nn.Parameter(torch.empty(nx, nf))
            self.bias = nn.Parameter(torch.zeros(nf))

        def forward(self, x):
            size_out = x.size()[:-1] + (self.nf,)
            x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
            return x.view(size_out)


    class Pair(nn.Module):
        def forward(self, x):
            return torch.tanh(x), None


    def make_noise(shape, device=None):
        latents = torch.randn(shape, device=device)
        return latents


    def lengths(shape):
        return [n for n in shape]


    def as_int(x):
        return x.to(torch.int64) if torch.jit.is_tracing() and isinstance(x, torch.Tensor) else int(x)


    def either(x, flag):
        if flag:
            return torch.ones(3)
        return [x]
"""

MODEL = """
    import torch
    from torch import nn

    from .layers import Conv1D, Pair, as_int, either, lengths, make_noise


    class MLP(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.c_fc = Conv1D(n, n)
            self.pair = Pair()

        def forward(self, hidden_states: tuple):
            projected = self.c_fc(hidden_states)
            doubled, nothing = self.pair(projected)
            noise = make_noise(projected.shape)
            sizes = lengths(projected.shape)
            side = as_int(projected.shape[-1])
            maybe = either(projected, side)
            return projected + noise, doubled, sizes, maybe
"""


def test_what_an_unannotated_class_or_function_of_another_module_gives_is_what_a_walk_of_it_there_finds(tmp_path):
    folder = package(tmp_path, layers=LAYERS)
    model = textwrap.dedent(MODEL).lstrip("\n")
    path = folder / "model.py"
    path.write_text(model)
    found = beliefs(model, "pkg/model.py", path)
    # `hidden_states` is annotated a tuple (a wrong annotation real code has): the layer's own code says what it gives.
    assert found[(14, "projected")]["tensor"] is True
    assert "`Conv1D.forward`, walked where it is defined" in found[(14, "projected")]["why"]
    # A view of what that module made (`x` bound again to an `addmm` result), not of what it was given.
    # All of it: storage of its own, through a view (its `_base` is the product that call made).
    assert (found[(14, "projected")]["view"], found[(14, "projected")]["base"]) == (True, None)
    assert (found[(15, "doubled")]["tensor"], found[(15, "nothing")]["tensor"]) == (True, False)
    assert (found[(16, "noise")]["tensor"], found[(16, "noise")]["view"]) == (True, False)  # made there
    assert found[(17, "sizes")]["tensor"] is None  # a list: what holds no tensor is not claimed either way
    # A tensor only while traced, an `int` in an eager run: not a tensor (and, holding none, not claimed either way).
    assert found[(18, "side")]["tensor"] is None
    assert found[(19, "maybe")]["tensor"] is None  # a tensor on one of its paths only: not claimed here
    alone = beliefs(model, "model.py")  # without the package, nothing is known of them
    assert alone[(16, "noise")]["tensor"] is None


SYNCING = """
    import torch
    from torch import nn

    from .layers import make_noise


    class Block(nn.Module):
        def forward(self, x):
            noise = make_noise(x.shape)
            if noise.any():
                x = x + noise
            return x
"""

HOST_NOISE = """
    def make_noise(shape, device=None):
        return [0.0 for _ in shape]
"""


def _findings(path: Path, prefilter: bool, cache: Path | None = None) -> list[tuple[int, str]]:
    settings = Settings(select=("VL403",), prefilter=prefilter)
    results = run([SourceFile(path, settings)], jobs=1, cache_directory=cache)
    return [(d.start.row, d.code) for r in results for d in r.diagnostics]


def test_a_finding_that_rests_on_a_walk_elsewhere_is_found_on_both_paths_and_follows_that_module(tmp_path):
    folder = package(tmp_path, layers=LAYERS)
    path = folder / "block.py"
    path.write_text(textwrap.dedent(SYNCING).lstrip("\n"))
    assert _findings(path, prefilter=True) == _findings(path, prefilter=False) == [(10, "VL403")]
    cache = tmp_path / "cache"
    assert _findings(path, True, cache) == [(10, "VL403")]
    (folder / "layers.py").write_text(textwrap.dedent(HOST_NOISE).lstrip("\n"))  # now a list: a plain truth test
    assert _findings(path, True, cache) == []


CACHES = """
import torch


class PaddingCache:
    def __init__(self):
        self.layers = {}

    def update(self, hidden_states, key):
        if key not in self.layers:
            self.layers[key] = torch.zeros_like(hidden_states)
        self.layers[key].copy_(hidden_states)
        return self.layers[key]


class KeepingCache:
    def __init__(self):
        self.layers = {}

    def update(self, hidden_states, key):
        self.layers[key] = hidden_states
        return hidden_states
"""

SUBCLASSED = """
import torch
from torch import nn

from pkg.caches import KeepingCache, PaddingCache


class ConvPaddingCache(PaddingCache):
    pass


class ConvKeepingCache(KeepingCache):
    pass


class Conv(nn.Module):
    def forward(self, hidden_states: torch.Tensor, padding_cache: ConvPaddingCache, kept_cache: ConvKeepingCache):
        last = hidden_states[..., -2:]
        padding_cache.update(last, "conv")
        kept_cache.update(last, "conv")
        return hidden_states
"""


def test_a_store_into_a_subclass_reads_the_method_it_inherits_from_another_module(tmp_path):
    """`class ConvPaddingCache(PaddingCache): pass`: its `update` is the base's, which copies (nothing kept) in
    one case and keeps its argument in the other; not the name heuristic's "a cache's `update` stores"."""
    folder = package(tmp_path, caches=CACHES)
    path = folder / "conv.py"
    path.write_text(textwrap.dedent(SUBCLASSED).lstrip("\n"))
    for prefilter in (True, False):
        results = run([SourceFile(path, Settings(select=("VL101",), prefilter=prefilter))], jobs=1, cache_directory=None)
        assert [(d.start.row, d.code) for r in results for d in r.diagnostics] == [(19, "VL101")], prefilter


BASE_MODEL = """
import torch
from torch import nn


class ASRModel(nn.Module):
    def __init__(self, vocab: int, ctc_weight: float = 0.5, weights: dict[str, float] = None):
        super().__init__()
        self.ctc_weight = ctc_weight
        self.lm_weight = weights["lm"]
        self.out_weight = nn.Parameter(torch.zeros(vocab, 4))
"""

SUBCLASS_MODEL = """
import torch

from pkg.base import ASRModel


class PITModel(ASRModel):
    def forward(self, loss_ctc: torch.Tensor, loss_att: torch.Tensor):
        if self.ctc_weight != 0.0:
            loss_att = loss_att + self.ctc_weight * loss_ctc
        if self.lm_weight > 0:
            loss_att = loss_att * 2
        if self.out_weight.sum() > 0:
            loss_att = loss_att * 3
        return loss_att
"""


def test_a_float_a_base_class_of_another_module_stores_is_no_tensor_in_a_subclass(tmp_path):
    """espnet's `if self.ctc_weight != 0.0:` in a subclass of `ESPnetASRModel`, whose `__init__` stores the float
    (and `self.lm_weight = weights["lm"]` of `weights: Dict[str, float]`): not a parameter by its name. A parameter
    the base class makes (`self.out_weight`) still is one."""
    folder = package(tmp_path, base=BASE_MODEL, pit=SUBCLASS_MODEL)
    path = folder / "pit.py"
    for prefilter in (True, False):
        results = run([SourceFile(path, Settings(select=("VL403",), prefilter=prefilter))], jobs=1, cache_directory=None)
        assert [(d.start.row, d.code) for r in results for d in r.diagnostics] == [(12, "VL403")], prefilter
