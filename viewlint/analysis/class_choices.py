"""Which classes a construction names when it spells its class through a name or a table.

Real modules pick a layer's class before they build it:

    attention_class = BertCrossAttention if is_cross_attention else BertSelfAttention
    self.self = attention_class(config, ...)

    self.attn = ATTENTION_CLASSES[config._attn_implementation](config)   # ATTENTION_CLASSES = {"eager": A, "sdpa": B}

`self.self` then holds an instance of one of the classes named, and calling it runs one of their `forward`s
(`ModuleSummaries` joins what each returns; the call graph adds every one as a callee). Only names and tables
whose every choice is spelled out are read: a name bound to anything else (a call, a parameter) names nothing.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterable, Optional

from viewlint.analysis.nodes import dotted

if TYPE_CHECKING:
    from viewlint.analysis.module_index import ModuleIndex


def _choices(node: ast.AST) -> Optional[list[str]]:
    """`A` -> [A], `A if c else B` -> [A, B] (nested too); None for anything else."""
    if type(node) is ast.IfExp:
        body, orelse = _choices(node.body), _choices(node.orelse)
        return body + orelse if body is not None and orelse is not None else None
    name = dotted(node) if type(node) in (ast.Name, ast.Attribute) else None
    return [name] if name else None


def _bound_classes(name: str, nodes: Iterable[ast.AST]) -> Optional[list[str]]:
    """What the function binds the local `name` to, where every binding is a class spelled out (or a choice of them)."""
    found: list[str] = []
    for node in nodes:
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name \
                and node.targets[0].id == name:
            choices = _choices(node.value)
            if choices is None:
                return None
            found.extend(choices)
        elif type(node) is ast.AnnAssign and type(node.target) is ast.Name and node.target.id == name:
            choices = _choices(node.value) if node.value is not None else None
            if choices is None:
                return None
            found.extend(choices)
    return found or None


def class_tables(index: "ModuleIndex") -> dict[str, tuple[str, ...]]:
    """{module-level name: the classes its dict literal maps to} (`ATTENTION_CLASSES = {"eager": A, "sdpa": B}`)."""
    found = index.memo.get("class tables")
    if found is None:
        found = {}
        for stmt in index.tree.body if index.tree is not None else ():
            if type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name \
                    and type(stmt.value) is ast.Dict and stmt.value.values:
                names = [dotted(v) if type(v) in (ast.Name, ast.Attribute) else None for v in stmt.value.values]
                if all(names) and None not in stmt.value.keys:
                    found[stmt.targets[0].id] = tuple(names)  # type: ignore[arg-type]
        index.memo["class tables"] = found
    return found  # type: ignore[no-any-return]


def constructed_classes(call: ast.Call, nodes: Iterable[ast.AST], index: "ModuleIndex") -> tuple[str, ...]:
    """The classes (as spelled) a construction `call` may build, when its callee is a local name the function (`nodes`)
    binds only to classes, or a subscript of a module-level table of classes; () otherwise."""
    func = call.func
    if type(func) is ast.Name:
        if func.id in index.classes:
            return ()  # the class itself: not a choice
        found = _bound_classes(func.id, nodes)
    elif type(func) is ast.Subscript and type(func.value) is ast.Name:
        found = list(class_tables(index).get(func.value.id, ())) or None
    else:
        found = None
    return tuple(dict.fromkeys(found)) if found else ()
