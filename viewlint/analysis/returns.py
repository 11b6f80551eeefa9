"""What a function returns, read off its `ast`: a plain Python value by its annotation (`-> int`,
`-> dict[str, int]`), or possibly a tensor (a `return` of something other than a constant, a comparison
by identity or membership, or `len(...)`-like builtins). Asked by the summaries and the prefilter's
`TensorContext`, about the functions the call graph (`viewlint.analysis.callgraph`) lists."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from viewlint.analysis.nodes import dotted

if TYPE_CHECKING:
    from viewlint.analysis.callgraph import FunctionInfo


_HOST_RETURNS = frozenset({"None", "int", "float", "bool", "str", "bytes", "dict", "Dict", "set", "Set"})


def host_annotation(annotation: Optional[ast.AST]) -> bool:
    """`-> None`, `-> int`, `-> bool`, `-> dict[str, int]`: the function returns a plain Python value."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant):
        return annotation.value is None
    target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    if isinstance(annotation, ast.Subscript) and any(
            "Tensor" in (dotted(n) or "") for n in ast.walk(annotation.slice)):
        return False  # `dict[str, torch.Tensor]`
    return (dotted(target) or "").split(".")[-1] in _HOST_RETURNS


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
