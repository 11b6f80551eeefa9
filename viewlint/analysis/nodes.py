"""Reading CPython's `ast` fast: every node of a tree in source order, and the names of callees.

The prefilter, the module index, the call graph and the summaries read every module's `ast`
before anything is parsed with libcst; these are the walks they share, kept below all of them.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Callable, Optional


# Fields that only ever hold context or operator singletons (`Load()`, `Add()`): read through their
# parents (`node.ctx`, `node.op`), never listed.
_SINGLETON_FIELDS = frozenset({"ctx", "op", "ops"})
# Field types (in the `ast` classes' signatures) that never hold a node worth listing.
_LEAF_FIELD_TYPES = frozenset({"identifier", "string", "int", "constant", "expr_context", "boolop", "operator",
                               "unaryop", "cmpop"})
_SIGNATURE = re.compile(r"^\w+\((.*)\)$")
# Per node class: (field, holds a list: True / one node or None: False / unknown: None).
_CHILD_FIELDS: dict[type, tuple[tuple[str, Optional[bool]], ...]] = {}


def _child_fields(kind: type) -> tuple[tuple[str, Optional[bool]], ...]:
    """The fields of an `ast` class that can hold nodes, read off its signature
    (`Call(expr func, expr* args, keyword* keywords)`); identifiers, numbers, strings,
    constants and operator singletons are left out. Falls back to every field, checked
    value by value, when the signature does not name exactly the class's fields."""
    fields: list[tuple[str, Optional[bool]]] = []
    match = _SIGNATURE.match((kind.__doc__ or "").strip())
    names = []
    for part in match.group(1).split(",") if match else ():
        words = part.split()
        if len(words) != 2:
            break
        field_type, name = words
        names.append(name)
        if field_type.rstrip("*?") not in _LEAF_FIELD_TYPES:
            fields.append((name, field_type.endswith("*")))
    if not match or names != list(kind._fields):  # type: ignore[attr-defined]
        fields = [(name, None) for name in kind._fields if name not in _SINGLETON_FIELDS]  # type: ignore[attr-defined]
    return tuple(fields)


# Per node class: a function giving its children to push on the preorder stack (last child first;
# None where a field is empty or a list has a hole: skipped when popped), or None for a leaf. Made
# once per class from `_child_fields`: one call per node instead of a loop over its fields.
_CHILDREN_OF: dict[type, Optional[Callable[[ast.AST], list[Optional[ast.AST]]]]] = {}


def _children_function(kind: type) -> Optional[Callable[[ast.AST], list[Optional[ast.AST]]]]:
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _CHILD_FIELDS[kind] = _child_fields(kind)
    if not fields:
        return None
    if any(many is None for _, many in fields):  # fields whose kind the signature does not tell
        def generic(node: ast.AST) -> list[Optional[ast.AST]]:
            kids: list[Optional[ast.AST]] = []
            for name, _ in fields:
                value = getattr(node, name, None)
                if type(value) is list:
                    kids.extend(v for v in value if isinstance(v, ast.AST))
                elif isinstance(value, ast.AST):
                    kids.append(value)
            kids.reverse()
            return kids
        return generic
    def field_by_field(node: ast.AST) -> list[Optional[ast.AST]]:  # a node built by hand, missing a field
        found: list[Optional[ast.AST]] = []
        for name, many in fields:
            value = getattr(node, name, None)
            if many:
                found.extend(value or ())
            else:
                found.append(value)
        found.reverse()
        return found

    parts = [f"*node.{name}[::-1]" if many else f"node.{name}" for name, many in reversed(fields)]
    code = (f"def children(node):\n    try:\n        return [{', '.join(parts)}]\n"
            "    except (AttributeError, TypeError):\n        return field_by_field(node)\n")
    namespace: dict[str, object] = {"field_by_field": field_by_field}
    exec(code, namespace)  # noqa: S102 - code made from the ast classes' own field names
    return namespace["children"]  # type: ignore[return-value]


def preorder(root: ast.AST) -> list[ast.AST]:
    """Every node under `root` (itself included) in source order, parents before children.

    Context and operator nodes (`Load`, `Add`, ...) are left out: nothing reads them from the list.
    """
    out: list[ast.AST] = []
    stack: list[Optional[ast.AST]] = [root]
    pop, append, extend, children_of = stack.pop, out.append, stack.extend, _CHILDREN_OF
    while stack:
        node = pop()
        if node is None:  # an empty field, a hole in a list field (`{**d}` keys, kw-only arguments without defaults)
            continue
        append(node)
        kind = type(node)
        try:
            children = children_of[kind]
        except KeyError:
            children = children_of[kind] = _children_function(kind)
        if children is not None:
            extend(children(node))
    return out


def callee_name(func: ast.AST) -> Optional[str]:
    """The last name of a callee: `x.contiguous` -> `contiguous`, `save` -> `save`."""
    kind = type(func)
    if kind is ast.Attribute:
        return func.attr  # type: ignore[attr-defined]
    if kind is ast.Name:
        return func.id  # type: ignore[attr-defined]
    return None


def dotted(node: ast.AST) -> Optional[str]:
    parts: list[str] = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if type(node) is ast.Name:
        parts.append(node.id)  # type: ignore[attr-defined]
        return ".".join(reversed(parts))
    return None


def qualify_name(index: Any, name: Optional[str]) -> Optional[str]:
    """`name` with its first part replaced by what the module imports under it (`nn.Linear` -> `torch.nn.Linear`)."""
    if name is None:
        return None
    head, _, rest = name.partition(".")
    target = index.aliases.get(head)
    if target is None:
        return None
    return f"{target}.{rest}" if rest else target


def assignments(stmt: ast.AST) -> list[tuple[ast.AST, Optional[ast.AST]]]:
    """(target, value) of each target an `=` or annotated assignment binds."""
    if isinstance(stmt, ast.Assign):
        return [(target, stmt.value) for target in stmt.targets]
    if isinstance(stmt, ast.AnnAssign):
        return [(stmt.target, stmt.value)]
    return []
