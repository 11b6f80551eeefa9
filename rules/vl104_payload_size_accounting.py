"""VL104: a tensor cache charges its budget by payload bytes while its entries may pin whole storages."""

from __future__ import annotations

import ast
from typing import Any, Optional

import libcst as cst

from viewlint.analysis import features, semantics
from viewlint.analysis.nodes import callee_name, dotted, preorder
from viewlint.analysis.tree import dotted_name
from viewlint.analysis.facts import Facts
from viewlint.analysis.tree import descendants
from viewlint.rule import Rule
from viewlint.prefilter import split_lines

# Parts of a `self.<attr>` name that make it a memory budget or usage counter.
_BUDGET_WORDS = ("size", "bytes", "budget", "usage", "used", "mem", "capacity", "allocated")
# Any of these in a class means it already measures storages or copies what it admits.
_STORAGE_AWARE = ("untyped_storage", "storage()", ".clone(")
# What a statement list can hold: `match_case` exists from Python 3.10 on.
_BLOCK_CHILDREN: tuple[type, ...] = (ast.stmt, ast.excepthandler, *((ast.match_case,) if hasattr(ast, "match_case") else ()))
# Tensor attributes and methods without which no expression is a payload size.
_SIZE_WORDS = ("nbytes", "element_size", "itemsize")  # `numel()` alone is no byte count


def _payload_size_expression(nodes: list[cst.CSTNode]) -> bool:
    """`t.numel() * t.element_size()` (or `.itemsize`), or `t.nbytes`, among an expression's nodes (preorder)."""
    numel = element_size = nbytes = False
    called: set[int] = set()
    for node in nodes:
        if isinstance(node, cst.Call):
            called.add(id(node.func))
            if isinstance(node.func, cst.Attribute):
                numel = numel or node.func.attr.value in ("numel", "nelement")
                element_size = element_size or node.func.attr.value == "element_size"
        elif isinstance(node, cst.Attribute):
            # `t.nbytes` (payload) is an attribute; `t.untyped_storage().nbytes()` is a call.
            nbytes = nbytes or (node.attr.value == "nbytes" and id(node) not in called)
            element_size = element_size or node.attr.value == "itemsize"
    return (numel and element_size) or nbytes


def _ast_payload_size(node: ast.AST) -> bool:
    """`_PayloadSizeFinder` on Python's `ast`: `t.numel() * t.element_size()`, `.itemsize`, `t.nbytes`."""
    numel = element_size = nbytes = False
    called: set[int] = set()
    for child in preorder(node):
        kind = type(child)
        if kind is ast.Call:
            called.add(id(child.func))
            if type(child.func) is ast.Attribute:
                numel = numel or child.func.attr in ("numel", "nelement")
                element_size = element_size or child.func.attr == "element_size"
        elif kind is ast.Attribute:
            nbytes = nbytes or (child.attr == "nbytes" and id(child) not in called)
            element_size = element_size or child.attr == "itemsize"
    return (numel and element_size) or nbytes


class _HelperFinder(ast.NodeVisitor):
    """Names of same-module functions and methods that return a payload size (`_get_tensor_size`).

    Reads the module's full `ast` (not the prefiltered text), so both lint paths see the same helpers.
    """

    def __init__(self, source: str) -> None:
        self.functions: set[str] = set()
        self.methods: set[str] = set()
        self._returns: list[tuple[str, bool, ast.expr]] = []
        self._stack: list[tuple[str, bool]] = []
        self._in_class = 0
        # Functions that measure storages (or sit inside one that does): never payload-size helpers.
        self._aware: set[str] = set()
        self._aware_depth = 0
        self._lines = [content for content, _ in split_lines(source)]  # Python's line breaks, not str.splitlines's

    def generic_visit(self, node: ast.AST) -> None:
        """Statements only: definitions and `return`s never sit inside expressions."""
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, name, None)
            if type(children) is list:
                for child in children:
                    if isinstance(child, _BLOCK_CHILDREN):
                        self.visit(child)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._in_class += 1
        self.generic_visit(node)
        self._in_class -= 1

    def _text(self, node: ast.AST) -> str:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])  # type: ignore[attr-defined]
        return "\n".join(self._lines[first - 1:node.end_lineno])  # type: ignore[attr-defined]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._stack.append((node.name, self._in_class > 0))
        aware = bool(self._aware_depth) or any(marker in self._text(node) for marker in _STORAGE_AWARE[:2])
        if aware:
            self._aware.add(node.name)
            self._aware_depth += 1
        self.generic_visit(node)
        self._stack.pop()
        if aware:
            self._aware_depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Return(self, node: ast.Return) -> None:
        if self._stack and node.value is not None:
            name, is_method = self._stack[-1]
            self._returns.append((name, is_method, node.value))

    def resolve(self) -> None:
        """Helpers of helpers: repeat until nothing new is found."""
        changed = True
        while changed:
            changed = False
            for name, is_method, value in self._returns:
                target = self.methods if is_method else self.functions
                if name not in target and name not in self._aware and self._returns_size(value):
                    target.add(name)
                    changed = True

    def _returns_size(self, node: ast.expr) -> bool:
        if _ast_payload_size(node):
            return True
        for child in preorder(node):
            if type(child) is ast.Call:
                callee = dotted(child.func) or ""
                if callee in self.functions or (callee.startswith("self.") and callee[5:] in self.methods):
                    return True
        return False

    def is_size(self, node: cst.BaseExpression, sizes: dict[str, str]) -> bool:
        if isinstance(node, cst.Name) and node.value in sizes:
            return True
        nodes = list(descendants(node))
        if _payload_size_expression(nodes):
            return True
        for call in nodes:
            if isinstance(call, cst.Call):
                callee = dotted_name(call.func) or ""
                if callee in self.functions or (callee.startswith("self.") and callee[5:] in self.methods):
                    return True
        return any(isinstance(n, cst.Name) and n.value in sizes for n in nodes)


def _helpers(index: Any) -> _HelperFinder:
    """The module's payload-size helpers, found once per module."""
    found = index.memo.get("VL104.helpers")
    if found is None:
        found = _HelperFinder(index.source)
        if index.tree is not None:
            found.visit(index.tree)
        found.resolve()
        index.memo["VL104.helpers"] = found
    return found


def _is_tensor_store(info: Any, index: Any) -> bool:
    """A class that fills its own containers (`self.entries[k] = v`, `self.entries.append(v)`) and does
    not already measure storages or clone; read on the module's `ast`, once per class."""
    key = f"VL104.store.{info.name}"
    if key not in index.memo:
        index.memo[key] = _fills_own_containers(info, index) and not _storage_aware(info.name, index) \
            and not _admitted_clones(info, index)
    return bool(index.memo[key])


def _admitted_clones(info: Any, index: Any) -> bool:
    """A call in this module of one of the class's own methods hands it a `.clone()` (`cache.set(key,
    Entry(tensor=emb.clone()))`): its callers give it storage of its own, as a class that clones would."""
    return any(not name.startswith("__") and name in _methods_handed_clones(index) for name in info.methods)


def _methods_handed_clones(index: Any) -> set[str]:
    """The method names the module's calls hand a `.clone()` (`x.set(k, Entry(t.clone()))`: `set`), once per module."""
    found = index.memo.get("VL104.handed clones")
    if found is None:
        found = index.memo["VL104.handed clones"] = {
            node.func.attr for node in (preorder(index.tree) if index.tree is not None else ())
            if type(node) is ast.Call and type(node.func) is ast.Attribute
            and any(type(inner) is ast.Call and callee_name(inner.func) == "clone"
                    for argument in (*node.args, *(k.value for k in node.keywords)) for inner in preorder(argument))}
    return found  # type: ignore[no-any-return]


def _reads_sizes(info: Any, index: Any) -> bool:
    """The class reads a payload size (`nbytes`, `element_size`, `itemsize`) or calls a size helper:
    without either, no budget update in it can be a payload size (once per class)."""
    key = f"VL104.sizes.{info.name}"
    if key not in index.memo:
        helpers = _helpers(index)
        names = helpers.functions | helpers.methods
        index.memo[key] = any(
            (type(node) is ast.Attribute and node.attr in _SIZE_WORDS)
            or (type(node) is ast.Call and callee_name(node.func) in names)
            for nodes in index.class_member_nodes(info.name) for node in nodes
        )
    return bool(index.memo[key])


def _host_value(node: ast.AST, host: set[str]) -> bool:
    """A Python value, not a tensor: a literal, `t.data_ptr()`/`t.numel()`/..., arithmetic and tuples of
    them, or a name this method bound to one (`total_bytes = src.numel() * src.element_size()`)."""
    kind = type(node)
    if kind is ast.Constant or kind is ast.JoinedStr:
        return True
    if kind is ast.Name:
        return node.id in host  # type: ignore[attr-defined]
    if kind is ast.Call and type(node.func) is ast.Attribute:  # type: ignore[attr-defined]
        return node.func.attr in semantics.HOST_VALUE_METHODS or node.func.attr == "data_ptr"  # type: ignore[attr-defined]
    if kind is ast.BinOp:
        return _host_value(node.left, host) and _host_value(node.right, host)  # type: ignore[attr-defined]
    if kind in (ast.Tuple, ast.List):
        return all(_host_value(e, host) for e in node.elts)  # type: ignore[attr-defined]
    return False


def _fills_own_containers(info: Any, index: Any) -> bool:
    """A method stores into one of the class's own containers something that may be a tensor (not
    bookkeeping: `self._copies.append((src.data_ptr(), dst_ptr, nbytes))`, `self._resident[k] = None`)."""
    if not info.container_attributes:
        return False
    for nodes in index.class_member_nodes(info.name):
        host: set[str] = set()
        for node in nodes:
            kind = type(node)
            stored: list[ast.AST] = []
            if kind is ast.Assign:
                receivers = [t.value for t in node.targets if type(t) is ast.Subscript]
                stored = [node.value]
                if len(node.targets) == 1 and type(node.targets[0]) is ast.Name and _host_value(node.value, host):
                    host.add(node.targets[0].id)
            elif kind is ast.Call and type(node.func) is ast.Attribute and node.func.attr in semantics.STORING_METHODS:
                receivers = [node.func.value]
                stored = [*node.args, *(k.value for k in node.keywords)]
            else:
                continue
            if stored and all(_host_value(value, host) for value in stored):
                continue
            for receiver in receivers:
                if type(receiver) is ast.Attribute and type(receiver.value) is ast.Name and receiver.value.id == "self" \
                        and receiver.attr in info.container_attributes:
                    return True
    return False


def _storage_aware(name: str, index: Any) -> bool:
    """The class's text measures storages or clones (`untyped_storage`, `storage()`, `.clone(`)."""
    lines = index.memo.get("VL104.lines")
    if lines is None:  # split once per module, not once per class: a file of many classes stays linear
        lines = index.memo["VL104.lines"] = [content for content, _ in split_lines(index.source)]
    for node in index.class_defs.get(name, []):
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        text = "\n".join(lines[first - 1:node.end_lineno])
        if any(marker in text for marker in _STORAGE_AWARE):
            return True
    return False


class PayloadSizeAccounting(Rule):
    """
    ## What it does
    Flags the statement that charges a cache's or pool's memory budget
    (`self.current_size += size`, on an attribute named like a size, bytes, budget, usage or
    capacity counter) when `size` was computed as `t.numel() * t.element_size()` or `t.nbytes`
    (directly, through a local name, or through a same-module helper such as
    `_get_tensor_size`), in a class that stores values in its own containers and never
    looks at `untyped_storage()` nor clones what it admits (nor is handed `.clone()`s by the
    module's calls of its methods: `cache.set(key, Entry(tensor=emb.clone()))`).

    ## Why it matters
    `numel() * element_size()` counts the elements a tensor *shows*. A cached view (a split
    piece, a row, a slice) keeps its whole base storage alive, so the cache believes it holds
    0.78 MiB while it pins 7.81 MiB, and its eviction never triggers before the process runs
    out of memory (SGLang PR #39120).

    ## Example
    ```python
    def _get_tensor_size(t):
        return t.element_size() * t.numel()

    class EmbeddingCache:
        def set(self, key, t):
            self.entries[key] = t
            self.current_size += _get_tensor_size(t)
    ```

    ## Fix
    Charge what is really held, and make it equal to the payload by cloning views on admit:
    ```python
        def set(self, key, t):
            if t.untyped_storage().nbytes() > t.element_size() * t.numel():
                t = t.clone()  # do not pin the batch this piece came from
            self.entries[key] = t
            self.current_size += t.untyped_storage().nbytes()
    ```
    Sizes computed for logging or statistics are not flagged: only an augmented `+=` on a
    budget attribute of a class that stores into its own containers.
    Fix safety: no automatic fix.
    """

    code = "VL104"
    default_enabled = False
    name = "payload-size-accounting"
    summary = "A cache budget counts `numel() * element_size()` / `.nbytes` while entries may pin whole storages"

    @classmethod
    def prefilter_needs(cls, index: Any, settings: Any) -> features.Needs:
        """A member of a class that fills its own containers, with a size read (`nbytes`,
        `element_size`, `itemsize`) or a call of one of the module's size helpers (the store
        classes and the helpers are read off the module's full `ast`)."""
        source = getattr(index, "source", "")
        if source and not any(word in source for word in _SIZE_WORDS):
            return ()
        stores = [info.name for info in getattr(index, "classes", {}).values() if _is_tensor_store(info, index)]
        if not stores:
            return ()  # no class here stores into its own containers: nothing to flag
        helpers = _helpers(index)
        atoms = [("attr", word) for word in _SIZE_WORDS] + [("call", name) for name in sorted(helpers.functions | helpers.methods)]
        return tuple((features.flag(f"class:{name}"), atom) for name in stores for atom in atoms)

    def __init__(self, facts: Facts, options: dict[str, Any]) -> None:
        super().__init__(facts, options)
        self._classes: list[Optional[str]] = []  # the enclosing class when it qualifies, else None
        self._sizes: list[dict[str, str]] = []  # per function: local name -> the size expression

    @property
    def helpers(self) -> _HelperFinder:
        """The module's payload-size helper functions and methods."""
        return _helpers(self.facts.index)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        info = self.facts.index.classes.get(node.name.value)
        store = info is not None and _is_tensor_store(info, self.facts.index) and _reads_sizes(info, self.facts.index)
        self._classes.append(node.name.value if store else None)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._sizes.append({})

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._sizes.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self._sizes or not self._in_store_class():
            return
        sizes = self._sizes[-1]
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                if self.helpers.is_size(node.value, sizes):
                    sizes[target.target.value] = self.facts.short_source(node.value)
                else:
                    sizes.pop(target.target.value, None)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if not self._sizes or not self._in_store_class() or not isinstance(node.operator, cst.AddAssign):
            return
        target = dotted_name(node.target) or ""
        if not target.startswith("self.") or target.count(".") != 1:
            return
        if not any(word in target[5:].lower() for word in _BUDGET_WORDS):
            return
        sizes = self._sizes[-1]
        if not self.helpers.is_size(node.value, sizes):
            return
        value = self.facts.short_source(node.value)
        origin = sizes.get(value, value) if isinstance(node.value, cst.Name) else value
        detail = f" (`{value}` = `{origin}`)" if origin != value else ""
        self.report(
            node,
            f"`{self.facts.short_source(node)}` charges the budget with the payload size{detail}, but a stored view "
            f"keeps its whole base storage alive: `{target}` undercounts what the cache really holds",
            fix_message="charge `t.untyped_storage().nbytes()` and `.clone()` views on admit",
        )

    def _in_store_class(self) -> bool:
        return bool(self._classes) and self._classes[-1] is not None

