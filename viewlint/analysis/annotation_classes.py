"""The class a parameter's annotation names (`cache: Cache`, `Optional[Cache]`, `"Cache"`): read off `ast` or
libcst alike, by the index, the call graph, the flow and the prefilter."""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from viewlint.analysis.nodes import dotted


_NOT_CLASSES = frozenset({"int", "float", "str", "bool", "bytes", "None", "list", "dict", "set", "tuple", "Any", "object",
                          "List", "Dict", "Set", "Tuple", "Callable", "Sequence", "Mapping", "Iterable", "Iterator"})


def parameters_with_classes(arguments: ast.arguments) -> list[tuple[str, Optional[str]]]:
    """(name, the class its annotation names) of each parameter of a function (`semantics.takes_a_step_batch`)."""
    return [(a.arg, annotation_class(a.annotation)) for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]


def cst_annotation_class(annotation: cst.BaseExpression) -> Optional[str]:
    """The class a libcst annotation names (read with `ast`, as the index reads them)."""
    try:
        return annotation_class(ast.parse(cst.Module(body=[]).code_for_node(annotation), mode="eval").body)
    except SyntaxError:
        return None


def annotation_class(annotation: Optional[ast.AST]) -> Optional[str]:
    """The class an annotation names (`Cache`, `Optional[Cache]`, `Cache | None`, `"Cache"`), if it names one."""
    if annotation is None:
        return None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return annotation_class(annotation.left) or annotation_class(annotation.right)
    if isinstance(annotation, ast.Subscript):
        if (dotted(annotation.value) or "").split(".")[-1] in ("Optional", "Union", "Annotated"):
            inner = annotation.slice
            items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            for item in items:
                found = annotation_class(item)
                if found:
                    return found
        return None
    name = dotted(annotation)
    if name is None or name.split(".")[-1] in _NOT_CLASSES or "Tensor" in name:
        return None
    return name if name.split(".")[-1][:1].isupper() else None
