"""Code that runs once, read off `ast` for the call graph: a function body behind a debug switch, cached functions,
and `if` blocks that run on the first call only (or once per key of a memo)."""

from __future__ import annotations

import ast
from typing import Callable, Iterable, Optional

from viewlint.analysis import semantics as sem
from viewlint.analysis.guards import cold_test
from viewlint.analysis.nodes import dotted


def debug_only_rest(function: ast.AST) -> Optional[list[ast.stmt]]:
    """The statements after a leading `if not <debug flag>: return` (`if not diagnostics_enabled(): return`):
    they run only when debugging is on."""
    body = list(getattr(function, "body", []))
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    if len(body) < 2 or not isinstance(body[0], ast.If) or body[0].orelse:
        return None
    guard = body[0]
    if not (len(guard.body) == 1 and isinstance(guard.body[0], ast.Return) and isinstance(guard.test, ast.UnaryOp)
            and isinstance(guard.test.op, ast.Not) and cold_test(guard.test.operand)):
        return None
    return body[1:]


def is_cached(node: ast.AST) -> bool:
    """Decorated with a cache (`functools.lru_cache`, `cache`, `cached_property`, a project's `*_lru_cache`)."""
    for decorator in getattr(node, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if "cache" in (dotted(target) or "").split(".")[-1]:
            return True
    return False


def keyed_by_tensor(function: ast.AST) -> bool:
    """Some parameter is annotated a tensor, used as one (`x.unbind()`) or given to a `torch` function: a
    cache of the function (fla's `@tensor_cache def prepare_lens(cu_seqlens)`, an `lru_cache` of a tensor) hits only
    for the very same object, and each step brings a new one."""
    arguments = getattr(function, "args", None)
    if arguments is None:
        return False
    parameters = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)} - {"self", "cls"}
    if any((dotted(a.annotation) or "").split(".")[-1] == "Tensor"
           for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs) if a.annotation is not None):
        return True
    for node in ast.walk(function):
        if type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id in parameters \
                and node.attr in sem.TENSOR_USAGE_METHODS:  # (not `.device`: a model has one, and is the same each step)
            return True
        if type(node) is ast.Call and _takes_tensors(dotted(node.func) or "") \
                and any(type(a) is ast.Name and a.id in parameters for a in node.args):
            return True
    return False


def _takes_tensors(function: str) -> bool:
    """A `torch` op whose arguments are tensors (`torch.diff(cu_seqlens)`): not a factory or a conversion
    (`torch.tensor(bounds)`, `torch.arange(n)`, `torch.as_tensor(xs)` take plain values), nor a getter of dtypes and
    devices (`torch.finfo(dtype)`, `torch.device(name)`)."""
    return sem.generic_torch_op(function) and function not in sem.FACTORY_FUNCTIONS \
        and function not in ("torch.as_tensor", "torch.from_numpy", "torch.asarray")


def _cache_miss(test: ast.AST, bindings: Optional["Bindings"] = None) -> set[str]:
    """The memos a miss test reads: `key not in self.cache` (or several joined with `or`), and `"step" not in state`
    of a local set to an item of a container an object keeps (`state = self.state[p]`: an optimizer's lazy state)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        parts = [_cache_miss(value, bindings) for value in test.values]
        return set().union(*parts) if all(parts) else set()
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotIn):
        name = dotted(test.comparators[0])
        if name is not None and (name.startswith("self.") or "." not in name and bindings is not None and any(
                _persistent_item(v) for v in bindings().get(name, ()))):
            return {name}
    return set()


def _emptied(test: ast.AST) -> Optional[str]:
    """What an emptiness test asks of: `len(state) == 0`, `not state` (a name or an attribute path)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return dotted(test.operand)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == 0 \
            and isinstance(test.left, ast.Call) and dotted(test.left.func) == "len" and len(test.left.args) == 1:
        return dotted(test.left.args[0])
    return None


def _persistent_item(value: Optional[ast.AST]) -> bool:
    """An item of a container an object keeps: `self.state[p]`, `optimizer.state[param]` (it outlives the call)."""
    return isinstance(value, ast.Subscript) and "." in (dotted(value.value) or "")


def local_bindings(nodes: Iterable[ast.AST]) -> dict[str, list[ast.AST]]:
    """{local name: the values of its plain assignments} among a function's nodes."""
    found: dict[str, list[ast.AST]] = {}
    for node in nodes:
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:  # type: ignore[attr-defined]
            found.setdefault(node.targets[0].id, []).append(node.value)  # type: ignore[attr-defined]
    return found


def _fills(node: ast.AST, memos: set[str]) -> bool:
    """`self.cache[key] = ...` or `self.cache.update(...)`/`.setdefault(...)` for one of `memos`."""
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Subscript) and dotted(t.value) in memos for t in node.targets)
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("update", "setdefault") \
        and dotted(node.func.value) in memos


Bindings = Callable[[], "dict[str, list[ast.AST]]"]


def runs_once(node: ast.AST, bindings: Optional[Bindings] = None) -> bool:
    """`if not self.ready: ...; self.ready = True`, `if self.packed is None: self.packed = ...`, `if self.first: ...;
    self.first = False`: the first call only;
    `if key not in self.cache: ...; self.cache[key] = ...`: once per key; `state = self.state[p]`, then
    `if len(state) == 0: state["step"] = ...`: an optimizer's lazy state, once per parameter; `fn = cache.get(key)`,
    then `if fn is None: ...; cache[key] = fn`: once per key (`bindings`: gives the function's local names and what
    they were set to, asked only for a test of a local). The one reading: the call graph asks here on `ast`, the walker
    through `viewlint.analysis.contexts.runs_once`."""
    wanted = _wanted(node.test, bindings)  # type: ignore[attr-defined]
    if wanted is None:
        return False
    memos, flag, clears = wanted
    for statement in node.body:  # type: ignore[attr-defined]
        for child in ast.walk(statement):
            if memos and _fills(child, memos):
                return True
            if flag is not None and isinstance(child, ast.Assign) and any(dotted(t) == flag for t in child.targets) \
                    and _falsy_constant(child.value) == clears:
                return True
    return False


def _falsy_constant(value: ast.AST) -> bool:
    """`False`, `None` or `0`: what a block sets a flag to when it clears it."""
    return isinstance(value, ast.Constant) and value.value in (False, None, 0)


def may_run_once(test: ast.AST, bindings: Optional[Bindings] = None) -> bool:
    """Whether `test` is one `runs_once` can accept, whatever the block does (asked before a block is parsed)."""
    return _wanted(test, bindings) is not None


def _wanted(test: ast.AST, bindings: Optional[Bindings]) -> Optional[tuple[set[str], Optional[str], bool]]:
    """What a block under `test` must do to run once, or None when no block can: (the memos it must fill, the flag
    it must set, whether it must clear the flag rather than set it: `if self.first: ...; self.first = False`)."""
    missing = _cache_miss(test, bindings)
    if missing:
        return missing, None, False
    if isinstance(test, ast.Attribute) and (dotted(test) or "").startswith("self."):
        return set(), dotted(test), True  # `if self.first:` of a flag the block clears
    memos: set[str] = set()
    empty = _emptied(test)
    if empty is not None and ("." in empty or (bindings is not None and any(
            _persistent_item(v) for v in bindings().get(empty, ())))):
        memos.add(empty)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        flag = dotted(test.operand)
    elif isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        flag = dotted(test.left)
    else:
        flag = None
    if flag is not None and "." not in flag:
        # A local is set anew on every call (an attribute of `self` or another object persists), unless it is what a
        # memo holds for a key: `fn = cache.get(key)`, then `if fn is None: ...; cache[key] = fn` runs once per key.
        memos |= {m for m in (dotted(v.func.value) for v in (bindings() if bindings is not None else {}).get(flag, ())
                              if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "get")
                  if m is not None}
        flag = None
    return (memos, flag, False) if memos or flag is not None else None
