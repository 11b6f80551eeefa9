"""The module's call graph, read off CPython's `ast` before anything is parsed with libcst.

Which functions and methods the module defines, which of them each call may reach (by the
names `ModuleSummaries.resolve` follows: a superset of what it resolves), who calls whom,
which functions are recursive, and which methods touch which `self.<attr>`. The prefilter
asks it which parameters callers fill and which calls return something of this module's;
the summaries and the hot-path inference use it too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Optional

from viewlint.analysis import semantics as sem
from viewlint.analysis.features import dotted
from viewlint.analysis.module_index import ModuleIndex

# Method names too common to resolve by name alone: containers', tensors' and Python's protocols.
_UNRESOLVED_METHOD_NAMES = sem.STORING_METHODS | sem.MAYBE_VIEW_METHODS | sem.VIEW_METHODS | sem.FRESH_METHODS | frozenset({
    "get", "items", "keys", "values", "pop", "remove", "clear", "copy", "forward", "__call__", "__init__",
    "step", "zero_grad", "backward", "train", "eval", "run", "apply", "call", "close", "open", "read", "write",
    "format", "join", "split", "strip", "replace", "encode", "decode", "start", "stop", "reset", "load", "save",
    "build", "update", "register", "item", "size", "numel", "dim", "named_parameters", "parameters", "modules",
    "children", "state_dict", "load_state_dict", "to_dict", "from_dict", "wait", "result", "submit", "send",
})


@dataclass(frozen=True)
class FunctionKey:
    owner: Optional[str]  # the class that defines it, or None at module level
    name: str

    def __str__(self) -> str:
        return f"{self.owner}.{self.name}" if self.owner else self.name


@dataclass
class FunctionInfo:
    key: FunctionKey
    node: ast.AST  # ast.FunctionDef or ast.AsyncFunctionDef
    positional: list[str]  # parameters filled by positional arguments, `self`/`cls` left out
    keyword_only: list[str]
    defaults: dict[str, ast.AST]
    bound: bool  # the first parameter (`self`/`cls`) is not passed by the caller
    returns_value: bool  # a `return <value>` or a `yield` in its own body
    annotated: frozenset[str] = frozenset()  # the parameters that have an annotation
    returns: Optional[ast.AST] = None  # its return annotation

    @property
    def lines(self) -> int:
        return (getattr(self.node, "end_lineno", None) or self.node.lineno) - self.node.lineno + 1  # type: ignore[attr-defined]



class CallGraph:
    """Functions, calls and `self` attributes of one module, by name."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self.functions: dict[FunctionKey, FunctionInfo] = {}
        self.method_owners: dict[str, list[str]] = {}
        self.callers: dict[FunctionKey, list[FunctionKey]] = {}
        self.callees: dict[FunctionKey, set[FunctionKey]] = {}
        self.self_touches: dict[tuple[str, str], list[FunctionKey]] = {}
        self.recursive: set[FunctionKey] = set()
        self.by_node: dict[int, FunctionInfo] = {}  # id(ast function node) -> its info
        self._scan()

    # ------------------------------------------------------------------ the module's functions (from `ast`)
    def _scan(self) -> None:
        tree = self.index.tree
        if tree is None:
            return
        for statement in tree.body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._add_function(None, statement)
            elif isinstance(statement, ast.ClassDef):
                for member in statement.body:
                    if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self._add_function(statement.name, member)
                        self.method_owners.setdefault(member.name, [])
                        if statement.name not in self.method_owners[member.name]:
                            self.method_owners[member.name].append(statement.name)
        callees: dict[FunctionKey, set[FunctionKey]] = {}
        # Names a call must end with to reach a function of this module (its own name, or its class's).
        reachable = {key.name for key in self.functions} | set(self.index.classes)
        Call, Attribute, Name = ast.Call, ast.Attribute, ast.Name
        for key, info in self.functions.items():
            nodes = self.index.segment_nodes.get(id(info.node)) or list(ast.walk(info.node))
            found: set[FunctionKey] = set()
            for node in nodes:
                kind = type(node)
                if kind is Call:
                    func = node.func  # type: ignore[attr-defined]
                    last = func.attr if type(func) is Attribute else func.id if type(func) is Name else None
                    if last in reachable:
                        found.update(self._ast_callees(key.owner, func))
                elif key.owner is not None and kind is Attribute and type(node.value) is Name \
                        and node.value.id == "self":  # type: ignore[attr-defined]
                    touches = self.self_touches.setdefault((key.owner, node.attr), [])  # type: ignore[attr-defined]
                    if not touches or touches[-1] != key:
                        touches.append(key)
            callees[key] = found
            self.callees[key] = found
            for callee in sorted(found, key=str):
                self.callers.setdefault(callee, []).append(key)
        self.recursive = _in_cycles(callees)

    def _ast_callees(self, owner: Optional[str], func: ast.AST) -> list[FunctionKey]:
        """Every function of this module a call may reach, by the same names `resolve` follows (a superset)."""
        if isinstance(func, ast.Name):
            if FunctionKey(None, func.id) in self.functions:
                return [FunctionKey(None, func.id)]
            if func.id in self.index.classes and FunctionKey(func.id, "__init__") in self.functions:
                return [FunctionKey(func.id, "__init__")]
            return []
        if not isinstance(func, ast.Attribute):
            return []
        method = func.attr
        receiver = dotted(func.value)
        if receiver in ("self", "cls"):
            defining = self.defining_class(owner, method)
            return [FunctionKey(defining, method)] if defining else []
        if receiver is not None and receiver in self.index.classes:
            defining = self.defining_class(receiver, method)
            return [FunctionKey(defining, method)] if defining else []
        found = []
        if receiver is not None and receiver.startswith("self.") and receiver.count(".") == 1 and owner is not None:
            info = self.index.classes.get(owner)
            held = info.attribute_classes.get(receiver[5:]) if info is not None else None
            defining = self.defining_class(held, method) if held else None
            if defining:
                found.append(FunctionKey(defining, method))
        if receiver is not None and "." not in receiver and receiver in self.index.module_instances:
            defining = self.defining_class(self.index.module_instances[receiver], method)
            if defining:
                found.append(FunctionKey(defining, method))
        unique = self.unique_method_owner(method)
        if unique is not None:
            found.append(FunctionKey(unique, method))
        return found

    def _add_function(self, owner: Optional[str], node: Any) -> None:
        arguments = node.args
        positional = [a.arg for a in [*arguments.posonlyargs, *arguments.args]]
        decorators = {(dotted(d.func if isinstance(d, ast.Call) else d) or "").split(".")[-1] for d in node.decorator_list}
        bound = owner is not None and "staticmethod" not in decorators and bool(positional)
        defaults: dict[str, ast.AST] = {}
        for name, default in zip(reversed(positional), reversed(arguments.defaults)):
            defaults[name] = default
        for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
            if default is not None:
                defaults[arg.arg] = default
        key = FunctionKey(owner, node.name)
        self.by_node[id(node)] = self.functions[key] = FunctionInfo(key, node, positional[1:] if bound else positional,
                                           [a.arg for a in arguments.kwonlyargs], defaults, bound,
                                           _returns_value(self.index.segment_nodes.get(id(node)) or list(ast.walk(node))),
                                           frozenset(a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
                                                     if a.annotation is not None), node.returns)

    def defining_class(self, class_name: Optional[str], method: str) -> Optional[str]:
        """The class (this one, or a base class defined in this module) whose body defines `method`."""
        seen: set[str] = set()
        while class_name is not None and class_name not in seen:
            seen.add(class_name)
            if FunctionKey(class_name, method) in self.functions:
                return class_name
            bases = [dotted(b) or "" for d in self.index.class_defs.get(class_name, []) for b in d.bases]
            class_name = next((b for b in bases if b in self.index.classes), None)
        return None

    def unique_method_owner(self, method: str) -> Optional[str]:
        """The one class of this module that defines `method` (None when none or several do, or the
        name is too common to tell: `get`, `update`, `forward`)."""
        if method in _UNRESOLVED_METHOD_NAMES or method.startswith("__"):
            return None
        owners = self.method_owners.get(method, [])
        return owners[0] if len(owners) == 1 else None


def _returns_value(nodes: list[ast.AST]) -> bool:
    """A `return <value>` or a `yield` in a function's preorder node list (a nested function's count
    too: a superset is enough, since a function that does not return anything is only a shortcut)."""
    return any((type(n) is ast.Return and n.value is not None) or type(n) is ast.Yield or type(n) is ast.YieldFrom  # type: ignore[attr-defined]
               for n in nodes)


_HOST_RETURNS = frozenset({"None", "int", "float", "bool", "str", "bytes", "dict", "Dict", "set", "Set"})


def host_annotation(annotation: Optional[ast.AST]) -> bool:
    """`-> None`, `-> int`, `-> bool`, `-> dict[str, int]`: the function returns a plain Python value."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant):
        return annotation.value is None
    target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    if isinstance(annotation, ast.Subscript) and any(
            "Tensor" in (dotted(n) or "") for n in ast.walk(annotation.slice)):
        return False  # `dict[str, torch.Tensor]`
    return (dotted(target) or "").split(".")[-1] in _HOST_RETURNS


def _plain_return(value: ast.AST) -> bool:
    """A returned expression that is a Python value whatever the names in it are."""
    kind = type(value)
    if kind is ast.Constant or kind is ast.JoinedStr:
        return True
    if kind is ast.Compare:
        return any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in value.ops)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp and type(value.op) is ast.Not:  # type: ignore[attr-defined]
        return True
    if kind is ast.BoolOp:
        return all(_plain_return(v) for v in value.values)  # type: ignore[attr-defined]
    if kind is ast.Call:
        return (dotted(value.func) or "") in ("len", "isinstance", "hasattr", "str", "repr", "callable", "id")  # type: ignore[attr-defined]
    return False


def may_return_tensor(info: "FunctionInfo", nodes: list[ast.AST]) -> bool:
    """Whether the walker may find a tensor (or a container of them) in what a call of `info` returns."""
    if not info.returns_value or host_annotation(info.returns):
        return False
    return any(type(n) is ast.Yield or type(n) is ast.YieldFrom
               or (type(n) is ast.Return and n.value is not None and not _plain_return(n.value))  # type: ignore[attr-defined]
               for n in nodes)


def _in_cycles(edges: dict[FunctionKey, set[FunctionKey]]) -> set[FunctionKey]:
    """The functions on a cycle of the call graph (recursive, directly or through others)."""
    found: set[FunctionKey] = set()
    index: dict[FunctionKey, int] = {}
    low: dict[FunctionKey, int] = {}
    stack: list[FunctionKey] = []
    on_stack: set[FunctionKey] = set()
    counter = 0
    for root in sorted(edges, key=str):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()), key=str)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in edges:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ()), key=str))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    found.update(component)
    return found


def callgraph_of(index: ModuleIndex) -> CallGraph:
    """The call graph of the module `index` describes (built once, kept in the index's memo)."""
    found = index.memo.get("callgraph")
    if found is None:
        found = index.memo["callgraph"] = CallGraph(index)
    return found  # type: ignore[return-value]
