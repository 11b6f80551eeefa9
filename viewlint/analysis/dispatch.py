"""What a call may run beyond what its name is bound to, read off a module's `ast` for the call graph.

- A parameter whose default is a function of the module (`def export(model, path, save_fn=save_shard)`): calling it
  runs that function wherever a caller passes nothing else.
- A method a base class only declares (`def _extract_batch(self, batch): raise NotImplementedError`): `self.m(...)`
  in the base class runs the subclasses' overrides, which the module defines; what such a stub "returns" is nothing
  any caller sees.
- A method a base class defines and subclasses override, called on a receiver of unknown class: the base's (the
  class the others derive from), one of the methods it may run.
"""

from __future__ import annotations

import ast
from typing import Callable, TypeVar

from viewlint.analysis.nodes import dotted

K = TypeVar("K")


def name_defaults(function: ast.AST) -> dict[str, str]:
    """{parameter: the name its default is} (`attn_fn=sdpa_forward`)."""
    arguments = getattr(function, "args", None)
    if not isinstance(arguments, ast.arguments):
        return {}
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs = [*zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults),
             *zip(arguments.kwonlyargs, arguments.kw_defaults)]
    return {a.arg: d.id for a, d in pairs if type(d) is ast.Name}


def parameter_functions(function: ast.AST, resolve: Callable[[ast.AST], list[K]]) -> dict[str, list[K]]:
    """{parameter: what its default reaches} for the parameters whose default is a name `resolve` knows as a function
    of the module (`resolve` gives a class's `__init__` for a class: a class default is left out)."""
    found: dict[str, list[K]] = {}
    for parameter, default in name_defaults(function).items():
        keys = [k for k in resolve(ast.Name(id=default, ctx=ast.Load())) if getattr(k, "name", None) != "__init__"]
        if keys:
            found[parameter] = keys
    return found


def is_abstract(function: ast.AST) -> bool:
    """A method that only declares itself: `@abstractmethod`, or a body (after its docstring) of one `raise
    NotImplementedError` or `...`. (`pass` is a hook that does nothing, and returns `None`.)"""
    if any((dotted(d) or "").endswith("abstractmethod") for d in getattr(function, "decorator_list", ())):
        return True
    body = list(getattr(function, "body", ()))
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) != 1:
        return False
    statement = body[0]
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant) and statement.value.value is Ellipsis
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return dotted(raised) == "NotImplementedError"
    return False


def subclasses(class_defs: dict[str, list[ast.ClassDef]]) -> dict[str, list[str]]:
    """{class: the classes of the module that name it as a base}, each list in the module's order."""
    found: dict[str, list[str]] = {}
    for name, definitions in class_defs.items():
        for definition in definitions:
            for base in definition.bases:
                parent = dotted(base)
                if parent in class_defs and parent != name and name not in found.get(parent, ()):
                    found.setdefault(parent, []).append(name)
    return found


def overriding_classes(owner: str, method: str, tree: dict[str, list[str]], defines: Callable[[str, str], bool]) -> list[str]:
    """The classes below `owner` in `tree` (`subclasses`) that define `method` themselves, nearest first."""
    found: list[str] = []
    pending, seen = list(tree.get(owner, ())), {owner}
    while pending:
        name = pending.pop(0)
        if name in seen:
            continue
        seen.add(name)
        if defines(name, method):
            found.append(name)
        pending.extend(tree.get(name, ()))
    return found


def ancestors(class_name: str, class_defs: dict[str, list[ast.ClassDef]]) -> set[str]:
    """The classes of the module `class_name` derives from, directly or not."""
    found: set[str] = set()
    pending = [class_name]
    while pending:
        for definition in class_defs.get(pending.pop(), []):
            for base in (dotted(b) or "" for b in definition.bases):
                if base in class_defs and base not in found:
                    found.add(base)
                    pending.append(base)
    return found


def common_root(owners: list[str], class_defs: dict[str, list[ast.ClassDef]]) -> list[str]:
    """Of classes that each define a method, the one every other derives from (a base and the subclasses that override
    it: `Dispatcher._permute` and `DispatcherFixed._permute`), as a list of one; all of them when there is none."""
    roots = [o for o in owners if all(other == o or o in ancestors(other, class_defs) for other in owners)]
    return roots if len(roots) == 1 else owners
