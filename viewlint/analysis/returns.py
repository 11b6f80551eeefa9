"""What a function returns, read off its `ast`: a plain Python value by its annotation (`-> int`,
`-> dict[str, int]`), or possibly a tensor (a `return` of something other than a constant, a comparison
by identity or membership, or `len(...)`-like builtins). Asked by the summaries and the prefilter's
`TensorContext`, about the functions the call graph (`viewlint.analysis.callgraph`) lists."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from viewlint.analysis.nodes import dotted
from viewlint.analysis.values import Kind, Provenance, Value

if TYPE_CHECKING:
    from viewlint.analysis.callgraph import FunctionInfo


# How `made_inside` names a base: "x made in Conv1D.forward".
MADE_IN = " made in "
_HOST_SCALARS = frozenset({"None", "int", "float", "bool", "str", "bytes"})
_HOST_CONTAINERS = frozenset({"dict", "Dict", "set", "Set", "frozenset", "FrozenSet"})


def host_annotation(annotation: Optional[ast.AST]) -> bool:
    """`-> None`, `-> int`, `-> bool`, `-> dict[str, int]`: the function returns a plain Python value. Not a bare
    `-> dict` (nor `Dict[str, Any]`): it says what holds the values, not what they are (row views of a batch)."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant):
        return annotation.value is None
    if isinstance(annotation, ast.Subscript):
        if (dotted(annotation.value) or "").split(".")[-1] not in _HOST_CONTAINERS:
            return False
        items = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        return all(host_annotation(item) for item in items)  # `dict[str, int]`, `set[tuple]`... of scalars
    return (dotted(annotation) or "").split(".")[-1] in _HOST_SCALARS


def _plain_return(value: ast.AST) -> bool:
    """A returned expression that is a Python value whatever the names in it are."""
    kind = type(value)
    if kind is ast.Constant or kind is ast.JoinedStr:
        return True
    if kind is ast.Compare:
        return any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in value.ops)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp and type(value.op) is ast.Not:  # type: ignore[attr-defined]
        return True
    if kind is ast.BoolOp:
        return all(_plain_return(v) for v in value.values)  # type: ignore[attr-defined]
    if kind is ast.Call:
        return (dotted(value.func) or "") in ("len", "isinstance", "hasattr", "str", "repr", "callable", "id")  # type: ignore[attr-defined]
    return False


def may_return_tensor(info: "FunctionInfo", nodes: list[ast.AST]) -> bool:
    """Whether the walker may find a tensor (or a container of them) in what a call of `info` returns."""
    if not info.returns_value or host_annotation(info.returns):
        return False
    return any(type(n) is ast.Yield or type(n) is ast.YieldFrom
               or (type(n) is ast.Return and n.value is not None and not _plain_return(n.value))  # type: ignore[attr-defined]
               for n in nodes)


def assigned_locals(info: "FunctionInfo") -> frozenset[str]:
    """The names a function binds in its own body (not in the functions and classes it defines): its locals, and
    the parameters it binds again (`x = torch.addmm(b, x, w)`)."""
    found: set[str] = set()
    pending = list(ast.iter_child_nodes(info.node))
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is ast.Name and type(node.ctx) is ast.Store:  # type: ignore[attr-defined]
            found.add(node.id)  # type: ignore[attr-defined]
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        pending.extend(ast.iter_child_nodes(node))
    return frozenset(found)


def made_inside(value: "Value", bound: frozenset[str], what: str) -> "Value":
    """A returned value in a caller's names, where what it is a view of was made inside the function (`what`):
    `y = x + 1; return y[:, 0]` returns a view of storage only that call made, not of anything the caller calls
    `y`; nor, after `x = torch.addmm(b, x, w)`, of what the caller passed as `x`. Such a view keeps its kind and
    reach (a row of a buffer made inside pins all of it) with its base named for where it was made; a tensor made
    inside keeps its name only where a view returned with it names it as its base (`return buf[:, :4], buf`),
    else the caller's name for it is its name."""
    bases: set[str] = set()
    labels: set[str] = set()
    _collect_names(value, bases, labels)
    return _renamed_inside(value, bound, what, {b for b in bases if _root_name(b) in bound}, labels)


def _collect_names(value: "Value", bases: set[str], labels: set[str], depth: int = 3) -> None:
    if value.kind is Kind.TENSOR:
        if value.base is not None:
            bases.add(value.base)
        if value.label is not None:
            labels.add(value.label)
    elif value.is_container and depth > 0:
        for element in value.elements:
            _collect_names(element, bases, labels, depth - 1)


def _renamed_inside(value: "Value", bound: frozenset[str], what: str, shared: set[str], shared_labels: set[str],
                    depth: int = 3) -> "Value":
    if value.kind is Kind.TENSOR:
        changes: dict[str, object] = {}
        root = _root_name(value.base)
        if root is not None and root in bound or _computed(value.base):
            changes["base"] = f"{root if root in bound else value.base}{MADE_IN}{what}"
            if value.provenance is Provenance.VIEW and not value.partial and value.base not in shared_labels:
                # All of what the function made and handed back alone (`x.view(size_out)` of its `addmm` result): the
                # caller's own storage, through a view of it.
                changes.update(provenance=Provenance.FRESH, base=None, origin=None, base_made=None, has_base=True)
        if _root_name(value.label) in bound:
            changes["label"] = f"{value.label}{MADE_IN}{what}" if value.label in shared else None
        return value.with_(**changes) if changes else value
    if value.is_container and depth > 0:
        return value.with_(elements=tuple(_renamed_inside(e, bound, what, shared, shared_labels, depth - 1)
                                          for e in value.elements))
    return value


def _computed(source: Optional[str]) -> bool:
    """A base that is an expression the function evaluated (`self.q_proj(hidden_states)`), not a name of storage."""
    return source is not None and MADE_IN not in source and "(" in source


def quoted_base(base: Optional[str]) -> str:
    """A base for a message, in backticks: "`out` made in `Extractor.extract_batch`" for one `made_inside` named."""
    if base is None:
        return "`?`"
    name, made, where = base.partition(MADE_IN)
    return f"`{name}` made in `{where}`" if made else f"`{base}`"


def made_inside_base(base: Optional[str]) -> bool:
    """A base `made_inside` named: storage a called function made, which nothing in the caller holds."""
    return base is not None and MADE_IN in base


def _root_name(source: Optional[str]) -> Optional[str]:
    """`qkv` of `qkv[:, 0]` or `qkv.float()`; None for `self.cache`'s reads and for what no name starts."""
    if not source or MADE_IN in source:
        return None
    end = len(source)
    for mark in ".[( ":
        at = source.find(mark)
        if at != -1:
            end = min(end, at)
    root = source[:end]
    return root if root.isidentifier() and root not in ("self", "cls") else None
