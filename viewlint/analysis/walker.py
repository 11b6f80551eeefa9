"""The single pass over a module: the walker descends the tree once, in statement order, keeping
the flow (`viewlint.analysis.facts.Facts`) up to date and calling each rule's `visit_<Node>`/
`leave_<Node>` methods, which ask the facts what is known at that point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

import libcst as cst

from viewlint.analysis import stack
from viewlint.analysis.tree import _FIELDS, _child_fields, _walked

if TYPE_CHECKING:
    from viewlint.analysis.facts import Facts
    from viewlint.rule import Rule


# What the walker does on entering and leaving each node type (computed once per type).
_STATEMENT, _BLOCK, _MODULE, _FUNCTION, _CLASS, _LOOP, _IF, _COLD, _ASSIGN, _EXPR, _WITH, _ASSERT, _WALRUS = (1 << i for i in range(13))
_KINDS: dict[type, int] = {}
# The Facts methods called on entering and leaving each kind of context (the first that matches).
_CONTEXT_HOOKS = (
    (_MODULE, "enter_module", None), (_FUNCTION, "enter_function", "leave_function"),
    (_CLASS, "enter_class", "leave_class"), (_LOOP, "enter_loop", "leave_loop"), (_IF, "enter_if", "leave_if"),
    (_COLD, "enter_cold_block", "leave_cold_block"), (_WITH, "enter_with", "leave_with"),
)


def _kind(node_type: type) -> int:
    kind = _KINDS.get(node_type)
    if kind is None:
        kind = 0
        for flag, types in (
            (_STATEMENT, (cst.SimpleStatementLine, cst.BaseCompoundStatement)), (_BLOCK, cst.IndentedBlock),
            (_MODULE, cst.Module), (_FUNCTION, cst.FunctionDef), (_CLASS, cst.ClassDef), (_LOOP, (cst.For, cst.While)),
            (_IF, cst.If), (_COLD, (cst.Raise, cst.ExceptHandler, cst.Lambda)), (_ASSIGN, (cst.Assign, cst.AnnAssign, cst.AugAssign)),
            (_EXPR, cst.Expr), (_WITH, cst.With), (_ASSERT, cst.Assert), (_WALRUS, cst.NamedExpr),
        ):
            if issubclass(node_type, types):
                kind |= flag
        _KINDS[node_type] = kind
    return kind


# How the walk treats a node of each type: not at all (whitespace, punctuation, non-nodes), as a leaf
# (no child it enters and no context: `Name`, `Integer`; walked only when a rule handles the type), or
# entering it.
_SKIP, _LEAF, _ENTER = 0, 1, 2
_MODES: dict[type, int] = {}


def _mode(node_type: type) -> int:
    mode = _MODES.get(node_type)
    if mode is None:
        if not _walked(node_type):
            mode = _SKIP
        elif not _child_fields(node_type) and not _kind(node_type):
            mode = _LEAF
        else:
            mode = _ENTER
        _MODES[node_type] = mode
    return mode


class Walker(cst.CSTVisitor):
    """Walks a module once: updates Facts and calls each rule's visit_/leave_ methods.

    `walk` descends the tree itself, in libcst's visiting order, without rebuilding nodes
    and without entering whitespace or punctuation (libcst's generic `visit` costs more than
    the parse). `module.visit(walker)` still works and gives the same results.
    """

    def __init__(self, facts: Facts, rules: list["Rule"], activity: Optional[dict[int, frozenset[str]]] = None) -> None:
        """`activity`: for some statements (by `id`), the codes of the only rules that can fire
        inside them (from the prefilter); their handlers alone are called in that subtree."""
        super().__init__()
        self.facts = facts
        self.rules = rules
        self._activity = activity or {}
        self._tables: dict[frozenset[str], tuple[dict[type, list[Any]], dict[type, list[Any]]]] = {}
        self._visit: dict[type, list[tuple["Rule", Callable[[cst.CSTNode], Any]]]] = {}
        self._leave: dict[type, list[tuple["Rule", Callable[[cst.CSTNode], Any]]]] = {}
        self._disabled: set[str] = set()
        self._guarded: list[cst.BooleanOperation] = []  # (the visitor protocol's `and`s whose right operand is cold)
        for rule in rules:
            for attr in _handler_names(type(rule)):
                kind, _, node_type = attr.partition("_")
                node_class = getattr(cst, node_type, None)
                if node_class is None:
                    continue
                table = self._visit if kind == "visit" else self._leave
                table.setdefault(node_class, []).append((rule, getattr(rule, attr)))
        self._visit_now, self._leave_now = self._visit, self._leave

    def _tables_for(self, codes: frozenset[str]) -> tuple[dict[type, list[Any]], dict[type, list[Any]]]:
        tables = self._tables.get(codes)
        if tables is None:
            tables = self._tables[codes] = tuple(  # type: ignore[assignment]
                {t: [h for h in handlers if h[0].code in codes] for t, handlers in table.items()}
                for table in (self._visit, self._leave)
            )
        return tables  # type: ignore[return-value]

    def walk(self, node: cst.CSTNode) -> None:
        node_type = type(node)
        kind = _KINDS.get(node_type)
        if kind is None:
            kind = _kind(node_type)
        outer = None
        if kind & _STATEMENT and self._activity:
            codes = self._activity.get(id(node))
            if codes is not None:  # a segment: only the rules that can fire in it
                outer = self._visit_now, self._leave_now
                self._visit_now, self._leave_now = self._tables_for(codes)
        if kind:
            self._enter(node, kind)
        handlers = self._visit_now.get(node_type)
        if handlers:
            self._call(handlers, node)
        modes, walk = _MODES, self.walk
        visit_now, leave_now = self._visit_now, self._leave_now
        fields = _FIELDS.get(node_type)
        if fields is None:
            fields = _child_fields(node_type)
        header = _HEADERS.get(node_type)
        for name in fields:
            value = getattr(node, name)
            if name == header:
                self.facts.headers.append(node)
            guarded = node_type is cst.BooleanOperation and name == "right" and self._short_circuited(node)
            for child in value if type(value) is tuple or type(value) is list else (value,):
                child_type = type(child)
                mode = modes.get(child_type)
                if mode is None:
                    mode = _mode(child_type)
                if mode == _ENTER or (mode == _LEAF and (child_type in visit_now or child_type in leave_now)):
                    walk(child)
            if guarded:
                self.facts.contexts.pop()
            if name == header:
                self.facts.headers.pop()
            if name == "body" and node_type is cst.If:
                self.facts.evaluator.forget_values()
                self.facts.if_body_done(node)  # type: ignore[arg-type]
        handlers = self._leave_now.get(node_type)
        if handlers:
            self._call(handlers, node)
        if kind:
            self._exit(node, kind)
        if outer is not None:
            self._visit_now, self._leave_now = outer

    def _call(self, handlers: list[tuple["Rule", Callable[[cst.CSTNode], Any]]], node: cst.CSTNode) -> None:
        # Rules only read the flow: the values of the expressions they ask about stay valid until the walker
        # changes it (`_enter`, `_exit`, the end of an `if` body), so each is computed once per statement.
        self.facts.evaluator.keep_values()
        for rule, handler in handlers:
            if rule.code in self._disabled:
                continue
            try:
                handler(node)
            except Exception as error:  # a bug in one rule must not stop the others
                if isinstance(error, RecursionError):
                    stack.ran_out()
                self._disabled.add(rule.code)
                self.facts.errors.append((rule.code, f"{type(error).__name__}: {error}"))

    def _enter(self, node: cst.CSTNode, kind: int) -> None:
        facts = self.facts
        facts.evaluator.forget_values()
        if kind & _STATEMENT:
            facts.push_statement(node)
        elif kind & _BLOCK:
            facts._blocks.append(node)  # type: ignore[arg-type]
        for flag, enter, _ in _CONTEXT_HOOKS:
            if kind & flag:
                getattr(facts, enter)(node)
                break

    def _exit(self, node: cst.CSTNode, kind: int) -> None:
        facts = self.facts
        facts.evaluator.forget_values()
        if kind & _ASSIGN:
            facts.after_assign(node)  # type: ignore[arg-type]
        elif kind & _EXPR:
            facts.after_expression(node)  # type: ignore[arg-type]
        elif kind & _ASSERT:
            facts.after_assert(node)  # type: ignore[arg-type]
        elif kind & _WALRUS:
            facts.after_named_expression(node)  # type: ignore[arg-type]
        else:
            for flag, _, leave in _CONTEXT_HOOKS:
                if kind & flag:
                    if leave is not None:
                        getattr(facts, leave)(node)
                    break
        if kind & _STATEMENT:
            facts.pop_statement()
        elif kind & _BLOCK:
            facts.leave_block()

    # libcst's visitor protocol, for `module.visit(walker)` (the same results as `walk`, slower).
    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = _KINDS.get(type(node)) or _kind(type(node))
        if kind:
            self._enter(node, kind)
        handlers = self._visit_now.get(type(node))
        if handlers:
            self._call(handlers, node)
        return True

    def _short_circuited(self, node: cst.BooleanOperation) -> bool:
        """The right operand of `guard and x` runs only where a cold guard holds (`step % 100 == 0 and t.any()`): it is
        walked in a cold block of its own (entered here; the caller leaves it)."""
        if type(node.operator) is not cst.And or not self.facts.is_cold_guard(node.left):
            return False
        self.facts.contexts.enter_cold_block(node)
        return True

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if _HEADERS.get(type(node)) == attribute:
            self.facts.headers.append(node)
        if attribute == "right" and isinstance(node, cst.BooleanOperation) and self._short_circuited(node):
            self._guarded.append(node)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        if attribute == "right" and self._guarded and self._guarded[-1] is original_node:
            self._guarded.pop()
            self.facts.contexts.pop()
        if _HEADERS.get(type(original_node)) == attribute:
            self.facts.headers.pop()
        if attribute == "body" and isinstance(original_node, cst.If):
            self.facts.evaluator.forget_values()
            self.facts.if_body_done(original_node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        handlers = self._leave_now.get(type(original_node))
        if handlers:
            self._call(handlers, original_node)
        kind = _KINDS.get(type(original_node)) or _kind(type(original_node))
        if kind:
            self._exit(original_node, kind)


# The part of a compound statement that runs in the context around it, not in the block it opens: a `for`'s iterable
# (evaluated once, before the first iteration). A `while` test runs on every iteration: in its loop. An `if`'s test
# runs before its block too, but part of it may run only where another part holds (`step % 100 == 0 and
# loss.item() > 3`): VL403 reads `if` tests itself, operand by operand.
_HEADERS: dict[type, str] = {cst.For: "iter", cst.If: "test"}

_HANDLER_CACHE: dict[type, tuple[str, ...]] = {}


def _handler_names(rule_class: type) -> tuple[str, ...]:
    if rule_class not in _HANDLER_CACHE:
        _HANDLER_CACHE[rule_class] = tuple(
            attr for attr in dir(rule_class) if attr.startswith(("visit_", "leave_")) and callable(getattr(rule_class, attr))
        )
    return _HANDLER_CACHE[rule_class]
