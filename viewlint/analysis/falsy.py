"""For a function hot only for its hot callers: the parameters every such call leaves falsy (`self.merge()` of
`merge(self, safe_merge=False)`), so what `if safe_merge:` guards never runs hot; and, as `TRUTHY + name`, those every
such call passes a true constant (`no_copy_to_cpu=True`), so what `if not no_copy_to_cpu:` guards never runs hot.
Read once per module, with the call graph's hot reasons (`viewlint.analysis.callgraph.hot_reasons`)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from viewlint.analysis.nodes import dotted

if TYPE_CHECKING:
    from viewlint.analysis.callgraph import CallGraph, FunctionInfo, FunctionKey

# The mark of a parameter every hot call passes a true constant (a cold switch under `not`: `guards.cold_test`).
TRUTHY = "not "


def falsy_on_every_edge(graph: "CallGraph", edges: list[tuple[FunctionKey, ast.Call]],
                         reasons: dict[FunctionKey, str]) -> dict[FunctionKey, frozenset[str]]:
    """For each function hot for being called from hot code: the parameters every such call leaves falsy."""
    found: dict[FunctionKey, set[str]] = {}
    for caller, call in edges:
        for callee in graph.call_targets(caller, call):
            if not reasons.get(callee, "").startswith("called from"):
                continue
            falsy = _left_falsy(call, graph.functions[callee])
            found[callee] = falsy if callee not in found else found[callee] & falsy
    result = {}
    for key, names in found.items():
        if names:
            rebound = {n.id for n in ast.walk(graph.functions[key].node) if type(n) is ast.Name and type(n.ctx) is not ast.Load}
            # `safe_merge = safe_merge or self.check`: not what the caller passed
            names = {n for n in names if n.removeprefix(TRUTHY) not in rebound}
        if names:
            result[key] = frozenset(names)
    return result


def _left_falsy(call: ast.Call, info: FunctionInfo) -> set[str]:
    """The parameters a call passes a falsy constant or leaves at a falsy default (`False`, `None`, `0`)."""
    if any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords):
        return set()
    func, arguments = call.func, list(call.args)
    if info.bound and type(func) is ast.Attribute and dotted(func.value) not in ("self", "cls") and arguments \
            and type(arguments[0]) is ast.Name and arguments[0].id == "self":  # type: ignore[attr-defined]
        arguments = arguments[1:]  # `Base.merge(self, False)`: `self` fills the method's own `self`
    passed: dict[str, ast.AST] = dict(zip(info.positional, arguments))
    passed.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
    falsy = set()
    for name in [*info.positional, *info.keyword_only]:
        value = passed.get(name, info.defaults.get(name))
        if type(value) is ast.Constant and value.value is not ...:  # type: ignore[attr-defined]
            falsy.add(name if not value.value else TRUTHY + name)  # type: ignore[attr-defined]
    return falsy
