"""Functions of a module that only compute what they return.

`random_weight(m.weight.size())` as a statement, where `def random_weight(shape)` makes a tensor with `torch.randn`,
sets `requires_grad` on it and returns it: the call's only effect is the tensor it returns, and the statement throws
that away (VL205). A function counts only where its own body shows it changes nothing its caller can see:

- it writes (an in-place method, an attribute or an item store) only into names it made itself, each bound only to
  what a `torch`/NumPy/`math` function computes, to arithmetic, or to a constant (never to a parameter, a view of one,
  or anything read from outside);
- every call in it is a `torch`, NumPy or `math` function that is not in-place and not one with effects (saving,
  seeding, devices, collectives), a builtin that only computes (`len`, `max`, `isinstance`), a method that computes
  from a tensor (`x.size()`, `x.float()`, `w.view(...)`), any method of a name it made, or another function of the
  module that counts too;
- it has no `global`, `nonlocal`, `assert`, `raise`, `with`, `try`, `del`, `yield`, `await`, nested function, class
  or lambda (a check that raises is an effect a caller may want), and no decorator but `torch.no_grad()` and its kin
  (`@functools.cache` keeps what a call makes: a bare call fills the cache).

Read off the module's `ast`, once per function (`makes_only`): the prefilter and VL205 ask the same answer.
"""

from __future__ import annotations

import ast
from typing import Optional

from viewlint.analysis import semantics
from viewlint.analysis.callgraph import CallGraph, FunctionKey
from viewlint.analysis.nodes import dotted, qualify_name

_COMPUTING_BUILTINS = frozenset({
    "len", "range", "int", "float", "bool", "tuple", "list", "dict", "min", "max", "sum", "abs", "round", "isinstance",
    "zip", "enumerate", "sorted", "reversed", "str", "any", "all", "divmod", "pow", "slice", "hasattr", "type",
})
# Modules whose functions compute values (the ones below are left out).
_COMPUTING_MODULES = ("torch", "numpy", "math")
_EFFECT_MODULES = ("torch.cuda", "torch.distributed", "torch.backends", "torch.random", "torch.distributions", "numpy.random",
                   "torch.autograd", "torch.utils", "torch.library", "torch.compiler", "torch._", "torch.ops")  # custom ops write `out`
_EFFECT_WORDS = ("save", "load", "seed", "set_", "print", "write", "synchronize", "empty_cache", "record", "register",
                 "barrier", "all_", "broadcast", "send", "recv", "use_", "compile")
# Tensor methods that compute a value and change nothing (views, copies, casts, reads of metadata).
_COMPUTING_METHODS = (semantics.VIEW_METHODS | semantics.FRESH_METHODS | semantics.MAYBE_VIEW_METHODS
                      | semantics.DTYPE_CAST_METHODS | semantics.HOST_VALUE_METHODS | semantics.FRESH_CONTIGUOUS_METHODS) \
    - semantics.STORING_METHODS - semantics.ADDING_METHODS - semantics.CONTAINER_ONLY_METHODS - semantics.QUEUE_METHODS \
    - semantics.MODULE_SHARED_METHODS - {"to", "cpu", "type", "sort"}  # a module converts itself; a list sorts itself
_EFFECT_STATEMENTS = (ast.Global, ast.Nonlocal, ast.Assert, ast.Raise, ast.With, ast.AsyncWith, ast.Try, ast.Delete,
                      ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Yield, ast.YieldFrom, ast.Await)
_MAX_DEPTH = 2
# Decorators that change only how autograd records the call.
_GRAD_MODES = frozenset({"torch.no_grad", "torch.inference_mode", "torch.enable_grad"})


def makes_only(graph: CallGraph, name: str) -> bool:
    """Whether calling the module-level function `name` does nothing but compute the value it returns."""
    return _makes_only(graph, name, _MAX_DEPTH)


def _makes_only(graph: CallGraph, name: str, depth: int) -> bool:
    memo_key = ("makes only", name, depth)  # (a callee is read with less depth: its answer may differ)
    found = graph.memo.get(memo_key)
    if found is not None:
        return bool(found)
    graph.memo[memo_key] = False  # a cycle is not claimed
    info = graph.functions.get(FunctionKey(None, name))
    answer = info is not None and type(info.node) is ast.FunctionDef and info.returns_value and depth > 0 \
        and _body_makes_only(graph, info.node, depth)  # type: ignore[arg-type]
    graph.memo[memo_key] = answer
    return answer


def _body_makes_only(graph: CallGraph, node: ast.FunctionDef, depth: int) -> bool:
    if any(qualify_name(graph.index, dotted(d.func if type(d) is ast.Call else d)) not in _GRAD_MODES  # type: ignore[attr-defined]
           for d in node.decorator_list):
        return False  # `@cache` keeps what a call makes (a bare call fills the cache), `@register` records it
    arguments = node.args
    parameters = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    parameters |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    aliases = graph.index.aliases
    made = _own_names(node, parameters, aliases)
    for child in ast.walk(node):
        if child is node:
            continue
        kind = type(child)
        if isinstance(child, _EFFECT_STATEMENTS):
            return False
        if kind is ast.Assign or kind is ast.AnnAssign:
            targets = child.targets if kind is ast.Assign else [child.target]  # type: ignore[attr-defined]
            for target in targets:
                if not _writable(target, made):
                    return False
        elif kind is ast.AugAssign:
            # `w += 1` writes into `w` itself where it is a tensor: only into what the function made.
            target = child.target  # type: ignore[attr-defined]
            if not (_root(target) in made if type(target) is not ast.Name else target.id in made):  # type: ignore[attr-defined]
                return False
        elif kind is ast.Call and not _computes(graph, child, made, aliases, depth):  # type: ignore[arg-type]
            return False
    return True


def _own_names(node: ast.FunctionDef, parameters: set[str], aliases: dict[str, str]) -> set[str]:
    """The names every binding of which is a value the function computed itself."""
    bound: dict[str, bool] = {}
    for child in ast.walk(node):
        if type(child) is ast.Assign:
            for target in child.targets:  # type: ignore[attr-defined]
                if type(target) is ast.Name:
                    bound[target.id] = bound.get(target.id, True) and _computed(child.value, aliases)  # type: ignore[attr-defined]
        elif type(child) is ast.AnnAssign and type(child.target) is ast.Name and child.value is not None:  # type: ignore[attr-defined]
            bound[child.target.id] = bound.get(child.target.id, True) and _computed(child.value, aliases)  # type: ignore[attr-defined]
        elif type(child) is ast.AugAssign and type(child.target) is ast.Name:  # type: ignore[attr-defined]
            bound.setdefault(child.target.id, False)  # type: ignore[attr-defined]  # (its first binding decides)
        elif type(child) in (ast.For, ast.comprehension) and type(child.target) is not ast.Name:  # type: ignore[attr-defined]
            for name in ast.walk(child.target):  # type: ignore[attr-defined]
                if type(name) is ast.Name:
                    bound[name.id] = False
        elif type(child) in (ast.For, ast.comprehension):
            bound[child.target.id] = False  # type: ignore[attr-defined]  # an item of what it iterates
    return {name for name, own in bound.items() if own and name not in parameters}


def _computed(value: ast.AST, aliases: dict[str, str]) -> bool:
    """A value made here: a call of an imported module's function (`torch.randn(...)`), arithmetic, a constant."""
    kind = type(value)
    if kind is ast.Constant:
        return True
    if kind is ast.BinOp or kind is ast.UnaryOp:
        return True  # arithmetic makes a new value (an in-place operator would be an AugAssign)
    return kind is ast.Call and type(value.func) is ast.Attribute and _root(value.func) in aliases  # type: ignore[attr-defined]


def _root(node: ast.AST) -> Optional[str]:
    while type(node) is ast.Attribute:
        node = node.value  # type: ignore[attr-defined]
    return node.id if type(node) is ast.Name else None  # type: ignore[attr-defined]


def _writable(target: ast.AST, made: set[str]) -> bool:
    """A store the caller cannot see: a local name, or an attribute or item of a name the function made."""
    if type(target) is ast.Name:
        return True
    if type(target) in (ast.Tuple, ast.List):
        return all(_writable(e, made) for e in target.elts)  # type: ignore[attr-defined]
    if type(target) in (ast.Attribute, ast.Subscript):
        return _root(target.value) in made  # type: ignore[attr-defined]
    return False


def _computes(graph: CallGraph, call: ast.Call, made: set[str], aliases: dict[str, str], depth: int) -> bool:
    func = call.func
    if type(func) is not ast.Name and type(func) is not ast.Attribute:
        return False
    root = _root(func)
    if root is not None and root in aliases:
        return computing_function(qualify_name(graph.index, dotted(func)) or "")  # `torch.randn`, `np.sqrt`, `sqrt`
    if type(func) is ast.Name:
        return root in _COMPUTING_BUILTINS or _makes_only(graph, root, depth - 1)  # type: ignore[arg-type]
    if root is not None and root in made:
        return True  # a method of what the function made (`w.requires_grad_()`)
    method = func.attr  # type: ignore[attr-defined]
    return method in _COMPUTING_METHODS and not method.endswith("_")


def computing_function(qualified: str) -> bool:
    """`torch.softmax`, `np.sqrt`: a function that computes a value from its arguments and changes none of them (not
    `torch.distributed.all_reduce(x)`, `torch.ops.lib.kernel(out, x)`, `torch.nn.init.zeros_(w)`)."""
    if not qualified.startswith(tuple(f"{m}." for m in _COMPUTING_MODULES)) or qualified.startswith(_EFFECT_MODULES):
        return False
    last = qualified.rsplit(".", 1)[-1]
    return not last.endswith("_") and not any(word in last for word in _EFFECT_WORDS)
