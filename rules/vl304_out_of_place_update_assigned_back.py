"""VL304: `buf = buf.index_copy(…)`: an out-of-place update assigned back copies the whole buffer."""

from __future__ import annotations

import libcst as cst

from viewlint.analysis import semantics
from viewlint.analysis.module_index import dotted_name
from viewlint.diagnostics import Applicability
from viewlint.rule import Rule


class OutOfPlaceUpdateAssignedBack(Rule):
    """
    ## What it does
    Flags an out-of-place update whose result replaces its own receiver:
    `buf = buf.index_copy(0, idx, rows)`, `self.cache_k = self.cache_k.index_put((idx,), v)`,
    `x = x.scatter(1, idx, src)`, `mask = mask.index_fill(0, idx, True)`, and the same for
    `index_add`, `scatter_add`, `scatter_reduce`, `masked_scatter` and `masked_fill`.

    `masked_fill` is only flagged on long-lived buffers (`self.<attr>` and cache-like
    names): on a local score matrix the mask usually covers the whole tensor, the copy
    costs about what the in-place form does, and autograd code often needs the original.

    ## Why it matters
    The out-of-place form allocates a new tensor the size of the whole buffer and copies
    every element into it, only to change a few rows; the old buffer is then dropped.
    For a KV cache or a large state tensor that is a full read and write of the buffer
    (and a second buffer's worth of memory at the peak) on every call. The in-place form
    (`index_copy_`, `index_put_`, ...) writes only the selected elements.

    ## Example
    ```python
    self.cache_k = self.cache_k.index_copy(1, positions, k)   # copies the whole cache
    ```

    ## Fix
    ```python
    self.cache_k.index_copy_(1, positions, k)                 # writes only the new rows
    ```
    Fix safety: unsafe. The in-place form also changes every other reference to the
    buffer (a caller's tensor, a view of a larger cache) and can break autograd when the
    old value is needed for the backward pass.
    """

    code = "VL304"
    name = "out-of-place-update-assigned-back"
    summary = "`buf = buf.index_copy(…)` copies the whole buffer: use the in-place `_` form"
    fix_applicability = Applicability.UNSAFE
    triggers = ("index_copy(", "index_put(", "index_fill(", "index_add(", "scatter", "masked_fill(", "masked_scatter(")

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        call = node.value
        target = node.targets[0].target
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
            return
        method = call.func.attr.value
        if method not in semantics.OUT_OF_PLACE_UPDATE_METHODS:
            return
        target_name = dotted_name(target)
        receiver = call.func.value
        if target_name is None or dotted_name(receiver) != target_name or target_name in self.facts.index.aliases:
            return
        if method == "masked_fill" and not self._long_lived(target_name):
            return
        if any(arg.star for arg in call.args):
            return
        facts = self.facts
        arguments = ", ".join(
            (f"{arg.keyword.value}=" if arg.keyword is not None else "") + facts.module.code_for_node(arg.value)
            for arg in call.args
        )
        replacement = f"{facts.module.code_for_node(receiver)}.{method}_({arguments})"
        self.report(
            node,
            f"`{target_name} = {target_name}.{method}(…)` copies all of `{target_name}` to update a part of it",
            fix_message=f"update in place: `{target_name}.{method}_(…)`",
            edits=((node, replacement),),
        )

    def _long_lived(self, name: str) -> bool:
        if name.startswith("self."):
            return True
        return semantics.looks_long_lived(name.split(".")[-1], self.facts.settings.long_lived_names)
