"""Dead temporaries: is an in-place write on a local name the last thing that ever touches its value?

`tmp = buf[[3]]; tmp.fill_(2.0)` with `tmp` never used again only matters if `tmp`
shares memory with `buf`; when it cannot (a gathered copy) or may not (a conversion
that copies), the write is lost. Rules feed a ``TemporaryTracker`` the walk's
function, block and assignment events and ask it about one write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from viewlint.analysis import semantics
from viewlint.analysis.tensor_context import HOST_ATTRIBUTES
from viewlint.analysis.tree import walk_events

_VIEW_ATTRIBUTES = semantics.VIEW_ATTRIBUTES | semantics.AMBIGUOUS_VIEW_ATTRIBUTES
# Methods that read a tensor's layout, not its values: `flat.size(0)` does not use what a write put in `flat`.
_METADATA_CALLS = frozenset({"size", "dim", "numel", "nelement", "element_size", "stride", "data_ptr", "is_contiguous",
                             "storage_offset"})


@dataclass
class _Occurrences:
    """Every occurrence of every name in one function, in walk order, and whether it is inert."""

    # name -> [(order, inert, inside a nested scope)]
    by_name: dict[str, list[tuple[int, bool, bool]]] = field(default_factory=dict)
    end_order: dict[int, int] = field(default_factory=dict)  # id(Assign) -> order of its last node
    order: dict[int, int] = field(default_factory=dict)  # id(node) -> order
    declared_outside: set[str] = field(default_factory=set)  # `global` / `nonlocal` names


def _collect_occurrences(body: cst.CSTNode) -> _Occurrences:
    """Classify every name under a function body: inert are plain rebinding targets and the
    receivers of in-place statements."""

    result = _Occurrences()
    counter = nested = 0
    inert: set[int] = set()
    scopes = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
    for node, entering in walk_events(body):
        kind = type(node)
        if not entering:
            if kind in scopes:
                nested -= 1
            elif kind is cst.Assign:
                result.end_order[id(node)] = counter
            continue
        counter += 1
        result.order[id(node)] = counter
        if kind in scopes:
            nested += 1
        elif kind is cst.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                if type(target.target) is cst.Name:
                    inert.add(id(target.target))
        elif kind is cst.For:
            if type(node.target) is cst.Name:  # type: ignore[attr-defined]
                inert.add(id(node.target))  # type: ignore[attr-defined]
            result.end_order[id(node)] = counter  # bound from here on, in every iteration
        elif kind is cst.Expr:
            receiver = inplace_chain_receiver(node.value)  # type: ignore[attr-defined]
            name = written_name(receiver) if receiver is not None else None
            if name is not None:
                inert.add(id(name))
        elif kind is cst.Attribute and type(node.value) is cst.Name and (  # type: ignore[attr-defined]
                node.attr.value in HOST_ATTRIBUTES or node.attr.value in _METADATA_CALLS):  # type: ignore[attr-defined]
            inert.add(id(node.value))  # type: ignore[attr-defined]  # `flat.dtype`, `flat.size(0)`: not its values
        elif kind is cst.Global or kind is cst.Nonlocal:
            for item in node.names:  # type: ignore[attr-defined]
                result.declared_outside.add(item.name.value)
        elif kind is cst.Name:
            result.by_name.setdefault(node.value, []).append((counter, id(node) in inert, nested > 0))  # type: ignore[attr-defined]
    return result


def inplace_chain_receiver(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`t.add_(1).mul_(2)` -> `t`: the receiver under a chain made only of in-place method calls."""
    current = expr
    found: Optional[cst.BaseExpression] = None
    while (
        isinstance(current, cst.Call)
        and isinstance(current.func, cst.Attribute)
        and semantics.is_inplace_method(current.func.attr.value)
    ):
        found = current.func.value
        current = found
    return found


def written_name(expr: cst.BaseExpression) -> Optional[cst.Name]:
    """`t[0].view(-1)` -> `t`: the name under subscripts, view attributes and view-method calls.

    Writing through such a chain does not let the value of `t` escape anywhere.
    """
    current = expr
    while True:
        if isinstance(current, cst.Name):
            return current
        if isinstance(current, cst.Subscript):
            current = current.value
        elif isinstance(current, cst.Attribute) and current.attr.value in _VIEW_ATTRIBUTES:
            current = current.value
        elif (
            isinstance(current, cst.Call)
            and isinstance(current.func, cst.Attribute)
            and current.func.attr.value in semantics.VIEW_METHODS
        ):
            current = current.func.value
        else:
            return None


@dataclass
class _Binding:
    node: "cst.Assign | cst.For"
    blocks: tuple[int, ...]  # ids of the enclosing blocks where it was made


@dataclass
class _Function:
    node: cst.FunctionDef
    bindings: dict[str, _Binding] = field(default_factory=dict)
    occurrences: Optional[_Occurrences] = None


class TemporaryTracker:
    """Follows plain `name = expr` bindings per function and block, in statement order.

    A rule calls ``enter_function``/``leave_function``, ``enter_block``/``leave_block`` and
    ``bind`` from its own visitor methods, then asks ``binding_of`` and ``is_dead_after``.
    """

    def __init__(self) -> None:
        self._functions: list[_Function] = []
        self._blocks: list[int] = []

    def enter_function(self, node: cst.FunctionDef) -> None:
        self._functions.append(_Function(node))

    def leave_function(self, node: cst.FunctionDef) -> None:
        if self._functions and self._functions[-1].node is node:
            self._functions.pop()

    def enter_block(self, node: cst.CSTNode) -> None:
        self._blocks.append(id(node))

    def leave_block(self, node: cst.CSTNode) -> None:
        if self._blocks and self._blocks[-1] == id(node):
            self._blocks.pop()

    def bind(self, node: cst.Assign) -> None:
        """Record `name = expr` (every plain-name target) as the latest binding of those names."""
        if not self._functions:
            return
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._functions[-1].bindings[target.target.value] = _Binding(node, tuple(self._blocks))

    def bind_loop(self, node: cst.For) -> None:
        """Record `for name in ...:` as the binding of `name` for its body (rebound in every iteration)."""
        if self._functions and isinstance(node.target, cst.Name):
            self._functions[-1].bindings[node.target.value] = _Binding(node, tuple(self._blocks))

    def binding_of(self, name: str) -> "Optional[cst.Assign | cst.For]":
        """The latest plain binding of `name` in this function, if it dominates the current statement.

        It must have been made in this block or an enclosing one: a binding inside an `if`
        branch the current statement is not in may not be the value it sees.
        """
        if not self._functions:
            return None
        binding = self._functions[-1].bindings.get(name)
        if binding is None or binding.blocks != tuple(self._blocks[: len(binding.blocks)]):
            return None
        return binding.node

    def is_dead_after(self, receiver: cst.Name, binding: "cst.Assign | cst.For", in_loop: bool) -> bool:
        """True when, after `binding`, the value of `receiver` is never read: only rebound or written in place.

        Inside a loop a read anywhere in the function may see the next iteration's write, so
        then every occurrence must be inert (a loop's own target is: it rebinds). A name declared `global`/`nonlocal`, or used by a
        nested function or lambda, is never dead.
        """
        if not self._functions:
            return False
        function = self._functions[-1]
        if function.occurrences is None:
            function.occurrences = _collect_occurrences(function.node.body)
        occurrences = function.occurrences
        name = receiver.value
        if name in occurrences.declared_outside:
            return False
        after = occurrences.end_order.get(id(binding))
        if after is None or id(receiver) not in occurrences.order:
            return False
        for order, inert, nested in occurrences.by_name.get(name, ()):
            if inert:
                continue
            if nested or in_loop or order > after:
                return False
        return True


class TracksTemporaries:
    """Mixin for rules that ask "is this local dead?": feeds a TemporaryTracker from the walk.

    Rules that define their own ``visit_Assign`` call ``super().visit_Assign(node)`` first.
    """

    temporaries: TemporaryTracker

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.temporaries.enter_function(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.temporaries.leave_function(node)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.temporaries.enter_block(node)

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.temporaries.leave_block(node)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self.temporaries.enter_block(node)

    def leave_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self.temporaries.leave_block(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        self.temporaries.bind(node)

    def visit_For(self, node: cst.For) -> None:
        self.temporaries.bind_loop(node)
