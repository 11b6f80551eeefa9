"""Kinds of code met in pass twenty-two (a precision audit of three libraries not read before, and blind round
sixteen): each finding's message names the evidence the engine has. Each lint kind is checked with the prefilter on
and off; what a message claims, with real torch."""

from __future__ import annotations

import textwrap

from conftest import lint_snippet as _lint, run_snippet as _run


# ---------------------------------------------------------------- an item of a list is not an indexing of a tensor
GRADIENT_CHUNKS = """
    import torch


    def reduce_chunks(grads, num_chunks, dtype):
        dv = [torch.zeros(grads[0].shape, dtype=torch.float) for _ in range(num_chunks)]
        out = []
        for i in range(num_chunks):
            dv[i].add_(grads[i])
            dv[i] = dv[i].to(dtype)
            out.append(dv[i].contiguous())
        return out
"""


def test_contiguous_of_a_list_item_names_the_stored_item_not_advanced_indexing(lint_source):
    # DeepSpeed's FPDT backward (`dv[i].contiguous()` of a list of `torch.zeros` chunks): the finding holds, and its
    # reason is the item stored, not a gather by an index tensor.
    assert _lint(GRADIENT_CHUNKS) == [(10, "VL301")]
    [(_, _, message)] = [f for f in lint_source(textwrap.dedent(GRADIENT_CHUNKS).lstrip("\n")) if f[1] == "VL301"]
    assert "(it is an item of `dv`, stored contiguous)" in message and "advanced indexing" not in message


def test_the_stored_item_is_contiguous_and_contiguous_returns_it():
    scope = _run(GRADIENT_CHUNKS)
    torch = scope["torch"]
    grads = [torch.randn(3, 4).t() for _ in range(2)]  # strided inputs: the items are still built contiguous
    dv = [torch.zeros(grads[0].shape) for _ in range(2)]
    dv[0].add_(grads[0])
    item = dv[0].to(torch.float16)
    assert item.is_contiguous() and item.contiguous() is item
    assert all(t.is_contiguous() for t in scope["reduce_chunks"](grads, 2, torch.float16))
