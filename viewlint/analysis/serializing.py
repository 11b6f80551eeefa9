"""Functions of a module that write a parameter to a file or a pickle: `def save(t, path): torch.save(t, path)`.

Read once per module off its `ast` (kept in the index's memo), for VL103 and its prefilter: a call of such a
function with a view serializes the view's whole storage, wherever the function itself is (the helper's own
`torch.save(t, …)` sees every caller's argument joined, a copy from one and a view from another).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Optional

from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.nodes import dotted

# What writes its argument: serializer -> (position, keyword) of the object written.
SERIALIZERS = {"torch.save": (0, "obj"), "pickle.dump": (0, "obj"), "pickle.dumps": (0, "obj")}
_ROUNDS = 4  # helpers of helpers: how many calls deep a parameter is followed to the save


@dataclass(frozen=True)
class Serialized:
    """A parameter (or a field of it) that a function writes."""

    position: int  # among the positional parameters (after `self`), -1 for keyword-only
    parameter: str
    field: str  # "" for the parameter itself, else the attribute written (`part.ids`: "ids")
    serializer: str  # "torch.save" or "pickle.dump(s)", at the end of the chain


def serializing_functions(index: ModuleIndex) -> dict[str, tuple[Serialized, ...]]:
    """Top-level function name -> the parameters it writes (directly, or through another such function)."""
    found = index.memo.get("serializing functions")
    if found is None:
        found = index.memo["serializing functions"] = _find(index)
    return found  # type: ignore[return-value]


def _qualified(node: ast.AST, index: ModuleIndex) -> str:
    name = dotted(node) or ""
    head, _, rest = name.partition(".")
    target = index.aliases.get(head)
    return (target + ("." + rest if rest else "")) if target else name


def _find(index: ModuleIndex) -> dict[str, tuple[Serialized, ...]]:  # noqa: C901 - one fixed point
    tree = index.tree
    if tree is None or (index.source and "save(" not in index.source and "dump" not in index.source):
        return {}  # (asked of every module by the prefilter: most never write a file)
    functions = {s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    calls = {name: [n for n in index.segment_nodes.get(id(fn)) or ast.walk(fn) if type(n) is ast.Call]
             for name, fn in functions.items()}
    if not any(_qualified(c.func, index) in SERIALIZERS for found in calls.values() for c in found):
        return {}
    written: dict[str, dict[tuple[str, str], Serialized]] = {}
    for _ in range(_ROUNDS):
        changed = False
        for name, fn in functions.items():
            parameters = _parameters(fn)
            if not parameters:
                continue
            for call in calls[name]:
                for argument, serializer, field in _writes(call, index, written):
                    reached = _parameter_path(argument, parameters, field)
                    if reached is None:
                        continue
                    parameter, path = reached
                    key = (parameter, path)
                    entries = written.setdefault(name, {})
                    if key not in entries:
                        position = parameters[parameter]
                        entries[key] = Serialized(position, parameter, path, serializer)
                        changed = True
        if not changed:
            break
    return {name: tuple(entries.values()) for name, entries in written.items() if entries}


def _parameters(fn: ast.AST) -> dict[str, int]:
    """Parameter -> position (-1 for keyword-only), for parameters the function never rebinds."""
    arguments = fn.args  # type: ignore[attr-defined]
    positional = [a.arg for a in [*arguments.posonlyargs, *arguments.args]]
    found = {name: i for i, name in enumerate(positional)}
    found.update({a.arg: -1 for a in arguments.kwonlyargs})
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.pop(node.id, None)
    return found


def _writes(call: ast.Call, index: ModuleIndex,
            written: dict[str, dict[tuple[str, str], Serialized]]) -> list[tuple[ast.AST, str, str]]:
    """(argument, serializer, field of the argument written) for what `call` writes."""
    qualified = _qualified(call.func, index)
    if qualified in SERIALIZERS:
        argument = _argument(call, *SERIALIZERS[qualified])
        return [(argument, qualified, "")] if argument is not None else []
    if not isinstance(call.func, ast.Name) or call.func.id not in written:
        return []
    found = []
    for entry in written[call.func.id].values():
        argument = _argument(call, entry.position, entry.parameter)
        if argument is not None:
            found.append((argument, entry.serializer, entry.field))
    return found


def _argument(call: ast.Call, position: int, keyword: str) -> Optional[ast.AST]:
    for given in call.keywords:
        if given.arg == keyword:
            return given.value
    positional = call.args
    if any(isinstance(a, ast.Starred) for a in positional[: position + 1]):
        return None
    return positional[position] if 0 <= position < len(positional) else None


def _parameter_path(argument: ast.AST, parameters: dict[str, int], field: str) -> Optional[tuple[str, str]]:
    """`p` (written with `field`) or `p.f` (written whole): the parameter and the field of it that is written."""
    if isinstance(argument, ast.Name) and argument.id in parameters:
        return argument.id, field
    if isinstance(argument, ast.Attribute) and isinstance(argument.value, ast.Name) \
            and argument.value.id in parameters and not field:
        return argument.value.id, argument.attr
    return None
