"""Objects and functions handed to a constructor or a function of the module.

- `self.storage_client = storage_client` in `__init__`, where every construction of the class in the module passes an
  object of one class (`KVStorageManager(YuanrongStorageClient())`, or a name set to one): the attribute holds an
  object of that class (`ClassInfo.attribute_classes`), and calls of its methods run them
  (`self.storage_client.put(keys, values)`).
- `self.dense_fn = dense_fn`, where constructions pass functions of the module (`Readout(to_dense_batch)`): the
  attribute may hold any of them (`ClassInfo.held_functions`), and `self.dense_fn(...)` may run each.
- `clip_fn(...)` in `train_step(model, clip_fn)`, where callers pass functions of the module (`train_step(model,
  clip_grad_norm_)`): the call may run each (`passed_functions`, which the call graph asks with its calls).

The first two are index facts, read once per module by the module index over `ast` after its reading of the classes'
assignments, and asked alike by the call graph, the summaries and the evaluator. The third is the call graph's, read
once from the skeletons it holds.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterable, Optional

from viewlint.analysis.nodes import dotted

if TYPE_CHECKING:
    from viewlint.analysis.module_index import ModuleIndex


def note_injected_classes(index: "ModuleIndex", functions: Iterable[tuple[ast.AST, object, list[ast.AST]]]) -> None:
    """Fill `attribute_classes` of the module's classes from what their constructions pass (see the module's doc)."""
    wanted: dict[str, tuple[list[str], dict[str, str]]] = {}  # class -> (`__init__`'s positional names, param -> attr)
    source = index.source
    for fn, info, _ in functions:
        if info is None or getattr(fn, "name", "") != "__init__":
            continue
        kept = {p: a for a, p in info.constructor_parameters.items()  # type: ignore[attr-defined]
                if a not in info.attribute_classes and a not in info.attribute_class_choices  # type: ignore[attr-defined]
                and a not in info.submodule_attributes}  # type: ignore[attr-defined]
        # (Only a class the module constructs: most are built elsewhere, and the scan below is not free.)
        if kept and source.count(f"{info.name}(") > source.count(f"class {info.name}("):  # type: ignore[attr-defined]
            names = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]][1:]  # type: ignore[attr-defined]
            wanted[info.name] = (names, kept)  # type: ignore[attr-defined]
    if not wanted:
        return
    made: dict[str, set[str]] = {}  # a name -> the classes the module sets it to an instance of
    passed: dict[tuple[str, str], set[Optional[str]]] = {}  # (class, attr) -> the classes its constructions pass
    for nodes in index.segment_nodes.values():
        for node in nodes:
            kind = type(node)
            if kind is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:  # type: ignore[attr-defined]
                held = _instance_class(node.value, index)  # type: ignore[attr-defined]
                if held is not None:
                    made.setdefault(node.targets[0].id, set()).add(held)  # type: ignore[attr-defined]
            elif kind is ast.Call and type(node.func) is ast.Name and node.func.id in wanted:  # type: ignore[attr-defined]
                names, kept = wanted[node.func.id]  # type: ignore[attr-defined]
                given = _given(node, names)
                for parameter, attribute in kept.items():
                    if parameter in given:
                        function = _function_name(given[parameter], index)
                        if function is not None:  # `Readout(to_dense_batch)`
                            index.classes[node.func.id].held_functions.setdefault(attribute, set()).add(function)  # type: ignore[attr-defined]
                            continue
                        passed.setdefault((node.func.id, attribute), set()).add(  # type: ignore[attr-defined]
                            _argument_class(given[parameter], index, made))

    for (class_name, attribute), classes in passed.items():
        if len(classes) == 1 and None not in classes:
            index.classes[class_name].attribute_classes[attribute] = next(iter(classes))  # type: ignore[arg-type]


def _instance_class(value: ast.AST, index: "ModuleIndex") -> Optional[str]:
    """`K(...)` of a class `K` of this module (a module too: `Trainer(LitModel())`, whose `self.model(x)` runs its
    `forward` and `self.model.training_step(...)` its method) or imported from the project."""
    if type(value) is not ast.Call:
        return None
    name = dotted(value.func)  # type: ignore[attr-defined]
    if name is None or "." in name:
        return None
    return name if name in index.classes or (name in index.relative_imports and name[:1].isupper()) else None


def _argument_class(argument: ast.AST, index: "ModuleIndex", made: dict[str, set[str]]) -> Optional[str]:
    held = _instance_class(argument, index)
    if held is None and type(argument) is ast.Name:
        classes = made.get(argument.id, set())  # type: ignore[attr-defined]
        held = next(iter(classes)) if len(classes) == 1 else None
    return held


def passed_functions(calls: Iterable[ast.Call], parameters: dict[str, list[str]],
                     function_names: Iterable[str]) -> dict[str, dict[str, set[str]]]:
    """For the functions of `parameters` (name -> positional parameters), what `calls` pass for each parameter that is
    a function of the module (`train_step(model, clip_grad_norm_)`: `{"train_step": {"clip_fn": {"clip_grad_norm_"}}}`)."""
    names = set(function_names)
    found: dict[str, dict[str, set[str]]] = {}
    for call in calls:
        func = call.func
        if type(func) is not ast.Name or func.id not in parameters:  # type: ignore[attr-defined]
            continue
        for parameter, value in _given(call, parameters[func.id]).items():  # type: ignore[attr-defined]
            if type(value) is ast.Name and value.id in names:  # type: ignore[attr-defined]
                found.setdefault(func.id, {}).setdefault(parameter, set()).add(value.id)  # type: ignore[attr-defined]
    return found


def _given(call: ast.AST, names: list[str]) -> dict[str, ast.AST]:
    """What a call passes, by parameter name (positional arguments by `names`, then keywords)."""
    given = dict(zip(names, call.args))  # type: ignore[attr-defined]
    given.update((k.arg, k.value) for k in call.keywords if k.arg is not None)  # type: ignore[attr-defined]
    return given


def _function_name(argument: ast.AST, index: "ModuleIndex") -> Optional[str]:
    """The name of a module-level function of this module that `argument` names."""
    return argument.id if type(argument) is ast.Name and argument.id in index.function_names else None  # type: ignore[attr-defined]
