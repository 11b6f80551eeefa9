"""What a method says holds a plain host value (a number, a flag, a string): parameters annotated so, literals,
reads of config-like objects, and items of containers annotated to hold them. `module_index` reads a class's
attributes with it (`self.mim_weight = config.mim_weight` is no tensor)."""

from __future__ import annotations

import ast
from typing import Optional

from viewlint.analysis.nodes import dotted

HOST_TYPES = frozenset({"int", "float", "bool", "str"})


def host_names(fn: ast.AST, nodes: list[ast.AST]) -> frozenset[str]:
    """A method's names that hold plain host values: parameters annotated `int`/`float`/`bool`/`str` or with
    such a literal default, and locals annotated so or set from a literal or a config read
    (`spatial_merge_size: int = vision_config.spatial_merge_size`)."""
    names = set()
    arguments = fn.args  # type: ignore[attr-defined]
    positional = arguments.posonlyargs + arguments.args
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    pairs = list(zip(positional, defaults)) + list(zip(arguments.kwonlyargs, arguments.kw_defaults))
    for argument, default in pairs:
        annotation = argument.annotation
        if (isinstance(annotation, ast.Name) and annotation.id in HOST_TYPES) or (
                annotation is None and isinstance(default, ast.Constant) and isinstance(default.value, (int, float, str))):
            names.add(argument.arg)
        elif holds_host_items(annotation):
            names.add(f"{argument.arg}[]")  # `weights: Dict[str, float]`: `weights["lm"]` is a float
    for node in nodes:
        if type(node) is ast.AnnAssign and type(node.target) is ast.Name:
            if isinstance(node.annotation, ast.Name) and node.annotation.id in HOST_TYPES:  # type: ignore[attr-defined]
                names.add(node.target.id)  # type: ignore[attr-defined]
        elif type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:  # type: ignore[attr-defined]
            if is_host_expression(node.value):  # type: ignore[attr-defined]
                names.add(node.targets[0].id)  # type: ignore[attr-defined]
    return frozenset(names)


def holds_host_items(annotation: Optional[ast.AST]) -> bool:
    """`Dict[str, float]`, `dict[str, int]`, `Mapping[str, float]`, `List[float]`, `Sequence[int]`: a container
    whose items are plain host values."""
    if not isinstance(annotation, ast.Subscript):
        return False
    outer = (dotted(annotation.value) or "").split(".")[-1].lower()
    items = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    if outer in ("dict", "mapping", "mutablemapping") and len(items) == 2:
        item = items[1]
    elif outer in ("list", "sequence") and len(items) == 1:
        item = items[0]
    else:
        return False
    return isinstance(item, ast.Name) and item.id in HOST_TYPES


def is_number_literal(node: ast.AST) -> bool:
    """A number written out, or a choice between one and `None` (`0.0 if weight is not None else None`)."""
    if isinstance(node, ast.IfExp):
        branches = (node.body, node.orelse)
        return any(map(is_number_literal, branches)) and all(
            is_number_literal(b) or isinstance(b, ast.Constant) and b.value is None for b in branches)
    if isinstance(node, ast.UnaryOp):
        return is_number_literal(node.operand)
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def is_host_expression(node: ast.AST, host_names: frozenset[str] = frozenset()) -> bool:
    """A literal, a read of a config-like object (`config.mim_weight`, `getattr(config, "x", 0.0)`), or a
    name the method knows holds such a value."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Constant):
        return node.value is not ...
    if isinstance(node, ast.Name):
        return node.id in host_names
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return f"{node.value.id}[]" in host_names
    if isinstance(node, ast.UnaryOp):
        return is_host_expression(node.operand, host_names)
    if isinstance(node, ast.BinOp) and host_names:
        return is_host_expression(node.left, host_names) and is_host_expression(node.right, host_names)
    if isinstance(node, ast.Attribute) and dotted(node) in host_names:
        return True  # `self.spatial_merge_size ** 2`, set from a host value above
    if isinstance(node, ast.Call) and dotted(node.func) == "getattr" and node.args:
        node = node.args[0]
        if isinstance(node, ast.Name):
            return any(word in node.id.lower() for word in ("config", "cfg", "args", "opt", "hparams", "settings"))
    if isinstance(node, ast.Attribute):
        head = (dotted(node) or "self").split(".")[0].lower()
        return any(word in head for word in ("config", "cfg", "args", "opt", "hparams", "settings"))
    return False
