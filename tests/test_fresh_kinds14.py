"""Kinds of code written fresh for pass fourteen, from public bug reports not tuned on before. Each kind is checked
with the prefilter on and off, and with real torch where the finding claims something about run time."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint_both_paths


def _lint(source: str) -> list[tuple[int, str]]:
    return lint_both_paths(textwrap.dedent(source).lstrip("\n"))


# ---------------------------------------------------------------- VL201: a loop over a gathered copy no name holds
LOOP_OVER_GATHER = """
    import torch


    def clear_rows(x: torch.Tensor, idx: torch.Tensor):
        for row in x[idx]:
            row.zero_()
        return x


    def clear_rows_named(x: torch.Tensor, idx: torch.Tensor):
        picked = x[idx]
        for row in picked:
            row.zero_()
        return picked


    def clear_rows_kept(x: torch.Tensor, idx: torch.Tensor):
        out = []
        for row in x[idx]:
            row.zero_()
            out.append(row)
        return out


    def clear_slices(x: torch.Tensor):
        for row in x[1:3]:
            row.zero_()
        return x
"""


def test_an_in_place_write_on_a_row_of_a_gathered_copy_no_name_holds_is_lost():
    # The rows of `x[idx]` are views of a copy only the loop sees; a named copy read later, a row kept, and rows of a
    # basic slice (views of `x`) are written into something that is read.
    assert _lint(LOOP_OVER_GATHER) == [(6, "VL201")]


def test_the_write_into_a_row_of_a_gathered_copy_really_leaves_the_tensor_unchanged():
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(textwrap.dedent(LOOP_OVER_GATHER), namespace)
    x = torch.ones(4, 3)
    namespace["clear_rows"](x, torch.tensor([0, 2]))
    assert bool((x == 1).all())  # nothing reached `x`
    namespace["clear_slices"](x)
    assert bool((x[1:3] == 0).all())  # rows of a basic slice are views: the write lands


# ---------------------------------------------------------------- VL203: a store into a conversion's result
STORE_INTO_CONVERSION = """
    import torch


    def set_first(w: torch.Tensor, y: torch.Tensor):
        w.T.contiguous()[0] = 1
        w.t().reshape(-1)[:2] += 1
        y.float()[0] = 1
        return w, y


    def write_kv(cache: torch.Tensor, slots: torch.Tensor, k: torch.Tensor):
        cache.flatten(0, 1)[slots] = k
        cache.view(-1, k.shape[-1])[slots] = k
        cache.reshape(-1)[0] = 0
        return cache
"""


def test_a_store_into_a_conversion_no_name_holds_is_lost_when_it_copies():
    # `.float()` copies a tensor of another dtype; a reshape or `.contiguous()` copies a transposed one. A reshape of
    # a cache of unknown layout is how contiguous caches are written into: not reported.
    assert _lint(STORE_INTO_CONVERSION) == [(5, "VL203"), (6, "VL203"), (7, "VL203")]


def test_the_store_into_a_transposed_conversion_really_is_lost():
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(textwrap.dedent(STORE_INTO_CONVERSION), namespace)
    w, y = torch.zeros(2, 3), torch.zeros(3, dtype=torch.float16)
    namespace["set_first"](w, y)
    assert bool((w == 0).all()) and bool((y == 0).all())
    cache = torch.zeros(2, 4, 3)
    namespace["write_kv"](cache, torch.tensor([1, 5]), torch.ones(2, 3))
    assert int((cache == 1).all(-1).sum()) == 2  # the contiguous cache took the rows
