"""Where a name's layout fact can change without an assignment the flow sees.

`Facts` keeps a value per name and updates it on assignments, but a name is also rebound by
`with … as x`, `case … as x`, `for` bodies run again, a handler entered half-way through a
`try`, and by other functions (`global x`, `nonlocal x`, a closure reading `x` when it is called);
and a tensor's strides change in place (`x.t_()`, `x.transpose_()`, `x.as_strided_()`,
`x.set_(…)`, `x.data = …`), through every alias of it (`y = x; y.t_()`) and through any function
it is passed to. "Contiguous" is a fact that must hold on every path, so it is dropped wherever
one of these may have happened (`Facts.forget_layout`); facts that only need one path stay.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

import libcst as cst

from viewlint.analysis.tree import descendants

# In-place methods that give a tensor new strides (`squeeze_`/`unsqueeze_` keep a contiguous tensor
# contiguous; `resize_`/`resize_as_` may take a `memory_format`).
_RESTRIDING_CALL = re.compile(r"\.\s*(?:t_|transpose_|swapdims_|swapaxes_|as_strided_|set_|resize_|resize_as_)\s*\(")
# `x.data = …` (not `==`) replaces a tensor's storage and strides in place (`self.data = …` sets an attribute).
# (The dot first, then the look behind it: a pattern that starts with a plain character is searched for fast.)
_DATA_STORE = re.compile(r"\.(?<!\bself\.)\s*data\s*=(?!=)")
# A `global`/`nonlocal` statement starts a line or follows `;` or `:` (`if flag: global x`); a superset.
_GLOBAL = re.compile(r"(?:^|[;:])[ \t]*(?:global|nonlocal)[ \t]+[^\W\d]", re.MULTILINE)


@dataclass(frozen=True)
class LayoutRisks:
    """What the whole module may do to a tensor's layout behind the flow's back."""

    # Some statement restrides a tensor in place: through aliases and calls it may be any tensor.
    restrides_in_place: bool
    # Names declared `global` or `nonlocal` somewhere: any call may rebind them.
    rebound_elsewhere: frozenset[str]
    # Module-level names some statement the walk does not see binds (one the prefilter blanked).
    bound_unseen: frozenset[str] = frozenset()


def layout_risks(source: str, tree: Optional[ast.Module], kept_rows: Optional[bytearray] = None) -> LayoutRisks:
    """Read once per module (a text scan first: most modules have none of these). `kept_rows`: the
    rows the prefilter kept (None: all); a module-level statement it blanked binds its names where the
    walk does not see it (`with … as x`, a `for` loop, a walrus), so those names are not known either."""
    restrides = bool(_RESTRIDING_CALL.search(source) or _DATA_STORE.search(source))
    names: set[str] = set()
    unseen: set[str] = set()
    blanked = kept_rows is not None
    declares = ("global" in source or "nonlocal" in source) and _GLOBAL.search(source) is not None  # `in` first: faster
    if not (declares or blanked):
        return LayoutRisks(restrides, frozenset())
    if tree is None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return LayoutRisks(True, frozenset())
    if declares:
        for node in _statements(tree.body):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                names.update(node.names)
    if kept_rows is not None:
        for statement in tree.body:
            if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import, ast.ImportFrom,
                                      ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue  # seen by the walk whenever a kept statement reads them (see `viewlint.prefilter`)
            row = statement.lineno
            if row < len(kept_rows) and kept_rows[row]:
                continue
            unseen.update(_ast_bound_names(statement))
    return LayoutRisks(restrides, frozenset(names), frozenset(unseen))


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement in `body` and in the bodies nested in it, not the expressions (where no `global` can be)."""
    stack = list(reversed(body))
    while stack:
        statement = stack.pop()
        yield statement
        for field in _BODIES:
            nested = getattr(statement, field, None)
            if nested:
                stack.extend(reversed(nested))


def _ast_bound_names(statement: ast.stmt) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        else:
            for attribute in ("name", "rest"):  # match captures: `case [*rest] as whole`, `case {**rest}`
                value = getattr(node, attribute, None) if type(node).__name__.startswith("Match") else None
                if isinstance(value, str):
                    found.add(value)
    return found


def stored_names(node: cst.CSTNode) -> set[str]:
    """Every plain name a statement (and what it contains) may bind: assignment and loop targets,
    `with … as`, walrus, `except … as`, match captures, `del`, imports, nested `def`/`class`."""
    found: set[str] = set()
    for child in descendants(node):
        if isinstance(child, cst.Assign):
            for target in child.targets:
                _targets(target.target, found)
        elif isinstance(child, (cst.AnnAssign, cst.AugAssign)):
            _targets(child.target, found)
        elif isinstance(child, (cst.For, cst.CompFor)):
            _targets(child.target, found)
        elif isinstance(child, cst.WithItem) and child.asname is not None:
            _targets(child.asname.name, found)
        elif isinstance(child, cst.NamedExpr):
            _targets(child.target, found)
        elif isinstance(child, cst.ExceptHandler) and child.name is not None:
            _targets(child.name.name, found)
        elif isinstance(child, cst.Del):
            _targets(child.target, found)
        elif isinstance(child, (cst.FunctionDef, cst.ClassDef)):
            found.add(child.name.value)
        elif isinstance(child, cst.ImportAlias):
            found.add(_import_name(child))
        else:
            found.update(match_captures(child))
    return found


def match_captures(node: cst.CSTNode) -> Iterable[str]:
    """The names one match-pattern node binds (`case [a, *rest] as whole`, `case {**extra}`)."""
    kind = type(node).__name__
    if kind in ("MatchAs", "MatchStar"):
        name = getattr(node, "name", None)
        if isinstance(name, cst.Name):
            return (name.value,)
    elif kind == "MatchMapping":
        rest = getattr(node, "rest", None)
        if isinstance(rest, cst.Name):
            return (rest.value,)
    return ()


def _targets(target: cst.BaseExpression, found: set[str]) -> None:
    if isinstance(target, cst.Name):
        found.add(target.value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _targets(element.value, found)
    elif isinstance(target, cst.StarredElement):
        _targets(target.value, found)


def _import_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    name = alias.name
    while isinstance(name, cst.Attribute):
        name = name.value  # type: ignore[assignment]
    return name.value if isinstance(name, cst.Name) else ""
