"""Code that runs once, read off `ast` for the call graph: a function body behind a debug switch, cached functions
(but those keyed by a tensor, which each step brings anew: `cached_once`), and `if` blocks that run on the first call
only (or once per key of a memo)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Iterable, Optional, Sequence

from viewlint.analysis.bindings import tensor_annotation
from viewlint.analysis.guards import cold_test
from viewlint.analysis.nodes import dotted, preorder
from viewlint.analysis.usage import attribute_reads, tensor_use

if TYPE_CHECKING:
    from viewlint.analysis.callgraph import CallGraph, FunctionKey
    from viewlint.analysis.module_index import ModuleIndex


def debug_only_rest(function: ast.AST, switches: frozenset[str] = frozenset()) -> Optional[list[ast.stmt]]:
    """The statements after a leading `if not <debug flag>: return` (`if not diagnostics_enabled(): return`):
    they run only when debugging is on. `switches`: the module's debug switches (`ModuleIndex.cold_switches`)."""
    body = list(getattr(function, "body", []))
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    if len(body) < 2 or not isinstance(body[0], ast.If) or body[0].orelse:
        return None
    guard = body[0]
    if not (len(guard.body) == 1 and isinstance(guard.body[0], ast.Return) and isinstance(guard.test, ast.UnaryOp)
            and isinstance(guard.test.op, ast.Not) and cold_test(guard.test.operand, switches)):
        return None
    return body[1:]


def is_cached(node: ast.AST) -> bool:
    """Decorated with a cache (`functools.lru_cache`, `cache`, `cached_property`, a project's `*_lru_cache`)."""
    for decorator in getattr(node, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if "cache" in (dotted(target) or "").split(".")[-1]:
            return True
    return False


def cached_once(graph: "CallGraph") -> frozenset[FunctionKey]:
    """The cached functions (`once.is_cached`) that run once per key, not once per step: none is keyed by a tensor
    (`_keyed_by_tensor`), nor hands a parameter on to a function that is (`prepare_sequence_ids(cu_seqlens)` calling
    `prepare_position_ids(cu_seqlens)`). A cache keyed by a tensor (fla's `@tensor_cache def prepare_lens(cu_seqlens)`,
    an `lru_cache` of a tensor) hits only for the very same object, and each step brings a new one."""
    found = graph.memo.get("cached once")
    if found is not None:
        return found  # type: ignore[return-value]
    cached = {key for key, info in graph.functions.items() if is_cached(info.node)}
    per_tensor = {key for key in cached if _keyed_by_tensor(graph, graph.functions[key].node)}
    # A tensor that another cached function made, once per key, is the same object every time: a cache keyed by it
    # hits (`get_non_pad_index(construct_variable_block_sizes(shape, device))`, each `lru_cache`d).
    per_tensor -= {key for key in per_tensor if _fed_by_caches(graph, key, cached - per_tensor)}
    changed = True
    while changed:
        changed = False
        for key in cached - per_tensor:
            arguments = graph.functions[key].node.args  # type: ignore[attr-defined]
            parameters = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
            for call in (n for n in graph.skeletons[key] if type(n) is ast.Call):
                if any(type(a) is ast.Name and a.id in parameters for a in call.args) \
                        and any(callee in per_tensor for callee in graph.call_targets(key, call)):  # type: ignore[arg-type]
                    per_tensor.add(key)
                    changed = True
                    break
    found = graph.memo["cached once"] = frozenset(cached - per_tensor)
    return found


def _keyed_by_tensor(graph: "CallGraph", function: ast.AST) -> bool:
    """Some parameter is annotated a tensor, or the function uses it as one (`usage.tensor_use`: `x.unbind()`,
    `torch.diff(x)`; not `torch.tensor(bounds)` nor `torch.finfo(dtype)`)."""
    arguments = function.args  # type: ignore[attr-defined]
    parameters = [a for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs) if a.arg not in ("self", "cls")]
    if any(tensor_annotation(a.annotation) for a in parameters):
        return True
    reads = attribute_reads(graph.index.segment_nodes.get(id(function)) or preorder(function), graph.index)
    return any(tensor_use(a.arg, reads.get(a.arg, frozenset())) is not None for a in parameters)


def _fed_by_caches(graph: "CallGraph", key: FunctionKey, once: set[FunctionKey]) -> bool:
    """Every call of `key` in the module passes, for each name it passes, what a call of a function of `once` bound to
    that name in the caller (and there is a call)."""
    calls = 0
    for caller in set(graph.callers.get(key, ())):
        skeleton = graph.skeletons[caller]
        made = {target.id for n in skeleton if type(n) is ast.Assign and type(n.value) is ast.Call  # type: ignore[attr-defined]
                and any(callee in once for callee in graph.call_targets(caller, n.value))  # type: ignore[attr-defined]
                for target in n.targets if type(target) is ast.Name}  # type: ignore[attr-defined]
        bound = [t.id for n in skeleton if type(n) in (ast.Assign, ast.AnnAssign)
                 for t in (n.targets if type(n) is ast.Assign else [n.target]) if type(t) is ast.Name]  # type: ignore[attr-defined]
        for call in (n for n in skeleton if type(n) is ast.Call and key in graph.call_targets(caller, n)):  # type: ignore[arg-type]
            calls += 1
            names = [a.id for a in call.args if type(a) is ast.Name]  # type: ignore[attr-defined]
            if not names or any(name not in made or bound.count(name) != 1 for name in names):
                return False
    return calls > 0


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
Methods = Callable[[str], "Sequence[ast.AST]"]


def runs_once(node: ast.AST, bindings: Optional[Bindings] = None, methods: Optional[Methods] = None) -> bool:
    """`if not self.ready: ...; self.ready = True`, `if self.packed is None: self.packed = ...`, `if self.first: ...;
    self.first = False`: the first call only;
    `if key not in self.cache: ...; self.cache[key] = ...`: once per key; `state = self.state[p]`, then
    `if len(state) == 0: state["step"] = ...`: an optimizer's lazy state, once per parameter; `fn = cache.get(key)`,
    then `if fn is None: ...; cache[key] = fn`: once per key (`bindings`: gives the function's local names and what
    they were set to, asked only for a test of a local). A flag may be set by a method the block calls
    (`if not self.prepared: self._prepare()`, where `_prepare` sets `self.prepared = True`; `methods`: the module's
    methods of a name, `methods_named`). The one reading: the call graph asks here on `ast`, the walker through
    `viewlint.analysis.contexts.runs_once`."""
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
            if flag is not None and methods is not None and type(child) is ast.Call and _sets_through(child, flag, clears, methods):
                return True
    return False


def _sets_through(call: ast.Call, flag: str, clears: bool, methods: Methods) -> bool:
    """`self._prepare(...)`, where a method of this module of that name sets `flag` (`self.prepared = True`)."""
    func = call.func
    if not (flag.startswith("self.") and type(func) is ast.Attribute and type(func.value) is ast.Name
            and func.value.id == "self"):  # type: ignore[attr-defined]
        return False
    return any(isinstance(n, ast.Assign) and any(dotted(t) == flag for t in n.targets) and _falsy_constant(n.value) == clears
               for method in methods(func.attr) for n in ast.walk(method))  # type: ignore[attr-defined]


def methods_named(index: "ModuleIndex") -> Methods:
    """The methods of the module's classes, by name (read once per module)."""
    found = index.memo.get("methods by name")
    if found is None:
        table: dict[str, list[ast.AST]] = {}
        for definitions in index.class_defs.values():
            for definition in definitions:
                for member in definition.body:
                    if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        table.setdefault(member.name, []).append(member)
        found = index.memo["methods by name"] = lambda name: table.get(name, ())
    return found  # type: ignore[return-value]


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
