"""Which dimensions of a tensor expression are known to have size 1, and which reads of a tensor broadcast it.

`mask.unsqueeze(1)` has a dimension of size 1 at position 1, `x[..., None]` at position -1, `x[:, None, None]` at
positions 1 and 2. Repeating a tensor along such a dimension (`mask.unsqueeze(1).repeat(1, c, 1, 1)`) copies its
values `c` times, where `expand` gives the same values as a view; a read that broadcasts its operands (arithmetic,
a comparison, `torch.where`, an attention mask) does not need the copy. Read off libcst nodes; VL311 asks.
"""

from __future__ import annotations

import ast
from typing import Callable, NamedTuple, Optional

import libcst as cst

from viewlint.analysis.semantics import CONVERTING_METHODS, SHAPE_KEEPING_CONVERSIONS
from viewlint.analysis.tree import dotted_name

# `torch.where`'s three operands and an attention function's mask broadcast against the other operands.
_BROADCASTING_FUNCTIONS = frozenset({"where"})  # as `torch.where`
_MASK_KEYWORD = "attn_mask"
_ATTENTION_FUNCTIONS = frozenset({"scaled_dot_product_attention"})
# Comparisons a tensor makes element by element (`is`, `in` ask about the object).
_ELEMENTWISE_COMPARISONS = (cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)


class UnitDims(NamedTuple):
    """Positions of size-1 dimensions: counted from the left (`from_left`, 0-based) and from the right
    (`from_right`, negative: -1 is the last)."""

    from_left: frozenset[int]
    from_right: frozenset[int]


def _integer(node: cst.BaseExpression) -> Optional[int]:
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value)
    return None


def strip_conversions(node: cst.BaseExpression) -> cst.BaseExpression:
    """`x.unsqueeze(1).float().to(y)` -> `x.unsqueeze(1)`."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in SHAPE_KEEPING_CONVERSIONS:
        node = node.func.value
    return node


def unit_dims(node: cst.BaseExpression) -> Optional[UnitDims]:
    """The size-1 dimensions `node` is made with (`unsqueeze`, `None` in an index), looking through conversions;
    None when it makes none that are known."""
    node = strip_conversions(node)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "unsqueeze" \
            and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
        where = _integer(node.args[0].value)
        if where is None:
            return None
        inner = unit_dims(node.func.value) or UnitDims(frozenset(), frozenset())
        if where >= 0:  # the dimensions left of it keep their positions; the right-hand count is unknown
            return UnitDims(frozenset({p for p in inner.from_left if p < where} | {where}), frozenset())
        # From the right: the dimensions right of the new one keep their (negative) positions.
        return UnitDims(frozenset(), frozenset({p for p in inner.from_right if p > where}
                                               | {p - 1 for p in inner.from_right if p <= where} | {where}))
    if isinstance(node, cst.Subscript):
        elements = [element.slice for element in node.slice]
        if not any(_is_none(e) for e in elements) or not all(_is_none(e) or _whole(e) or _ellipsis(e) for e in elements):
            return None
        ellipses = [i for i, e in enumerate(elements) if _ellipsis(e)]
        if len(ellipses) > 1:
            return None
        if ellipses:
            cut = ellipses[0]
            left = frozenset(i for i, e in enumerate(elements[:cut]) if _is_none(e))
            after = elements[cut + 1:]
            right = frozenset(i - len(after) for i, e in enumerate(after) if _is_none(e))
            return UnitDims(left, right)
        return UnitDims(frozenset(i for i, e in enumerate(elements) if _is_none(e)), frozenset())
    return None


def _is_none(element: cst.BaseSlice) -> bool:
    return isinstance(element, cst.Index) and isinstance(element.value, cst.Name) and element.value.value == "None"


def _ellipsis(element: cst.BaseSlice) -> bool:
    return isinstance(element, cst.Index) and isinstance(element.value, cst.Ellipsis)


def _whole(element: cst.BaseSlice) -> bool:
    return isinstance(element, cst.Slice) and element.lower is None and element.upper is None and element.step is None


def repeats_only_unit_dims(factors: list[cst.BaseExpression], dims: UnitDims, rank: Optional[int]) -> bool:
    """Whether `.repeat(*factors)` of a tensor whose size-1 dimensions are `dims` (and whose rank is `rank`, if
    known) repeats only along size-1 dimensions or new leading ones, and along at least one: what `expand` does.
    With the rank unknown, the factors are taken to count the tensor's dimensions (the common spelling)."""
    count = len(factors)
    leading = count - rank if rank is not None else 0
    if leading < 0:
        return False
    repeated = False
    for position, factor in enumerate(factors):
        if _integer(factor) == 1:
            continue
        repeated = True
        if position < leading:
            continue  # a new leading dimension: broadcasting adds it too
        if position - leading not in dims.from_left and position - count not in dims.from_right:
            return False
    return repeated


def broadcasting_read(node: cst.CSTNode, parents: "dict[int, cst.CSTNode]",
                      qualify: Callable[[cst.BaseExpression], Optional[str]]) -> bool:
    """Whether the expression `node` is read only by an operation that broadcasts it against other operands: an
    arithmetic operator or comparison, `~`/`-`, an operand of `torch.where`, an attention function's `attn_mask`,
    the mask of `masked_fill`; through the arms of a conditional expression (`m if m is not None else None`)."""
    parent = parents.get(id(node))
    while isinstance(parent, cst.IfExp) and node is not parent.test:
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, cst.BinaryOperation):
        return not isinstance(parent.operator, (cst.MatrixMultiply, cst.MatrixMultiplyAssign))
    if isinstance(parent, cst.Comparison):
        return all(isinstance(target.operator, _ELEMENTWISE_COMPARISONS) for target in parent.comparisons)
    if isinstance(parent, cst.ComparisonTarget):
        return isinstance(parent.operator, _ELEMENTWISE_COMPARISONS)
    if isinstance(parent, cst.UnaryOperation):
        return isinstance(parent.operator, (cst.BitInvert, cst.Minus))
    if not isinstance(parent, cst.Arg):
        return False
    call = parents.get(id(parent))
    if not isinstance(call, cst.Call):
        return False
    name = (dotted_name(call.func) or "").rsplit(".", 1)[-1]
    position = next((i for i, arg in enumerate(call.args) if arg is parent), -1)
    if name in _BROADCASTING_FUNCTIONS and parent.keyword is None and not parent.star:
        return (qualify(call.func) or "") == "torch.where"
    if name in _ATTENTION_FUNCTIONS:
        return (parent.keyword is not None and parent.keyword.value == _MASK_KEYWORD) or (parent.keyword is None and position == 3)
    if name == "masked_fill" and isinstance(call.func, cst.Attribute) and parent.keyword is None:
        return position == 0  # `x.masked_fill(mask, value)`: the mask broadcasts to `x`
    return False


def makes_unit_dims(node: ast.AST) -> bool:
    """On the module's `ast`, for the prefilter: `x.unsqueeze(d)` or `x[..., None]` under shape-keeping conversions, where
    `unit_dims` may find size-1 dimensions (it reads the libcst node the rule is given, with the positions)."""
    while type(node) is ast.Call and type(node.func) is ast.Attribute \
            and node.func.attr in SHAPE_KEEPING_CONVERSIONS:  # type: ignore[attr-defined]
        node = node.func.value  # type: ignore[attr-defined]
    if type(node) is ast.Call:
        return type(node.func) is ast.Attribute and node.func.attr == "unsqueeze"  # type: ignore[attr-defined]
    if type(node) is not ast.Subscript:
        return False
    index = node.slice  # type: ignore[attr-defined]
    return any(type(e) is ast.Constant and e.value is None for e in (index.elts if type(index) is ast.Tuple else [index]))


def sliced_conversion(node: ast.AST) -> bool:
    """On the module's `ast`, for the prefilter: `x.to(d)[a:b]`, `x.long()[:n]`: a conversion's result sliced with a
    bound or a step, what VL312 reads."""
    value = node.value  # type: ignore[attr-defined]
    if not (type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr in CONVERTING_METHODS):
        return False
    index = node.slice  # type: ignore[attr-defined]
    return any(type(e) is ast.Slice and (e.lower is not None or e.upper is not None or e.step is not None)
               for e in (index.elts if type(index) is ast.Tuple else [index]))
