"""What an object holds in an attribute its constructor sets from a parameter (`self.states = states`): what the
constructor's callers in the module pass, as far as being a tensor, or a list or tuple of tensors, goes.

Asked by the evaluator for `self.<attr>` where nothing else says what the attribute is. Only an attribute the class
assigns nowhere else counts, and only what every caller passes: `BatchedCache([torch.cat(p) for p in parts])`
makes `self.states` a list of tensors, and `[s[i:i + 1] for s in self.states]` rows of them.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from viewlint.analysis.callgraph import FunctionKey
from viewlint.analysis.module_index import ClassInfo
from viewlint.analysis.nodes import dotted
from viewlint.analysis.value_ops import container_value
from viewlint.analysis.values import UNKNOWN_TENSOR, Kind, Value

if TYPE_CHECKING:
    from viewlint.analysis.summaries import ModuleSummaries


def constructor_argument(summaries: "Optional[ModuleSummaries]", info: ClassInfo, attr: str) -> Optional[Value]:
    """What the callers of `info`'s constructor pass for the parameter it keeps in `self.<attr>`, or None."""
    if summaries is None:
        return None
    init = summaries.functions.get(FunctionKey(info.name, "__init__"))
    if init is None:
        return None
    memo = summaries.callgraph.memo
    kept = memo.get(("constructor parameters", info.name))
    if kept is None:
        kept = memo[("constructor parameters", info.name)] = _kept_parameters(init.node)
    parameter = kept.get(attr)
    if parameter is None:
        return None
    counts = memo.get(("attribute assignments", info.name))
    if counts is None:
        counts = memo[("attribute assignments", info.name)] = _assignments(summaries.index.class_defs.get(info.name, []))
    if counts.get(attr) != 1:
        return None  # assigned again somewhere: what the constructor was given is not all it holds
    passed = (summaries.entry_values(info.name, "__init__") or {}).get(parameter)
    if passed is None:
        return None
    if passed.is_tensor and not passed.optional:
        return UNKNOWN_TENSOR.with_(device=passed.device, why=f"what the callers of `{info.name}(...)` pass")
    if passed.kind is Kind.WRAPPER and passed.wrapper in ("list", "tuple") and passed.elements \
            and all(e.is_tensor and not e.optional for e in passed.elements):
        item = UNKNOWN_TENSOR.with_(why=f"items of what the callers of `{info.name}(...)` pass")
        return container_value((item,), passed.wrapper)  # type: ignore[arg-type]
    return None


def _kept_parameters(init: ast.AST) -> dict[str, str]:
    """{attribute: parameter} for `self.<attribute> = <parameter>` in `__init__`."""
    arguments = getattr(init, "args", None)
    if not isinstance(arguments, ast.arguments):
        return {}
    parameters = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    kept: dict[str, str] = {}
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Name) \
                and node.value.id in parameters:
            name = dotted(node.targets[0]) or ""
            if name.startswith("self.") and name.count(".") == 1:
                kept[name[5:]] = node.value.id
    return kept


def _assignments(definitions: list[ast.ClassDef]) -> dict[str, int]:
    """{attribute: how many statements of the class (in any of its definitions) assign `self.<attribute>`}."""
    counts: dict[str, int] = {}
    for definition in definitions:
        for node in ast.walk(definition):
            kind = type(node)
            if kind is ast.Assign:
                targets = node.targets  # type: ignore[attr-defined]
            elif kind is ast.AugAssign or kind is ast.AnnAssign:
                targets = [node.target]  # type: ignore[attr-defined]
            else:
                continue
            for target in targets:
                for element in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                    name = dotted(element) or ""
                    if name.startswith("self.") and name.count(".") == 1:
                        counts[name[5:]] = counts.get(name[5:], 0) + 1
    return counts
