"""What names are bound to in a segment, read off CPython's `ast`: the prefilter's view of assignments.

A coarse superset of what the walker binds: every value assigned to a name (or `self.<attr>`) anywhere
in the segment, the parameters annotated as tensors, the containers a name is filled with, and what loop
targets and unpacked names are taken from. `viewlint.analysis.tensor_context` judges these values.
"""

from __future__ import annotations

import ast
import functools
from typing import Optional

from viewlint.analysis import semantics
from viewlint.analysis.nodes import dotted, preorder, qualify_name
from viewlint.analysis.tensor_types import TYPE_NAMES, array_type, tensor_type


# A segment's bindings: name (or `self.<attr>`) -> the values assigned to it (None: not known, as
# for loop targets, unpacking, `with ... as`, or a parameter annotated as a tensor).
Bindings = dict[str, list[Optional[ast.AST]]]
# The value a parameter annotated as a tensor is bound to: a tensor, but not known to be contiguous or a view.
PARAMETER = ast.Constant(value=None)
# What any other parameter is bound to: nothing known, not even a tensor (but a callable may be passed in).
PLAIN_PARAMETER = ast.Constant(value=None)
# What an annotated parameter that this module's callers fill is bound to as well: the annotation says what it is,
# but the callers may pass a view of part of a tensor, which the walker hands on (`_sharing_as_passed`).
PASSED_PARAMETER = ast.Constant(value=None)
_TARGETED = (ast.Name, ast.Attribute)
BINDING_KINDS = frozenset({ast.Attribute, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.arg})


def note_binding(node: ast.AST, bindings: Bindings, direct: set[int]) -> None:
    """Record what `node` binds. `direct`: ids of targets already recorded with their value
    (an assignment is listed before its targets in preorder)."""
    kind = type(node)
    if kind is ast.Name or kind is ast.Attribute:
        if type(node.ctx) is ast.Store and id(node) not in direct:  # type: ignore[attr-defined]
            name = node.id if kind is ast.Name else dotted(node)  # type: ignore[attr-defined]
            if name is not None:
                bindings.setdefault(name, []).append(None)
    elif kind is ast.Assign:
        for target in node.targets:  # type: ignore[attr-defined]
            if type(target) in _TARGETED:
                _bind_value(target, node.value, bindings, direct)  # type: ignore[attr-defined]
    elif kind is ast.AnnAssign or kind is ast.AugAssign or kind is ast.NamedExpr:
        # `x += y` keeps a tensor or makes something unknown; `x: T` alone binds nothing.
        value = node.value if kind is not ast.AugAssign else None  # type: ignore[attr-defined]
        if type(node.target) in _TARGETED:  # type: ignore[attr-defined]
            _bind_value(node.target, value, bindings, direct)  # type: ignore[attr-defined]
    elif kind is ast.arg:
        if tensor_annotation(node.annotation):  # type: ignore[attr-defined]
            bindings.setdefault(node.arg, []).append(PARAMETER)  # type: ignore[attr-defined]


def note_addition(node: ast.AST, bindings: Bindings) -> None:
    """`pieces.append(p)`, `d[k] = v`: a container bound here may hold `p` and `v` after the statement (the
    walker adds them to the elements of a container its scope holds, `Facts._add_to_container`)."""
    kind = type(node)
    if kind is ast.Expr:
        call = node.value  # type: ignore[attr-defined]
        if type(call) is ast.Call and type(call.func) is ast.Attribute and call.func.attr in semantics.ADDING_METHODS:
            name = dotted(call.func.value)
            if name is not None and name in bindings:
                bindings[name].extend(Held(a, node) for a in call.args if type(a) is not ast.Starred)
    elif kind is ast.Assign:
        for target in node.targets:  # type: ignore[attr-defined]
            if type(target) is ast.Subscript:
                container = target.value  # type: ignore[attr-defined]
                while type(container) is ast.Subscript:
                    container = container.value  # type: ignore[attr-defined]
                name = dotted(container)
                if name is not None and name in bindings:
                    bindings[name].append(Held(node.value, node))  # type: ignore[attr-defined]


def _bind_value(target: ast.AST, value: Optional[ast.AST], bindings: Bindings, direct: set[int]) -> None:
    direct.add(id(target))
    name = target.id if type(target) is ast.Name else dotted(target)  # type: ignore[attr-defined]
    if name is not None:
        values = bindings.setdefault(name, [])
        if value is not None:
            values.append(value)


def tensor_annotation(annotation: Optional[ast.AST], arrays: bool = True, index: Optional[object] = None) -> bool:
    """An annotation that names a tensor (or, with `arrays`, a NumPy array) anywhere in it: `torch.Tensor`,
    `Optional[Tensor]`, `Tensor | None`, `"torch.LongTensor"`, `list[torch.Tensor]`, `np.ndarray`. Each name is read by
    `tensor_types` (the one reading of tensor type names, which `annotations.annotation_value` asks too), qualified
    through the module's imports when `index` is given: `cute.Tensor` is a CuTe DSL tensor. The `ast` reading's yes or
    no, for the call graph, the summaries and the bindings; the walker's `Value` is `annotation_value`'s."""
    if annotation is None:
        return False
    for node in preorder(annotation):
        kind = type(node)
        if kind is ast.Name or kind is ast.Attribute:
            last = node.id if kind is ast.Name else node.attr  # type: ignore[attr-defined]
            if last not in TYPE_NAMES and (kind is ast.Attribute or index is None or last not in index.aliases):  # type: ignore[attr-defined]
                continue  # (most names: `int`, `Optional`, a class of the module; not `T` of `from torch import Tensor as T`)
            name = dotted(node)
            if name is None:
                continue
            if tensor_type(name, qualify_name(index, name) if index is not None else None) is not None \
                    or (arrays and array_type(name)):
                return True
        elif kind is ast.Constant and isinstance(node.value, str):  # type: ignore[attr-defined]
            parsed = _string_annotation(node.value)  # type: ignore[attr-defined]  (`"T"` may be an imported torch name)
            if parsed is not None and tensor_annotation(parsed, arrays, index):
                return True
    return False


@functools.lru_cache(maxsize=1024)
def _string_annotation(text: str) -> Optional[ast.AST]:
    """The expression a string annotation spells (`"torch.LongTensor"`), parsed once per text; None if it is none."""
    try:
        return ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class Element(ast.AST):
    """What a loop target or an unpacked name is bound to: an item of `source` (see `with_elements`).
    `ordered`: bound from the end of `source` on (an unpacking assignment, a `for` loop), which `_Before`
    reads; a comprehension's names are read in its element before its `for`, so they have no position."""

    _fields = ("source",)

    def __init__(self, source: ast.AST, ordered: bool = False, slot: Optional[tuple[int, int]] = None) -> None:
        super().__init__()
        self.source = source
        self.slot = slot  # (position, length) in the tuple an assignment unpacks (`a, b = f(x)`: `b` is (1, 2))
        if ordered and getattr(source, "end_lineno", None) is not None:
            self.lineno, self.col_offset = source.lineno, source.col_offset  # type: ignore[attr-defined]
            self.end_lineno, self.end_col_offset = source.end_lineno, source.end_col_offset  # type: ignore[attr-defined]


class Held(ast.AST):
    """What a container bound here may hold after `pieces.append(item)` or `d[k] = item` (see `note_addition`),
    visible from the end of that statement on (as the walker adds it, when the statement is done)."""

    _fields = ("item",)

    def __init__(self, item: ast.AST, statement: ast.AST) -> None:
        super().__init__()
        self.item = item
        self.lineno, self.col_offset = statement.lineno, statement.col_offset  # type: ignore[attr-defined]
        self.end_lineno = statement.end_lineno  # type: ignore[attr-defined]
        self.end_col_offset = statement.end_col_offset  # type: ignore[attr-defined]


def with_elements(bound: Bindings, sources: Bindings, parameters: set[str],
                   comprehended: frozenset[int] = frozenset(), slots: Optional[dict[tuple[str, int], tuple[int, int]]] = None) -> Bindings:
    """`bound` with each unknown binding that a loop target or an unpacking made replaced by an item of
    what it is taken from (`Element`); unknown bindings of other kinds (`with ... as x`) stay.
    `comprehended`: the ids of the sources comprehensions take their names from (no position)."""
    judged = bound
    for name, taken_from in sources.items():
        values = bound.get(name)
        if not taken_from or values is None or name in parameters:
            continue
        unknown = sum(1 for v in values if v is None)
        if not unknown:
            continue
        if judged is bound:
            judged = dict(bound)
        judged[name] = [v for v in values if v is not None] + [None] * max(0, unknown - len(taken_from)) \
            + [Element(s, ordered=id(s) not in comprehended, slot=slots.get((name, id(s))) if slots else None) for s in taken_from]
    return judged


COUNTER = ast.Constant(value=0)  # what `enumerate` counts with, the keys of `.items()`: host values


def note_source(target: ast.AST, source: ast.AST, sources: Bindings) -> None:
    """Names in a loop target or an unpacking target, each taken from `source`; in
    `for i, (k, v) in enumerate(zip(keys, d.items()))`, `i` is a count, `k` comes from `keys` and
    `v` from `d.items()`, whose keys are host values (a tensor key is hashed by identity)."""
    kind = type(target)
    if kind is ast.Name:
        sources.setdefault(target.id, []).append(source)  # type: ignore[attr-defined]
    elif kind is ast.Tuple or kind is ast.List:
        elements = target.elts  # type: ignore[attr-defined]
        if type(source) is ast.Call and not any(type(e) is ast.Starred for e in elements):
            func, arguments = source.func, source.args  # type: ignore[attr-defined]
            if type(func) is ast.Name and func.id == "enumerate" and len(elements) == 2 and len(arguments) == 1:
                note_source(elements[0], COUNTER, sources)
                note_source(elements[1], arguments[0], sources)
                return
            if type(func) is ast.Name and func.id == "zip" and len(elements) == len(arguments) \
                    and not any(type(a) is ast.Starred for a in arguments):
                for element, argument in zip(elements, arguments):
                    note_source(element, argument, sources)
                return
            if type(func) is ast.Attribute and func.attr == "items" and len(elements) == 2:
                note_source(elements[0], COUNTER, sources)
                note_source(elements[1], source, sources)
                return
        for element in elements:
            note_source(element, source, sources)
    elif kind is ast.Starred:
        note_source(target.value, source, sources)  # type: ignore[attr-defined]


def callee_bindings(info: object, nodes: list[ast.AST]) -> Bindings:
    """A function's bindings as `collect` reads them in a segment, for a walk with any arguments:
    each parameter the callers fill (`info.positional`, `info.keyword_only`; not a method's `self`),
    `*args`, `**kwargs` and the parameters of the functions and lambdas nested in it may be anything.
    Loop targets and unpacked names are items of what they are taken from, as in `collect`
    (`major, minor = torch.cuda.get_device_capability()` gives no tensor)."""
    bound: Bindings = {}
    direct: set[int] = set()
    sources: Bindings = {}  # loop targets and unpacked names: what they are taken from
    parameters: set[str] = set()
    Name, Attribute = ast.Name, ast.Attribute
    for node in nodes:
        kind = type(node)
        if kind is Name:
            if type(node.ctx) is ast.Store:  # type: ignore[attr-defined]
                note_binding(node, bound, direct)
            continue
        if kind is ast.Expr or kind is ast.Assign:
            note_addition(node, bound)
        if kind in BINDING_KINDS:
            note_binding(node, bound, direct)
        if kind is Attribute:
            if node.attr in semantics.ARRAY_METHODS and type(node.value) is Name:  # type: ignore[attr-defined]
                bound.setdefault(node.value.id, []).append(PARAMETER)  # type: ignore[attr-defined]  # as `collect` does
        elif kind is ast.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                if type(target) is ast.Tuple or type(target) is ast.List:
                    note_source(target, node.value, sources)  # type: ignore[attr-defined]
        elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
            note_source(node.target, node.iter, sources)  # type: ignore[attr-defined]
        elif (kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda) and node is not info.node:  # type: ignore[attr-defined]
            arguments = node.args  # type: ignore[attr-defined]
            for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg):
                if arg is not None:
                    bound.setdefault(arg.arg, []).append(None)
                    parameters.add(arg.arg)
    arguments = info.node.args  # type: ignore[attr-defined]
    passed = [*info.positional, *info.keyword_only]  # type: ignore[attr-defined]
    passed.extend(arg.arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None)
    for name in passed:
        bound.setdefault(name, []).append(None)
    parameters.update(passed)
    return with_elements(bound, sources, parameters) if sources else bound


def outer_bindings(index: object) -> Bindings:
    """What names are bound to at module level or in a class body (by any statement there, at
    any depth): the walker's module and class scopes hold at most these. Once per module."""
    memo = getattr(index, "memo", None)
    if memo is not None and "outer-bindings" in memo:
        return memo["outer-bindings"]  # type: ignore[no-any-return]
    segment_nodes = getattr(index, "segment_nodes", {})
    statements: list[ast.AST] = []
    for statement in getattr(getattr(index, "tree", None), "body", ()):
        if type(statement) is ast.ClassDef:
            statements.extend(m for m in statement.body if type(m) not in (ast.FunctionDef, ast.AsyncFunctionDef))
        elif type(statement) not in (ast.FunctionDef, ast.AsyncFunctionDef):
            statements.append(statement)
    found: Bindings = {}
    direct: set[int] = set()
    for statement in statements:
        for node in segment_nodes.get(id(statement)) or preorder(statement):
            if type(node) is ast.Expr or type(node) is ast.Assign:
                note_addition(node, found)
            note_binding(node, found, direct)
    if memo is not None:
        memo["outer-bindings"] = found
    return found
