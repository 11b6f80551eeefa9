"""VL312: a whole tensor converted (to another device or dtype) only to keep a slice of the result."""

from __future__ import annotations

import libcst as cst

from viewlint.analysis import features, semantics
from viewlint.analysis.tree import dotted_name
from viewlint.analysis.values import Kind
from viewlint.rule import Rule

_CONVERSIONS = semantics.CONVERTING_METHODS


class ConvertThenSlice(Rule):
    """
    ## What it does
    Flags, in a hot path (see VL401), a conversion to another device or dtype of a tensor the object or the module
    keeps (a table: `self.pos_freqs`, `self.cos_cached`, a module-level tensor) whose result is then sliced:
    `self.pos_freqs.to(device)[start:end]`. Only slices that drop elements (a bound or a step) count, with integers,
    `None` and `...` beside them: an index that keeps everything (`x.float()[..., None]`, `x.float()[:]`) or selects
    with a tensor is left alone. A tensor the call made or was handed (`lens.long()[:n]`) is left alone too: what it
    keeps is most of it, more often than not.

    ## Why it matters
    A conversion that changes anything copies the whole tensor: `self.pos_freqs.to(device)` moves the entire
    frequency table to the GPU on every call, to keep a few rows of it (diffusers PR #13406). The copy's size is the
    whole tensor's, its cost a transfer or a kernel over all of it, and the slice then keeps all of the new storage
    alive for as long as it lives. Slicing first converts only what is kept.

    ## Example
    ```python
    txt_freqs = self.pos_freqs.to(device)[max_vid_index : max_vid_index + max_txt_seq_len, ...]
    ```

    ## Fix
    ```python
    txt_freqs = self.pos_freqs[max_vid_index : max_vid_index + max_txt_seq_len, ...].to(device)
    ```
    Or keep the table where it is used (a buffer moves with the module). No automatic fix: the slice of the
    converted tensor is a view of it, the converted slice a tensor of its own, and code that relied on either
    layout would see the difference.
    """

    code = "VL312"
    reports_a_cost = True
    name = "convert-then-slice"
    summary = "A whole tensor converted to another device or dtype only to keep a slice: slice first"
    hot_path_only = True

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return ((features.flag("converted-slice"),),)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        call = node.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value in _CONVERSIONS) or not self.facts.in_hot_path:
            return
        method = call.func.attr.value
        if method in ("to", "type") and not call.args:
            return  # `x.type()` names the type; `x.to()` converts nothing
        if not _drops_elements(node):
            return
        receiver = call.func.value
        facts = self.facts
        held = dotted_name(strip_views(receiver)) or ""
        if not (held.startswith("self.") or (held in facts.index.module_names and held not in facts.index.aliases)):
            return  # a tensor this call made or was handed is mostly what is kept; a table the object keeps is not
        value = facts.value_of(receiver)
        if value.kind is not Kind.TENSOR and not (method not in ("to", "type", "int", "float", "bool", "long")
                                                     and value.kind is Kind.UNKNOWN):
            return  # `.to`, `.float()` and the like exist on other objects too: only a tensor known as one
        if method in semantics.DEVICE_MOVE_METHODS | {"to"} and self._already_there(value, call):
            return
        sliced = facts.short_source(node.slice[0].slice) if len(node.slice) == 1 else "…"
        text = facts.short_source(receiver, 40)
        self.report(
            node,
            f"`{facts.short_source(node)}` converts all of `{text}` (a copy whenever the conversion changes anything) "
            f"on every call of hot path {facts.hot_path_name}, to keep a slice of it",
            fix_message=f"slice first, then convert: `{text}[{sliced if len(node.slice) == 1 else '…'}].{method}(…)`",
        )

    def _already_there(self, value, call: cst.Call) -> bool:  # type: ignore[no-untyped-def]
        """A move to the CPU of a tensor known to be there returns it unchanged."""
        method = call.func.attr.value  # type: ignore[attr-defined]
        if method == "cpu":
            return bool(value.cpu)
        if method == "to" and call.args and isinstance(call.args[0].value, cst.SimpleString):
            return call.args[0].value.value.strip("'\"") == "cpu" and bool(value.cpu)
        return False


def strip_views(node: cst.BaseExpression) -> cst.BaseExpression:
    """`self.table` of `self.table.detach()`: what a chain of views and `.data` reads."""
    while True:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("detach",):
            node = node.func.value
        elif isinstance(node, cst.Attribute) and node.attr.value == "data":
            node = node.value
        else:
            return node


def _drops_elements(node: cst.Subscript) -> bool:
    """A basic index with at least one slice that has a bound or a step, and nothing but slices, integers, `None`
    and `...` beside it."""
    dropping = False
    for element in node.slice:
        index = element.slice
        if isinstance(index, cst.Slice):
            if index.lower is not None or index.upper is not None or index.step is not None:
                dropping = True
            continue
        if not isinstance(index, cst.Index) or not _basic(index.value):
            return False
    return dropping


def _basic(value: cst.BaseExpression) -> bool:
    """`None`, `...` or an integer literal."""
    if isinstance(value, cst.Ellipsis) or isinstance(value, cst.Integer):
        return True
    if isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer):
        return True
    return isinstance(value, cst.Name) and value.value == "None"
