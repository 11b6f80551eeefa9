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
from viewlint.analysis.values import CLASS_REFERENCE, MAX_CLASSES, UNKNOWN_TENSOR, Kind, Value

if TYPE_CHECKING:
    from viewlint.analysis.summaries import ModuleSummaries


def constructor_argument(summaries: "Optional[ModuleSummaries]", info: ClassInfo, attr: str) -> Optional[Value]:
    """What the callers of `info`'s constructor pass for the parameter it keeps in `self.<attr>`, or None."""
    parameter = info.constructor_parameters.get(attr)  # (the index's one reading of the class's assignments)
    if summaries is None or parameter is None:
        return None
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


def class_reference(summaries: "Optional[ModuleSummaries]", info: ClassInfo, attr: str) -> Optional[Value]:
    """`self.layer_class = layer_class` of a constructor parameter annotated `type[CacheLayer | LinearLayer]` (maybe
    `| None`), each a class of this module: the classes themselves, which a call builds an object of; else None."""
    parameter = info.constructor_parameters.get(attr)
    init = summaries.functions.get(FunctionKey(info.name, "__init__")) if summaries is not None and parameter is not None else None
    if init is None:
        return None
    arguments = init.node.args  # type: ignore[attr-defined]
    annotation = next((a.annotation for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
                       if a.arg == parameter), None)
    classes = _referenced_classes(annotation)
    if not classes or len(classes) > MAX_CLASSES or not all(c in summaries.index.classes for c in classes):  # type: ignore[union-attr]
        return None
    return Value(kind=Kind.HOST, host_type=CLASS_REFERENCE, wrapper="|".join(sorted(set(classes))),
                 why=f"a class `{info.name}(...)` is given for `{parameter}`")


def _referenced_classes(annotation: Optional[ast.AST]) -> list[str]:
    """`type[A | B] | None`, `Optional[Type[A]]`: ["A", "B"], ["A"]; [] for anything else."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [annotation.left, annotation.right]
        kept = [s for s in sides if not (isinstance(s, ast.Constant) and s.value is None)]
        return _referenced_classes(kept[0]) if len(kept) == 1 else []
    if isinstance(annotation, ast.Subscript):
        container = (dotted(annotation.value) or "").split(".")[-1]
        if container == "Optional":
            return _referenced_classes(annotation.slice)
        if container in ("type", "Type"):
            return _union_names(annotation.slice)
    return []


def _union_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _union_names(node.left), _union_names(node.right)
        return left + right if left and right else []
    name = dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    return [name] if name else []
