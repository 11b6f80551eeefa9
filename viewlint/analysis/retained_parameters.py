"""Which parameters a function stores into a long-lived place (`self` containers, module containers): read by the
module index (`ClassInfo.retaining_methods`, `ModuleIndex.retaining_functions`) once per module, over `ast`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from viewlint.analysis import semantics
from viewlint.analysis import tree as tree_module
from viewlint.analysis.nodes import callee_name, dotted

if TYPE_CHECKING:
    from viewlint.analysis.module_index import ClassInfo, ModuleIndex


_PASSING_METHODS = (semantics.VIEW_METHODS | semantics.MAYBE_VIEW_METHODS) - semantics.PARTIAL_VIEW_OPS
_PASSING_ATTRIBUTES = (semantics.VIEW_ATTRIBUTES | semantics.AMBIGUOUS_VIEW_ATTRIBUTES) - semantics.PARTIAL_VIEW_OPS


def _wraps_its_arguments(func: ast.AST) -> bool:
    """A call that holds what it is given: a class (`Entry(embedding=x)`), a container (`tuple(...)`); not a
    function that computes a new value from them (`torch.matmul(x, y)`, `F.avg_pool2d(x, 2)`)."""
    last = (dotted(func) or "").split(".")[-1]
    return last[:1].isupper() or last in ("tuple", "list", "dict", "set", "deque", "OrderedDict", "defaultdict", "replace")


class _RetentionScanner:
    """Finds which parameters a function stores into a long-lived place (self containers, module containers)."""

    def __init__(self, params: list[str], index: "ModuleIndex", class_info: Optional["ClassInfo"]) -> None:
        self.params = params
        self.index = index
        self.class_info = class_info
        self.retained: set[str] = set()
        self.cloned: set[str] = set()  # parameters rebound to a copy of themselves before they are stored
        self.derived: dict[str, str] = {}  # local name -> parameter it wraps (`entry = Entry(embedding=param)`)

    def _param_in(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Name):
            return node.id if node.id in self.params else self.derived.get(node.id)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _PASSING_METHODS:
            # `vector.to(device)`, `piece.detach()`: the same storage whenever they can
            return self._param_in(node.func.value)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in _PASSING_ATTRIBUTES:
            return self._param_in(node.value)  # `piece.data`, `piece.T`
        if isinstance(node, ast.Call) and _wraps_its_arguments(node.func):
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                found = self._param_in(arg.value if isinstance(arg, ast.Starred) else arg)
                if found:
                    return found
        if isinstance(node, (ast.Tuple, ast.List)):
            for element in node.elts:
                found = self._param_in(element)
                if found:
                    return found
        return None

    def _long_lived_container(self, node: ast.AST) -> bool:
        name = dotted(node)
        if name is None:
            return False
        if name.startswith("self.") and self.class_info is not None:
            return name[5:] in self.class_info.container_attributes
        return name in self.index.module_containers

    def scan(self, nodes: list[ast.AST]) -> None:
        """Read a function body's nodes in preorder (assignments before what they contain)."""
        for node in nodes:
            kind = type(node)
            if kind is ast.Assign:
                self._assign(node)  # type: ignore[arg-type]
            elif kind is ast.Call:
                func = node.func  # type: ignore[attr-defined]
                if type(func) is ast.Attribute and func.attr in semantics.STORING_METHODS and self._long_lived_container(func.value):
                    for arg in [*node.args, *(k.value for k in node.keywords)]:  # type: ignore[attr-defined]
                        found = self._param_in(arg)
                        if found and found not in self.cloned:
                            self.retained.add(found)

    def _assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript) and self._long_lived_container(target.value):
                found = self._param_in(node.value)
                if found and found not in self.cloned:
                    self.retained.add(found)
            elif isinstance(target, ast.Name) and target.id in self.params and _makes_copy(node.value):
                # `embedding = replace(embedding, embedding=tensor.clone())`: what is stored from here on
                # (on some path at least: when it has to) is an owned copy.
                self.cloned.add(target.id)
            elif isinstance(target, ast.Name):
                found = self._param_in(node.value)
                if found:
                    self.derived[target.id] = found


def _makes_copy(node: ast.AST) -> bool:
    """An expression that copies a tensor (`.clone()`, `torch.clone`) somewhere in it (not `copy.deepcopy`, which
    copies a view's whole storage)."""
    for child in ast.walk(node):
        if isinstance(child, ast.Call) and callee_name(child.func) == "clone":
            return True
    return False


def _body_nodes(fn: ast.FunctionDef, nodes: list[ast.AST]) -> list[ast.AST]:
    """The part of a function's preorder list that is its body (not its decorators, arguments or annotation)."""
    if not fn.body:
        return []
    start = nodes.index(fn.body[0])
    after = fn.decorator_list[0] if fn.decorator_list else fn.returns
    end = nodes.index(after, start) if after is not None else len(nodes)
    return nodes[start:end]


def retained_parameters(fn: ast.FunctionDef, nodes: list[ast.AST], positional: list[str], index: "ModuleIndex",
                         info: Optional["ClassInfo"]) -> set[str]:
    scanner = _RetentionScanner(positional, index, info)
    scanner.scan(tree_module.remembered("body nodes", fn, lambda: tuple(_body_nodes(fn, nodes))))  # type: ignore[arg-type]
    return scanner.retained
