"""VL204: an in-place write on an `expand`/`expand_as`/`broadcast_to` view."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from viewlint.analysis import features, semantics
from viewlint.rule import Rule

# Masked and indexed fills on overlapping memory do not raise: PyTorch warns they are deprecated.
_DEPRECATED_ON_EXPANDED = frozenset({"masked_fill_", "index_fill_", "index_put_", "masked_scatter_", "put_", "index_copy_"})


class InplaceOnExpanded(Rule):
    """
    ## What it does
    Flags an in-place write on a tensor made by `expand`, `expand_as` or `broadcast_to`,
    directly (`x.expand(4, 3).add_(1)`) or through a name (`e = x.expand_as(y); e.copy_(z)`),
    and `torch.nn.init.*_()` applied to one.

    ## Why it matters
    An expanded tensor repeats elements by giving the broadcast dimensions a stride of 0:
    many of its elements are one memory location. Arithmetic, `copy_` and random fills on
    it raise "unsupported operation: more than one element of the written-to tensor refers
    to a single memory location"; `masked_fill_`/`index_fill_`/`index_put_` only warn that
    this is deprecated and leave a result that depends on write order. When no dimension
    was actually broadcast the write goes straight into `x`, which is rarely what the code
    means either.

    `fill_` and `zero_` store one value everywhere and are well defined: they are not flagged.

    ## Example
    ```python
    bias = torch.zeros(1, 3)
    full = bias.expand(4, 3)
    full.add_(torch.ones(4, 3))  # RuntimeError
    ```

    ## Fix
    Materialise the broadcast first (`x.expand(4, 3).clone()`, `x.repeat(...)`), or use the
    out-of-place operation (`full = full + y`), which broadcasts without sharing memory.
    Fix safety: no automatic fix.
    """

    code = "VL204"
    name = "inplace-on-expanded"
    summary = "In-place write on an `expand/expand_as/broadcast_to` view (overlapping memory)"
    fix_applicability = None

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return tuple((features.flag("inplace-call"), ("call", m)) for m in ("broadcast_to", "expand", "expand_as"))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        qualified = self.facts.qualify(func) or ""
        if qualified.startswith(semantics.TORCH_NN_INIT_PREFIX):
            name = qualified.split(".")[-1]
            if not name.endswith("_") or not node.args or name in ("zeros_", "ones_", "constant_"):
                return  # zeros_/ones_/constant_ are uniform fills: well defined on overlapping memory
            target = node.args[0].value
            origin = self._expanded_origin(target)
            if origin is not None:
                self._report(node, f"`{name}({self.facts.short_source(target)})`", origin, name)
            return
        if not isinstance(func, cst.Attribute) or not semantics.is_inplace_method(func.attr.value):
            return
        method = func.attr.value
        if method in semantics.METADATA_INPLACE_METHODS or method in semantics.UNIFORM_FILL_METHODS:
            return
        origin = self._expanded_origin(func.value)
        if origin is not None:
            args = "(…)" if node.args else "()"
            self._report(node, f"`{self.facts.short_source(func.value)}.{method}{args}`", origin, method)

    def _expanded_origin(self, expr: cst.BaseExpression) -> Optional[str]:
        """`.expand()` etc. when `expr` is known to be the (direct) result of an expanding view."""
        value = self.facts.value_of(expr)
        if value.is_view and value.origin in semantics.EXPANDING_VIEW_ORIGINS:
            return value.origin
        return None

    def _report(self, node: cst.Call, what: str, origin: str, method: str) -> None:
        op = origin if origin.startswith(".") else f"{origin}()"
        if method in _DEPRECATED_ON_EXPANDED:
            consequence = "PyTorch warns this is deprecated and the result depends on write order"
        else:
            consequence = "this raises when a dimension was broadcast (its elements share one memory location)"
        self.report(
            node,
            f"{what} writes into a `{op}` view: {consequence}, and otherwise writes through to the expanded tensor",
            fix_message="materialise it first (`.clone()`, `.repeat(...)`) or use the out-of-place operation",
        )
