"""Whether a function only reads a tensor it is handed (or one it binds): nothing writes into it or into a view of it.

`def _find_start_stop_traj(cls, *, trajectory, at_capacity)` that computes `end = trajectory[:-1] != trajectory[1:]`
only reads `trajectory`: a caller that hands it `trajectory.clone()` copies for nothing (VL313). A name is read only
where every use of it, and of every view bound from it (`v = x[:, 0]`, `a, b = x.unbind(0)`, `y = x.view(n, -1)`), is
a read: an attribute (`x.shape`), a method that writes nothing (no trailing `_`), an index read, an operand of
arithmetic or a comparison, an argument of a `torch` function (not its `out=`), of a few builtins, or of a function
of this module that only reads that parameter in turn (two calls deep). Anything else may write it or keep it: an
item or attribute store, an augmented assignment, `del`, a return or `yield`, a container, a closure, any other call.

Read off the module's `ast`, once per function and name (the call graph's memo).
"""

from __future__ import annotations

import ast
from typing import Optional

from viewlint.analysis import semantics as sem
from viewlint.analysis.callgraph import CallGraph, FunctionKey
from viewlint.analysis.nodes import dotted, qualify_name
from viewlint.analysis.purity import computing_function
from viewlint.analysis.tree import enclosing

_MAX_DEPTH = 3
# Builtins that read what they are given and keep none of it.
_READING_BUILTINS = frozenset({"len", "isinstance", "print", "repr", "str", "int", "float", "bool", "type", "id",
                               "hasattr", "getattr", "format", "max", "min"})
# Methods and attributes whose result is (or may be) a view of the tensor: a write into it writes the tensor.
_VIEWING_METHODS = sem.VIEW_METHODS | sem.MAYBE_VIEW_METHODS | sem.SEQUENCE_VIEW_METHODS
_VIEWING_ATTRIBUTES = sem.VIEW_ATTRIBUTES | sem.AMBIGUOUS_VIEW_ATTRIBUTES
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def parameter_read_only(graph: CallGraph, key: FunctionKey, parameter: str, depth: int = _MAX_DEPTH) -> bool:
    """Whether the function `key` of the module only reads its `parameter` (and its views)."""
    memo_key = ("reads only", key, parameter, depth)
    found = graph.memo.get(memo_key)
    if found is not None:
        return bool(found)
    graph.memo[memo_key] = False  # a cycle is not claimed
    info = graph.functions.get(key)
    answer = info is not None and isinstance(info.node, (ast.FunctionDef, ast.AsyncFunctionDef)) and depth > 0 \
        and _reads_only(graph, key, info.node, parameter, 0, depth)
    graph.memo[memo_key] = answer
    return answer


def local_read_only(graph: CallGraph, key: FunctionKey, name: str, after_line: int) -> bool:
    """Whether the function `key` only reads what it binds to `name` on line `after_line`, from there on."""
    info = graph.functions.get(key)
    return info is not None and isinstance(info.node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
        and _reads_only(graph, key, info.node, name, after_line, _MAX_DEPTH)


def _reads_only(graph: CallGraph, key: FunctionKey, function: ast.AST, name: str, after_line: int, depth: int) -> bool:
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(function):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    tracked = {name}
    changed = True
    while changed:  # the views bound from it, and theirs
        changed = False
        for node in ast.walk(function):
            if type(node) is ast.Assign and node.lineno >= after_line and _view_of(node.value, tracked):
                for target in node.targets:
                    for bound in (target.elts if type(target) in (ast.Tuple, ast.List) else [target]):  # type: ignore[attr-defined]
                        if type(bound) is ast.Name and bound.id not in tracked:
                            tracked.add(bound.id)
                            changed = True
    uses = [node for node in ast.walk(function) if type(node) is ast.Name and node.id in tracked
            and type(node.ctx) is ast.Load and node.lineno >= after_line]
    for use in uses:
        nested = enclosing(use, parents, _SCOPES, scope=function) is not None  # read in a nested function, lambda or class
        if nested or not _read_use(graph, key, use, parents, tracked, depth):
            return False
    for node in ast.walk(function):
        if type(node) in (ast.Global, ast.Nonlocal) and tracked & set(node.names):  # type: ignore[attr-defined]
            return False
        if type(node) is ast.AugAssign and type(node.target) is ast.Name and node.target.id in tracked \
                and node.lineno >= after_line:  # type: ignore[attr-defined]
            return False  # `mask &= ~keep`: in place, for a tensor
    return True


def _view_of(value: ast.AST, tracked: set[str]) -> bool:
    """`x[…]`, `x.view(…)`, `x.T`, `x.unbind(0)`, `a if c else x` of a tracked name: what may share its storage."""
    while True:
        kind = type(value)
        if kind is ast.Name:
            return value.id in tracked  # type: ignore[attr-defined]
        if kind is ast.Subscript:
            value = value.value  # type: ignore[attr-defined]
        elif kind is ast.Attribute and value.attr in _VIEWING_ATTRIBUTES:  # type: ignore[attr-defined]
            value = value.value  # type: ignore[attr-defined]
        elif kind is ast.Call and type(value.func) is ast.Attribute and value.func.attr in _VIEWING_METHODS:  # type: ignore[attr-defined]
            value = value.func.value  # type: ignore[attr-defined]
        elif kind is ast.IfExp:
            return _view_of(value.body, tracked) or _view_of(value.orelse, tracked)  # type: ignore[attr-defined]
        else:
            return False


def _read_use(graph: CallGraph, key: FunctionKey, node: ast.AST, parents: dict[int, ast.AST], tracked: set[str],
              depth: int) -> bool:
    """Whether this use of a tracked value (or of an expression that may be a view of it) only reads it."""
    parent = parents.get(id(node))
    kind = type(parent)
    if kind in (ast.BinOp, ast.Compare, ast.UnaryOp, ast.BoolOp, ast.FormattedValue, ast.JoinedStr):
        return True  # a new value (an in-place operator is an AugAssign)
    if kind is ast.Attribute:
        call = parents.get(id(parent))
        if type(call) is ast.Call and call.func is parent:  # type: ignore[attr-defined]
            method = parent.attr  # type: ignore[attr-defined]
            if method == "__setitem__" or (method.endswith("_") and not method.startswith("__")):
                return False  # `x.add_(1)`, `x.copy_(y)`
            if method in _VIEWING_METHODS:
                return _read_use(graph, key, call, parents, tracked, depth)  # what it returns may be a view
            return True
        if parent.attr in _VIEWING_ATTRIBUTES:  # type: ignore[attr-defined]
            return _read_use(graph, key, parent, parents, tracked, depth)  # `x.data`, `x.T`
        return True  # `x.shape`, `x.device`
    if kind is ast.Subscript:
        if parent.value is not node:  # type: ignore[attr-defined]
            return True  # an index: read
        if type(parent.ctx) is not ast.Load:  # type: ignore[attr-defined]
            return False  # `x[i] = v`, `del x[i]`
        return _read_use(graph, key, parent, parents, tracked, depth)
    if kind is ast.IfExp and parent.test is not node:  # type: ignore[attr-defined]
        return _read_use(graph, key, parent, parents, tracked, depth)
    if kind is ast.IfExp:
        return True
    if kind is ast.Assign:
        # `v = x[:, 0]` binds a view (tracked itself); `buf[:, :h] = x` copies its values into another tensor;
        # `self.saved = x`, `d[k] = x` keep it.
        return all(type(t) is ast.Name or (type(t) in (ast.Tuple, ast.List) and all(type(e) is ast.Name for e in t.elts))
                   or _copied_into(t) for t in parent.targets)  # type: ignore[attr-defined]
    if kind in (ast.List, ast.Tuple) and type(parent.ctx) is ast.Load:  # type: ignore[attr-defined]
        # `torch.cat([x, pad])`: a display handed straight to a call is read as the call reads it.
        holder = parents.get(id(parent))
        if type(holder) is ast.Call and parent in holder.args:  # type: ignore[attr-defined]
            return _read_argument(graph, key, holder, holder.args.index(parent), None, depth)  # type: ignore[arg-type,attr-defined]
        return False
    if kind is ast.keyword:
        call = parents.get(id(parent))
        return type(call) is ast.Call and _read_argument(graph, key, call, None, parent.arg, depth)  # type: ignore[arg-type,attr-defined]
    if kind is ast.Call and node is not parent.func:  # type: ignore[attr-defined]
        position = next((i for i, a in enumerate(parent.args) if a is node), None)  # type: ignore[attr-defined]
        return position is not None and _read_argument(graph, key, parent, position, None, depth)  # type: ignore[arg-type]
    return False  # returned, yielded, put in a container, iterated, augmented, compared by `is`: not known to be read only


def _copied_into(target: ast.AST) -> bool:
    """`buf[:, :h] = x`, `buf[i, j] = x`: a store into slices of a tensor (a slice or several indices), which copies
    the values; not `d[key] = x`, which keeps the object."""
    if type(target) is not ast.Subscript:
        return False
    index = target.slice  # type: ignore[attr-defined]
    return type(index) is ast.Slice or (type(index) is ast.Tuple and len(index.elts) > 1)  # type: ignore[attr-defined]


def _read_argument(graph: CallGraph, key: FunctionKey, call: ast.Call, position: Optional[int], keyword: Optional[str],
                   depth: int) -> bool:
    """Whether `call` only reads its argument at `position` (or keyword)."""
    if keyword == "out":
        return False
    func = call.func
    qualified = qualify_name(graph.index, dotted(func)) or ""
    if qualified.startswith("torch.") and computing_function(qualified):
        return True  # (`torch.distributed.all_reduce(x)` writes `x`)
    if type(func) is ast.Name and func.id in _READING_BUILTINS and func.id not in graph.index.defined_functions:
        return True
    targets = graph.call_targets(key, call)
    if not targets or depth <= 1:
        return False
    for target in targets:
        info = graph.functions[target]
        parameters = info.positional
        name = keyword if keyword is not None else parameters[position] if position is not None and position < len(parameters) else None
        if name is None or not parameter_read_only(graph, target, name, depth - 1):
            return False
    return True


# torch's joins: each copies every tensor of the list it is given into a new one.
_JOINS = frozenset({"stack", "cat", "concat", "concatenate", "hstack", "vstack", "dstack", "column_stack", "row_stack"})


def joined_only(graph: CallGraph, key: FunctionKey, name: str) -> Optional[str]:
    """The `torch` join (`torch.stack`) that alone reads the list the function `key` binds to `name`, where the
    function binds it once, to `[]`, and does nothing else with it than `name.append(…)` and hand it to joins: what
    is appended is copied once more there. None otherwise."""
    info = graph.functions.get(key)
    if info is None:
        return None
    bindings = [n for n in ast.walk(info.node) if type(n) in (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For)
                and any(type(t) is ast.Name and t.id == name
                        for target in (n.targets if type(n) is ast.Assign else [n.target])  # type: ignore[attr-defined]
                        for t in ast.walk(target))]
    if len(bindings) != 1 or type(bindings[0]) is not ast.Assign or bindings[0].value.__class__ is not ast.List \
            or bindings[0].value.elts:  # type: ignore[attr-defined]
        return None
    parents = {id(child): node for node in ast.walk(info.node) for child in ast.iter_child_nodes(node)}
    joins = set()
    for use in (n for n in ast.walk(info.node) if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load):
        parent = parents.get(id(use))
        if type(parent) is ast.Attribute and parent.attr == "append" and type(parents.get(id(parent))) is ast.Call:
            continue
        qualified = qualify_name(graph.index, dotted(parent.func)) or "" if type(parent) is ast.Call else ""  # type: ignore[attr-defined]
        if qualified.startswith("torch.") and qualified[6:] in _JOINS and parent.args and parent.args[0] is use:  # type: ignore[attr-defined]
            joins.add(qualified)
            continue
        return None
    return sorted(joins)[0] if joins else None


def appended_copies_joined(graph: CallGraph, key: FunctionKey, name: str) -> Optional[str]:
    """The join (`joined_only`) that alone reads the list `name`, where each item the function appends to it is a
    `.clone()` (through `.detach()`) of a value of a local name that nothing writes from the first loop around the
    append on (`buf.append(logits[i].clone().detach())`, then `torch.stack(buf)`): the join copies them again, so the
    clones protect nothing. None otherwise."""
    join = joined_only(graph, key, name)
    info = graph.functions.get(key)
    if join is None or info is None:
        return None
    parents = {id(child): node for node in ast.walk(info.node) for child in ast.iter_child_nodes(node)}
    appends = [n for n in ast.walk(info.node) if type(n) is ast.Call and type(n.func) is ast.Attribute
               and n.func.attr == "append" and type(n.func.value) is ast.Name and n.func.value.id == name]
    for call in appends:
        root = _cloned_root(call.args[0]) if len(call.args) == 1 else None
        if root is None:
            return None
        start, node = call.lineno, call
        while id(node) in parents and node is not info.node:
            node = parents[id(node)]
            if type(node) in (ast.For, ast.While, ast.AsyncFor):
                start = node.lineno  # (an earlier statement of the loop runs after the append, the next time round)
        if not local_read_only(graph, key, root, start):
            return None
    return join if appends else None


def _cloned_root(value: ast.AST) -> Optional[str]:
    """`x` of `x.clone()`, `x[i][k].clone().detach()`, `x.detach().clone()`; None for anything else."""
    cloned = False
    while type(value) is ast.Call and type(value.func) is ast.Attribute and not value.args:  # type: ignore[attr-defined]
        if value.func.attr not in ("clone", "detach"):  # type: ignore[attr-defined]
            return None
        cloned = cloned or value.func.attr == "clone"  # type: ignore[attr-defined]
        value = value.func.value  # type: ignore[attr-defined]
    while type(value) is ast.Subscript:
        value = value.value  # type: ignore[attr-defined]
    return value.id if cloned and type(value) is ast.Name else None  # type: ignore[attr-defined]
