"""Functions a module registers as hooks, and what PyTorch passes their parameters.

`layer.register_forward_hook(record)` calls `record(module, args, output)` after every forward of `layer`:
`output` is what the layer returned (a tensor for most layers, a tuple for some). `param.register_hook(clip)`
calls `clip(grad)` with the gradient, a tensor. The hook is found where it is registered: a function of the
module by name (or `self.method`), through `functools.partial(record, ...)`, what a factory of the module returns
(`layer.register_forward_hook(self.get_activation(name))`, whose nested `def hook(...)` it returns), or an
instance of a class of the module (`register_forward_hook(Dumper(path))`: its `__call__`). Read off the module's
`ast` once; `registered_hooks` is what the flow asks (`flow.enter_function`).
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

import libcst as cst

from viewlint.analysis.nodes import dotted
from viewlint.analysis.values import Kind, Value

# (module, args, output) after a forward; `output` is third.
FORWARD_HOOKS = frozenset({"register_forward_hook", "register_module_forward_hook"})
# (grad) of a tensor; (param) after its gradient is accumulated.
TENSOR_HOOKS = frozenset({"register_hook", "register_post_accumulate_grad_hook"})
_REGISTERING = tuple(sorted(FORWARD_HOOKS | TENSOR_HOOKS))


def registered_hooks(tree: Optional[ast.Module], memo: dict, source: str = "") -> dict[str, str]:
    """Function name (`Class.__call__` for an instance's class) -> the method that registers it (one of
    `FORWARD_HOOKS` or `TENSOR_HOOKS`); a name registered by both kinds is left out. `source`, the module's text
    when at hand: a module that never spells one of those methods registers nothing (and its tree is not walked:
    most model files spell `register_buffer`)."""
    found = memo.get("registered hooks")
    if found is None:
        registers = tree is not None and (not source or any(method in source for method in _REGISTERING))
        found = memo["registered hooks"] = _registered(tree) if registers else {}  # type: ignore[arg-type]
    return found  # type: ignore[return-value]


def _registered(tree: ast.Module) -> dict[str, str]:
    definitions: dict[str, list[ast.AST]] = {}  # def name -> its definitions, at any depth
    classes: set[str] = set()
    instances: dict[str, str] = {}  # `dumper = Dumper(...)` anywhere: name -> class
    registrations: list[tuple[str, ast.AST]] = []
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            definitions.setdefault(node.name, []).append(node)  # type: ignore[attr-defined]
        elif kind is ast.ClassDef:
            classes.add(node.name)  # type: ignore[attr-defined]
        elif kind is ast.Assign and len(node.targets) == 1 and type(node.value) is ast.Call:  # type: ignore[attr-defined]
            target, built = dotted(node.targets[0]), dotted(node.value.func)  # type: ignore[attr-defined]
            if target is not None and built is not None:
                instances[target] = built.split(".")[-1]
        elif kind is ast.Call and type(node.func) is ast.Attribute and node.args:  # type: ignore[attr-defined]
            method = node.func.attr  # type: ignore[attr-defined]
            if method in FORWARD_HOOKS or method in TENSOR_HOOKS:
                registrations.append((method, node.args[0]))  # type: ignore[attr-defined]
    registrations.extend(_passed_on(tree, definitions))
    found: dict[str, str] = {}
    dropped: set[str] = set()
    for method, hook in registrations:
        for name in _hook_names(hook, definitions, classes, instances):
            if found.get(name, method) != method:
                dropped.add(name)
            found[name] = method
    return {name: method for name, method in found.items() if name not in dropped}


def _passed_on(tree: ast.Module, definitions: dict[str, list[ast.AST]]) -> list[tuple[str, ast.AST]]:
    """A function that registers one of its parameters (`def run(head, batches, hook): head.register_forward_hook(hook)`):
    what this module's calls of it pass there (`run(head, batches, _dump_hook)`)."""
    slots: dict[str, list[tuple[str, int, str]]] = {}  # function name -> (method, position after `self`, parameter)
    for name, functions in definitions.items():
        for function in functions:
            arguments = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]  # type: ignore[attr-defined]
            if arguments and arguments[0] in ("self", "cls"):
                arguments = arguments[1:]
            for node in ast.walk(function):
                if type(node) is ast.Call and type(node.func) is ast.Attribute and node.args \
                        and (node.func.attr in FORWARD_HOOKS or node.func.attr in TENSOR_HOOKS) \
                        and type(node.args[0]) is ast.Name and node.args[0].id in arguments:  # type: ignore[attr-defined]
                    parameter = node.args[0].id  # type: ignore[attr-defined]
                    slots.setdefault(name, []).append((node.func.attr, arguments.index(parameter), parameter))  # type: ignore[attr-defined]
    if not slots:
        return []
    passed: list[tuple[str, ast.AST]] = []
    for node in ast.walk(tree):
        if type(node) is not ast.Call:
            continue
        callee = (dotted(node.func) or "").split(".")[-1]  # type: ignore[attr-defined]
        for method, position, parameter in slots.get(callee, ()):
            keyword = next((k.value for k in node.keywords if k.arg == parameter), None)  # type: ignore[attr-defined]
            given = keyword if keyword is not None else node.args[position] if position < len(node.args) else None  # type: ignore[attr-defined]
            if given is not None and type(given) is not ast.Starred:
                passed.append((method, given))
    return passed


def _hook_names(hook: ast.AST, definitions: dict[str, list[ast.AST]], classes: set[str],
                instances: dict[str, str]) -> list[str]:
    """The functions of the module a registered expression calls."""
    if type(hook) is ast.IfExp:  # `fixed_hook if fixed else hook`
        return [*_hook_names(hook.body, definitions, classes, instances),  # type: ignore[attr-defined]
                *_hook_names(hook.orelse, definitions, classes, instances)]  # type: ignore[attr-defined]
    if type(hook) is ast.Call:
        callee = (dotted(hook.func) or "").split(".")[-1]  # type: ignore[attr-defined]
        if callee == "partial" and hook.args:  # type: ignore[attr-defined]
            return _hook_names(hook.args[0], definitions, classes, instances)  # type: ignore[attr-defined]
        if callee in classes:
            return [f"{callee}.__call__"]
        # A factory of this module: the nested functions it returns.
        return [name for factory in definitions.get(callee, ()) for name in sorted(_returned(factory) & _nested(factory))]
    name = dotted(hook)
    if name is None:
        return []
    if name in instances and instances[name] in classes:
        return [f"{instances[name]}.__call__"]
    last = name.split(".")[-1]
    return [last] if last in definitions and (name == last or name == f"self.{last}") else []


def _nested(factory: ast.AST) -> set[str]:
    return {n.name for statement in getattr(factory, "body", []) for n in ast.walk(statement)  # type: ignore[attr-defined]
            if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef)}


def _returned(factory: ast.AST) -> set[str]:
    return {n.value.id for n in ast.walk(factory) if type(n) is ast.Return and type(n.value) is ast.Name}  # type: ignore[attr-defined]


def hook_inputs(function: cst.FunctionDef, owner: Optional[str], hooks: dict[str, str],
                used_as_tensors: Callable[[], set[str]]) -> dict[str, Value]:
    """What PyTorch passes the parameters of `function` (a method of `owner`, or None) where the module registers it
    as a hook: a tensor hook's gradient; a forward hook's output where the hook uses it as a tensor is used
    (`output.shape`, `output.detach()`: a layer may return a tuple, which indexing alone does not tell apart)."""
    name = function.name.value
    method = hooks.get(f"{owner}.{name}") if owner is not None else None
    method = method or hooks.get(name)
    if method is None:
        return {}
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    if owner is not None:
        params = params[1:]  # `self`
    if method in TENSOR_HOOKS and params:
        return {params[0]: Value(kind=Kind.TENSOR, why=f"what `.{method}()` passes its hook `{name}`")}
    if method in FORWARD_HOOKS and len(params) >= 3 and params[2] in used_as_tensors():
        return {params[2]: Value(kind=Kind.TENSOR, why=f"the output of the module whose `.{method}()` registers `{name}`")}
    return {}


def may_be_hooked(name: str, hooks: dict[str, str]) -> bool:
    """Whether a function of that name may be one `hook_inputs` reads (for the prefilter: a superset, whatever
    class the function is a method of)."""
    return name in hooks or any(key.endswith("." + name) for key in hooks)
