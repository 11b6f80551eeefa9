"""What a piece of code contains, read off CPython's `ast` in one pass: the prefilter's vocabulary.

Each rule states what a segment (a top-level statement or a class member) must contain
for the rule to be able to fire there (`Rule.prefilter_needs`), in terms of these
features; the prefilter hands libcst only the segments some enabled rule needs. The
features are deliberately coarse supersets of what the rules check (a call *named*
`contiguous`, not a call of `Tensor.contiguous`), so skipping a segment can never
lose a finding: `--no-prefilter` and the tests compare both paths.

Vocabulary (an atom is a `(kind, value)` pair):

- `("call", name)`: a call whose callee's last name is `name` (`x.contiguous()`, `torch.save(...)`, `nz(...)`).
- `("attr", name)`: an attribute read or written (`t.nbytes`).
- `("flag", name)`: one of the structural facts below.

Flags:

- `advanced-subscript`: a subscript whose index may be a tensor, list or mask (anything but slices,
  literals, `...` and `None`); `chained-subscript-store`: an assignment target subscripting such a
  subscript (`x[idx][0] = v`, possibly through view attributes and view methods) whose index the walker
  may read as a gather: a list, a comparison, a name read as an index (`token_ids`, `keep_mask`), or what
  may be a tensor or a sequence (not a `range` counter, a number-annotated parameter, a key).
- `inplace-statement`: an expression statement calling a name ending in `_` (`buf[i].copy_(v)`, `nn.init.zeros_(w)`);
  `inplace-call`: such a call anywhere. For a chain of in-place methods, its receiver is classified:
  `inplace-on-name` (`t.add_(1)`, `t[0].add_(1)`: a local under views), `inplace-on-call` (`x.float().add_(1)`), `inplace-on-subscript`
  (`buf[idx].copy_(v)`, `nn.init.zeros_(w[idx])`: an advanced subscript in the written chain).
- `inplace-on-maybe-copy`: an in-place statement on a conversion that may copy (`x.float().add_(1)`);
  `inplace-on-gather`: on a gathered copy (`x.index_select(0, rows).add_(1)`, `buf[idx].zero_()`).
- `write-into-maybe-copy`: an in-place statement, a subscript assignment or an augmented assignment
  into a name that may be bound (in the segment, through views and other names) to a conversion
  that may copy (`flat = x.flatten(); flat[:3] = 0`); `inplace-on-gathered-name`: an in-place
  statement on a name that may be bound to a gathered copy (`rows = x[idx]; rows.add_(1)`).
- `transposed-contiguous`: `.contiguous()` of a transpose (`w.t().contiguous()`, `w.T.contiguous()`).
- `strided-contiguous-assign`: `y = x[..., :-1, :].contiguous()` (a slice past the first dimension) or
  `y = x.transpose(...).contiguous()` (`permute`, `t`) assigned to a name.
- `to-cpu`: `.to("cpu")` and its spellings; `numpy-force`: `.numpy(force=...)`.
- `twin-statement`: an expression statement `x.<m>(...)` where `m` has an in-place `m_` twin (`x.add(1)`);
  `tensor-twin-statement`: one whose receiver may be a tensor the walker knows (`tensor_may_be`), or an
  imported module (`torch.clamp(x, 0, 1)`), or whose method only tensors have (`index_add`): not `seen.add(k)`.
- `tensor-scalar-read`: `.item()`/`.tolist()` of, or `int()`/`float()`/`bool()`/`complex()` of, something
  that may be a tensor the walker knows (`tensor_may_be`): not `int(n_heads)`.
- `update-assigned`: `a = b.<m>(...)` with `m` an out-of-place update (`index_copy`, `scatter`, ...).
- `conversion-chain`: a cast called on a device move or a `.to(...)` (`x.cuda().half()`, `x.to(d).to(t)`);
  `tensor-conversion-chain`: one whose `x` is a call of a tensor factory (`torch.randn(n)`, any spelling: VL305
  needs the dtype a factory makes) and may be a tensor the walker knows (`tensor_may_be`).
- `truth-test`: `if`, `while`, `assert`, a conditional expression, `and`/`or`/`not`, a comprehension `if`,
  unless what it tests is plainly a Python bool (a constant; `is`, `is not`, `in`, `not in`).
- `builtin-compare`: a call of the builtin `max` or `min` (Python compares the values it is given).
- `device-truth-test`: a truth test (as above) of something that may be a tensor the walker knows
  (`tensor_may_be`); `mask-subscript`: a subscript whose receiver and some index may both be such tensors.
  `contiguous-of-contiguous`: `.contiguous()` of something that may be known contiguous (`contiguous_may_be`);
  `retains-view`: a `retains` store of something that may be a partial view (`partial_may_be`).
  These need a `TensorContext`; without one they hold wherever their plain forms do.
- `retains`: a store into something that may outlive the function (a module container, `self.<container>`,
  a receiver named like a cache, a module function or method known to keep its argument).
- `cached-def`: a function decorated with `cache`/`lru_cache`; `cached-returns-view`: one that may return
  a view of part of a tensor (`partial_may_be`).
- `partial-view`: something that may make a view of part of a tensor: a subscript, a `for` loop or
  comprehension, an unpacking assignment, a call of `narrow`/`select`/`split`/`chunk`/`unbind`/...,
  or `.real`/`.imag`.
- `class:<Name>`: set by the prefilter on every member of top-level class `Name` (for rules that
  can only fire in some classes, such as VL104's tensor stores).
"""

from __future__ import annotations

import ast
import re
from typing import Callable, Iterable, Iterator, Optional

from viewlint.analysis import semantics

Atom = tuple[str, str]
# A rule's needs: any one of these conjunctions of atoms must hold in a segment.
Needs = tuple[tuple[Atom, ...], ...]

_TRUTH_NODES = (ast.If, ast.While, ast.Assert, ast.IfExp, ast.BoolOp)
# The node kinds `collect` reads (besides names): every other kind is skipped at once.
_COLLECTED = frozenset({ast.Attribute, ast.Call, ast.Subscript, ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign,
                        ast.NamedExpr, ast.arg, ast.UnaryOp, ast.comprehension, ast.For, ast.AsyncFor, ast.FunctionDef,
                        ast.AsyncFunctionDef, ast.Return, ast.Yield, *_TRUTH_NODES})
_CAST_CHAIN_OUTER = semantics.DTYPE_CAST_METHODS | {"to"}
_CAST_CHAIN_INNER = frozenset({"cuda", "to"})
_TRANSPOSED_ATTRIBUTES = frozenset({"T", "mT"})
# The last names of torch's factories (`torch.zeros`, `zeros` imported from torch): what VL305 converts.
_FACTORY_NAMES = frozenset(name.rsplit(".", 1)[1] for name in semantics.FACTORY_FUNCTIONS)
# Calls whose result may be part of their input's storage (with subscripts and iteration: `partial-view`).
_PARTIAL_VIEW_CALLS = semantics.PARTIAL_VIEW_OPS | semantics.SEQUENCE_VIEW_METHODS
_TRANSPOSING_CALLS = frozenset({"t", "transpose", "permute", "movedim", "moveaxis", "swapaxes", "swapdims"})


# Fields that only ever hold context or operator singletons (`Load()`, `Add()`): read through their
# parents (`node.ctx`, `node.op`), never listed.
_SINGLETON_FIELDS = frozenset({"ctx", "op", "ops"})
# Field types (in the `ast` classes' signatures) that never hold a node worth listing.
_LEAF_FIELD_TYPES = frozenset({"identifier", "string", "int", "constant", "expr_context", "boolop", "operator",
                               "unaryop", "cmpop"})
_SIGNATURE = re.compile(r"^\w+\((.*)\)$")
# Per node class: (field, holds a list: True / one node or None: False / unknown: None).
_CHILD_FIELDS: dict[type, tuple[tuple[str, Optional[bool]], ...]] = {}


def _child_fields(kind: type) -> tuple[tuple[str, Optional[bool]], ...]:
    """The fields of an `ast` class that can hold nodes, read off its signature
    (`Call(expr func, expr* args, keyword* keywords)`); identifiers, numbers, strings,
    constants and operator singletons are left out. Falls back to every field, checked
    value by value, when the signature does not name exactly the class's fields."""
    fields: list[tuple[str, Optional[bool]]] = []
    match = _SIGNATURE.match((kind.__doc__ or "").strip())
    names = []
    for part in match.group(1).split(",") if match else ():
        words = part.split()
        if len(words) != 2:
            break
        field_type, name = words
        names.append(name)
        if field_type.rstrip("*?") not in _LEAF_FIELD_TYPES:
            fields.append((name, field_type.endswith("*")))
    if not match or names != list(kind._fields):  # type: ignore[attr-defined]
        fields = [(name, None) for name in kind._fields if name not in _SINGLETON_FIELDS]  # type: ignore[attr-defined]
    return tuple(fields)


# Per node class: a function giving its children to push on the preorder stack (last child first;
# None where a field is empty or a list has a hole: skipped when popped), or None for a leaf. Made
# once per class from `_child_fields`: one call per node instead of a loop over its fields.
_CHILDREN_OF: dict[type, Optional[Callable[[ast.AST], list[Optional[ast.AST]]]]] = {}


def _children_function(kind: type) -> Optional[Callable[[ast.AST], list[Optional[ast.AST]]]]:
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _CHILD_FIELDS[kind] = _child_fields(kind)
    if not fields:
        return None
    if any(many is None for _, many in fields):  # fields whose kind the signature does not tell
        def generic(node: ast.AST) -> list[Optional[ast.AST]]:
            kids: list[Optional[ast.AST]] = []
            for name, _ in fields:
                value = getattr(node, name, None)
                if type(value) is list:
                    kids.extend(v for v in value if isinstance(v, ast.AST))
                elif isinstance(value, ast.AST):
                    kids.append(value)
            kids.reverse()
            return kids
        return generic
    def field_by_field(node: ast.AST) -> list[Optional[ast.AST]]:  # a node built by hand, missing a field
        found: list[Optional[ast.AST]] = []
        for name, many in fields:
            value = getattr(node, name, None)
            if many:
                found.extend(value or ())
            else:
                found.append(value)
        found.reverse()
        return found

    parts = [f"*node.{name}[::-1]" if many else f"node.{name}" for name, many in reversed(fields)]
    code = (f"def children(node):\n    try:\n        return [{', '.join(parts)}]\n"
            "    except (AttributeError, TypeError):\n        return field_by_field(node)\n")
    namespace: dict[str, object] = {"field_by_field": field_by_field}
    exec(code, namespace)  # noqa: S102 - code made from the ast classes' own field names
    return namespace["children"]  # type: ignore[return-value]


def preorder(root: ast.AST) -> list[ast.AST]:
    """Every node under `root` (itself included) in source order, parents before children.

    Context and operator nodes (`Load`, `Add`, ...) are left out: nothing reads them from the list.
    """
    out: list[ast.AST] = []
    stack: list[Optional[ast.AST]] = [root]
    pop, append, extend, children_of = stack.pop, out.append, stack.extend, _CHILDREN_OF
    while stack:
        node = pop()
        if node is None:  # an empty field, a hole in a list field (`{**d}` keys, kw-only arguments without defaults)
            continue
        append(node)
        kind = type(node)
        try:
            children = children_of[kind]
        except KeyError:
            children = children_of[kind] = _children_function(kind)
        if children is not None:
            extend(children(node))
    return out


def callee_name(func: ast.AST) -> Optional[str]:
    """The last name of a callee: `x.contiguous` -> `contiguous`, `save` -> `save`."""
    kind = type(func)
    if kind is ast.Attribute:
        return func.attr  # type: ignore[attr-defined]
    if kind is ast.Name:
        return func.id  # type: ignore[attr-defined]
    return None


def dotted(node: ast.AST) -> Optional[str]:
    parts: list[str] = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if type(node) is ast.Name:
        parts.append(node.id)  # type: ignore[attr-defined]
        return ".".join(reversed(parts))
    return None


class Features:
    """The calls, attributes and flags found in a segment."""

    __slots__ = ("calls", "attrs", "flags")

    def __init__(self) -> None:
        self.calls: set[str] = set()
        self.attrs: set[str] = set()
        self.flags: set[str] = set()

    def satisfies(self, needs: "CompiledNeeds") -> bool:
        return needs.met_by(self)


class CompiledNeeds:
    """Needs prepared for many checks: single atoms become set lookups."""

    __slots__ = ("calls", "attrs", "flags", "conjunctions")

    def __init__(self, needs: Needs) -> None:
        self.calls: set[str] = set()
        self.attrs: set[str] = set()
        self.flags: set[str] = set()
        self.conjunctions = tuple(c for c in needs if len(c) > 1)
        for conjunction in needs:
            if len(conjunction) == 1:
                kind, value = conjunction[0]
                (self.calls if kind == "call" else self.attrs if kind == "attr" else self.flags).add(value)

    def __bool__(self) -> bool:
        return bool(self.calls or self.attrs or self.flags or self.conjunctions)

    def met_by(self, found: Features) -> bool:
        if not self.calls.isdisjoint(found.calls) or not self.attrs.isdisjoint(found.attrs) \
                or not self.flags.isdisjoint(found.flags):
            return True
        for conjunction in self.conjunctions:
            for kind, value in conjunction:
                if value not in (found.calls if kind == "call" else found.attrs if kind == "attr" else found.flags):
                    break
            else:
                return True
        return False


class RetentionContext:
    """The module facts that decide whether a store may outlive its function (a superset of the walker's test)."""

    __slots__ = ("container_attributes", "module_containers", "module_names", "retaining_methods",
                 "retaining_functions", "long_lived_names")

    def __init__(self, index: object, long_lived_names: Iterable[str] = ()) -> None:
        classes = getattr(index, "classes", {}).values()
        self.container_attributes = {a for info in classes for a in info.container_attributes}
        self.retaining_methods = {m for info in classes for m in info.retaining_methods}
        self.module_containers = set(getattr(index, "module_containers", ()))
        self.module_names = set(getattr(index, "module_names", ()))
        self.retaining_functions = set(getattr(index, "retaining_functions", {}))
        self.long_lived_names = tuple(long_lived_names)

    def container(self, node: ast.AST) -> bool:
        name = dotted(node)
        if name is None:
            return False
        if name.startswith("self.") and name.count(".") == 1:
            return name[5:] in self.container_attributes
        return "." not in name and name in self.module_containers

    def receiver(self, node: ast.AST, method: str) -> bool:
        name = dotted(node)
        if name is None:
            return False
        if self.container(node):
            return True
        if method in semantics.CONTAINER_ONLY_METHODS and (name.startswith("self.") or name in self.module_names):
            return True
        return semantics.looks_long_lived(name.split(".")[-1], self.long_lived_names)


# Attributes that are plain Python values on a tensor (the walker's host attributes).
_HOST_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "grad_fn", "layout"})
# Methods of `str` that answer a yes/no question: no tensor has them.
_STRING_PREDICATES = frozenset({
    "startswith", "endswith", "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper", "isidentifier",
    "isnumeric", "isdecimal", "isascii", "istitle"})
# Attributes named as flags (`is_primary`, `use_cache`): a field of an object not known to hold tensors.
_FLAG_ATTRIBUTE_PREFIXES = ("is_", "has_", "use_", "enable_", "disable_", "should_", "need_")
# Calls whose result is a host value whatever they are given (`len(x)`, `x.item()`, `x.size(0)`).
_HOST_RESULT_CALLS = semantics.HOST_SCALAR_METHODS | semantics.HOST_SCALAR_BUILTINS | {
    "len", "str", "repr", "isinstance", "range", "size", "dim", "numel", "nelement", "element_size", "stride",
    "data_ptr", "is_contiguous", "storage_offset"}
# Calls that return a new tensor of their own, whatever they are given.
_FRESH_RESULT_CALLS = frozenset({"clone", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "empty_like",
                                 "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "randint_like"})
# torch functions whose result has storage of its own (factories, `cat`, `stack`): never a view.
_NEW_TENSOR_FUNCTIONS = frozenset(name.rsplit(".", 1)[1] for name in (
    semantics.FACTORY_FUNCTIONS | semantics.LIKE_FACTORY_FUNCTIONS | semantics.FRESH_CONTIGUOUS_FUNCTIONS))
_ITERATING_BUILTINS = frozenset({"zip", "enumerate", "reversed", "sorted", "list", "tuple", "iter", "next", "filter", "map"})
_VIEWING_ATTRIBUTES = semantics.VIEW_ATTRIBUTES | semantics.AMBIGUOUS_VIEW_ATTRIBUTES | {"grad"}
# Methods that give a tensor (or tensors) even when the walker does not know the receiver is one.
_TENSOR_MAKING_METHODS = (semantics.SEQUENCE_VIEW_METHODS | semantics.VIEW_METHODS | semantics.MAYBE_VIEW_METHODS
                          | {"clone", "nonzero", "argsort"})
_TENSOR_MODULES = ("torch", "numpy", "np")
_WRAPPING_CALLS = frozenset({"list", "tuple", "dict", "set", "OrderedDict", "replace", "copy"})
# Methods that read what a container holds (`queue.get()`, `d.values()`).
_CONTAINER_READS = frozenset({"get", "pop", "popleft", "get_nowait", "values", "items", "setdefault", "copy"})


class TensorContext:
    """The module facts that decide whether an expression may be a tensor the walker knows about:
    the names bound outside functions (module and class level), the attributes classes hold
    tensors or containers in, the imports of torch and NumPy, the configured CPU names, and,
    from the module's call graph, the functions whose callers here pass their parameters
    (`called`) and the names of the functions and methods here that return a value."""

    __slots__ = ("outer", "tensor_attributes", "tensor_fields", "container_attributes", "aliases", "cpu_names", "called",
                 "returning", "forwards", "held_callables", "torch_modules", "_returners", "_segments", "_returns", "_bindings")

    def __init__(self, index: object, cpu_names: Iterable[str] = ()) -> None:
        from viewlint.analysis.callgraph import callgraph_of, may_return_tensor

        self.outer = outer_bindings(index)
        classes = getattr(index, "classes", {}).values()
        self.tensor_attributes = {a for info in classes for a in info.tensor_attributes}
        # Fields a class of this module annotates as tensors (`is_prefilling: Optional[torch.Tensor]`).
        self.tensor_fields = {name for info in classes for name, text in info.field_annotations.items()
                              if "Tensor" in text or "ndarray" in text}
        self.container_attributes = {a for info in classes for a in info.container_attributes}
        # `self.<attr>`s a class assigns: called on tensors, the walker reads what they give as a module's output.
        self.held_callables = {a for info in classes for a in (*info.submodule_attributes, *info.assigned_attributes)}
        # `self.<attr>`s assigned a `torch.nn` module: the walker reads their calls as tensors whatever they are given.
        self.torch_modules = {a for info in classes for a in info.torch_module_attributes}
        self.aliases: dict[str, str] = dict(getattr(index, "aliases", {}))
        self.cpu_names = frozenset(cpu_names)
        graph = callgraph_of(index) if getattr(index, "tree", None) is not None else None  # type: ignore[arg-type]
        # Functions this module calls -> the parameters their callers fill (a method's `self`/`cls` is not one).
        self.called: dict[int, frozenset[str]] = {}
        # The functions and methods here that may return a tensor: those the walker may summarise (not longer than
        # a summary walk reads, not recursive) whose returns are not all plain Python values.
        self.returning: set[str] = set()
        self.forwards: set[int] = set()  # `forward`/`__call__` methods of module classes: their inputs are tensors
        self._returners: dict[str, list[object]] = {}  # name -> the functions of `returning` that have it
        self._segments: dict[int, list[ast.AST]] = getattr(index, "segment_nodes", {})
        self._returns: dict[tuple[object, ...], bool] = {}  # (predicate, name[, slot]) -> what `may_return(_at)` said
        self._bindings: dict[int, Bindings] = {}  # id(function node) -> its bindings, as a callee
        if graph is not None:
            for key, info in graph.functions.items():
                owner = getattr(index, "classes", {}).get(key.owner) if key.owner else None
                if owner is not None and owner.is_module and key.name in ("forward", "__call__", "_forward"):
                    self.forwards.add(id(info.node))
            self.called = {id(info.node): frozenset((*info.positional, *info.keyword_only))
                           for key, info in graph.functions.items() if graph.callers.get(key)}
            from viewlint.analysis.summaries import MAX_CALLER_LINES, MAX_TUPLE_SUMMARY_LINES

            longest = max(MAX_CALLER_LINES, MAX_TUPLE_SUMMARY_LINES)  # the longest function a summary walk reads
            segments = self._segments
            for key, info in graph.functions.items():
                if info.lines <= longest and key not in graph.recursive and may_return_tensor(info, segments.get(id(info.node)) or list(ast.walk(info.node))):
                    self._returners.setdefault(key.name, []).append(info)
            self.returning = set(self._returners)

    def may_return(self, name: Optional[str], judge: "Callable[[ast.AST, Bindings, TensorContext, Optional[set[str]]], bool]") -> bool:
        """Whether a call of a function or method of this module named `name` may give a value `judge`
        holds for (`tensor_may_be`, `partial_may_be`, `contiguous_may_be`): the walker reads such a call
        through its summary, the value the callee's walk finds in its `return`s (and `yield`s), whatever
        the arguments are. So `judge` is asked of each returned expression, with the callee's parameters
        bound to anything. A function met again while it is being judged (recursion) may."""
        if name is None or name not in self._returners:
            return False
        key = (judge, name)
        found = self._returns.get(key)
        if found is None:
            self._returns[key] = True  # while it is judged: calls of itself may give anything
            found = self._returns[key] = any(self._gives(info, judge) for info in self._returners[name])
        return found

    def may_return_at(self, name: Optional[str], slot: tuple[int, int],
                      judge: "Callable[[ast.AST, Bindings, TensorContext, Optional[set[str]]], bool]") -> Optional[bool]:
        """`may_return` for item `slot[0]` of an unpacking of `slot[1]` names, when every function of that name
        returns only tuple displays of that length (or `None`): the walker joins such returns item by item and
        unpacks them item by item. None when that does not hold (then `may_return` says)."""
        if name is None or name not in self._returners:
            return None
        key = (judge, name, slot)
        if key in self._returns:
            return self._returns[key]
        position, length = slot
        items: list[tuple[Bindings, ast.AST]] = []
        for info in self._returners[name]:
            node = info.node  # type: ignore[attr-defined]
            nodes = self._segments.get(id(node)) or preorder(node)
            for child in nodes:
                kind = type(child)
                if kind is ast.Yield or kind is ast.YieldFrom:
                    return None
                if kind is ast.Return and child.value is not None:  # type: ignore[attr-defined]
                    value = child.value  # type: ignore[attr-defined]
                    if type(value) is ast.Constant and value.value is None:
                        continue
                    if type(value) is not ast.Tuple or len(value.elts) != length \
                            or any(type(e) is ast.Starred for e in value.elts):
                        return None
                    items.append((self._callee_bound(info, nodes), value.elts[position]))
        self._returns[key] = True  # while it is judged: calls of itself may give anything
        found = self._returns[key] = any(judge(item, bound, self, None) for bound, item in items)
        return found

    def _gives(self, info: object, judge: "Callable[[ast.AST, Bindings, TensorContext, Optional[set[str]]], bool]") -> bool:
        node = info.node  # type: ignore[attr-defined]
        nodes = self._segments.get(id(node)) or preorder(node)
        returned = []
        for child in nodes:
            kind = type(child)
            if kind is ast.Yield or kind is ast.YieldFrom:
                return True  # a generator: what the walker makes of it is not read here
            if kind is ast.Return and child.value is not None:  # type: ignore[attr-defined]
                returned.append(child.value)  # type: ignore[attr-defined]
        if not returned:
            return False
        bound = self._callee_bound(info, nodes)
        return any(judge(value, bound, self, None) for value in returned)

    def _callee_bound(self, info: object, nodes: list[ast.AST]) -> Bindings:
        """`_callee_bindings` of a function, once per function."""
        node = info.node  # type: ignore[attr-defined]
        bound = self._bindings.get(id(node))
        if bound is None:
            bound = self._bindings[id(node)] = _callee_bindings(info, nodes)
        return bound

    def tensor_module(self, head: str) -> bool:
        target = self.aliases.get(head, head)
        return target.split(".")[0] in _TENSOR_MODULES

    def torch_module(self, node: ast.AST) -> bool:
        """`node`'s dotted name starts at the `torch` package (under any alias: `dist.`, `F.`)."""
        name = dotted(node)
        return name is not None and self.aliases.get(name.split(".")[0], name.split(".")[0]).split(".")[0] == "torch"

    def torch_call(self, func: ast.AST) -> bool:
        """A call of a `torch` or NumPy function (`torch.zeros`, `F.pad`, `np.stack`)."""
        name = dotted(func)
        return name is not None and self.tensor_module(name.split(".")[0])

    def torch_result(self, func: ast.AST) -> Optional[bool]:
        """For a call of a `torch` or NumPy function, whether the walker may know it to give a tensor (or an
        array); None for any other call. A `torch` function imported here gives one exactly when
        `semantics.torch_call_gives_tensor` says so: `torch.cuda.get_device_capability()`, `dist.get_rank()` and
        `torch.is_tensor(x)` give nothing known. NumPy's functions give arrays (`np.is_busday` too)."""
        name = dotted(func)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = self.aliases.get(head)
        if target is None:  # `torch.zeros(...)` without the import: not the walker's torch, but read as it was
            return None if head not in _TENSOR_MODULES else not (head == "torch" and name.rpartition(".")[2].startswith("is_"))
        if target.split(".")[0] not in _TENSOR_MODULES:
            return None
        qualified = f"{target}.{rest}" if rest else target
        return not qualified.startswith("torch.") or semantics.torch_call_gives_tensor(qualified)


def _callee_bindings(info: object, nodes: list[ast.AST]) -> Bindings:
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
                _note_binding(node, bound, direct)
            continue
        if kind is ast.Expr or kind is ast.Assign:
            _note_addition(node, bound)
        if kind in _BINDING_KINDS:
            _note_binding(node, bound, direct)
        if kind is Attribute:
            if node.attr in semantics.ARRAY_METHODS and type(node.value) is Name:  # type: ignore[attr-defined]
                bound.setdefault(node.value.id, []).append(PARAMETER)  # type: ignore[attr-defined]  # as `collect` does
        elif kind is ast.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                if type(target) is ast.Tuple or type(target) is ast.List:
                    _note_source(target, node.value, sources)  # type: ignore[attr-defined]
        elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
            _note_source(node.target, node.iter, sources)  # type: ignore[attr-defined]
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
    return _with_elements(bound, sources, parameters) if sources else bound


def _wrapping_call(func: ast.AST) -> bool:
    """A call the walker reads as a container or object holding its arguments: `list(...)`,
    `dict(...)`, `replace(...)`, or a capitalised name (a class: `Entry(piece)`)."""
    name = dotted(func) or ""
    return name in _WRAPPING_CALLS or name[:1].isupper()


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
                _note_addition(node, found)
            _note_binding(node, found, direct)
    if memo is not None:
        memo["outer-bindings"] = found
    return found


# A segment's bindings: name (or `self.<attr>`) -> the values assigned to it (None: not known, as
# for loop targets, unpacking, `with ... as`, or a parameter annotated as a tensor).
Bindings = dict[str, list[Optional[ast.AST]]]
# The value a parameter annotated as a tensor is bound to: a tensor, but not known to be contiguous or a view.
PARAMETER = ast.Constant(value=None)
# What any other parameter is bound to: nothing known, not even a tensor (but a callable may be passed in).
PLAIN_PARAMETER = ast.Constant(value=None)
_TARGETED = (ast.Name, ast.Attribute)
_BINDING_KINDS = frozenset({ast.Attribute, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.arg})


def _note_binding(node: ast.AST, bindings: Bindings, direct: set[int]) -> None:
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
        if _tensor_annotation(node.annotation):  # type: ignore[attr-defined]
            bindings.setdefault(node.arg, []).append(PARAMETER)  # type: ignore[attr-defined]


def _note_addition(node: ast.AST, bindings: Bindings) -> None:
    """`pieces.append(p)`, `d[k] = v`: a container bound here may hold `p` and `v` after the statement (the
    walker adds them to the elements of a container its scope holds, `Facts._add_to_container`)."""
    kind = type(node)
    if kind is ast.Expr:
        call = node.value  # type: ignore[attr-defined]
        if type(call) is ast.Call and type(call.func) is ast.Attribute and call.func.attr in semantics.ADDING_METHODS:
            name = dotted(call.func.value)
            if name is not None and name in bindings:
                bindings[name].extend(_Held(a, node) for a in call.args if type(a) is not ast.Starred)
    elif kind is ast.Assign:
        for target in node.targets:  # type: ignore[attr-defined]
            if type(target) is ast.Subscript:
                container = target.value  # type: ignore[attr-defined]
                while type(container) is ast.Subscript:
                    container = container.value  # type: ignore[attr-defined]
                name = dotted(container)
                if name is not None and name in bindings:
                    bindings[name].append(_Held(node.value, node))  # type: ignore[attr-defined]


def _bind_value(target: ast.AST, value: Optional[ast.AST], bindings: Bindings, direct: set[int]) -> None:
    direct.add(id(target))
    name = target.id if type(target) is ast.Name else dotted(target)  # type: ignore[attr-defined]
    if name is not None:
        values = bindings.setdefault(name, [])
        if value is not None:
            values.append(value)


_TENSOR_WORDS = ("Tensor", "Parameter", "ndarray", "NDArray", "ArrayLike")


def _tensor_annotation(annotation: Optional[ast.AST]) -> bool:
    """An annotation the walker may read as a tensor or array, in any spelling: `torch.Tensor`,
    `Optional[Tensor]`, `Tensor | None`, `"torch.LongTensor"`, `list[torch.Tensor]`, `np.ndarray`."""
    if annotation is None:
        return False
    for node in preorder(annotation):
        if type(node) is ast.Name and node.id.endswith(_TENSOR_WORDS):  # type: ignore[attr-defined]
            return True
        if type(node) is ast.Attribute and node.attr.endswith(_TENSOR_WORDS):  # type: ignore[attr-defined]
            return True
        if type(node) is ast.Constant and isinstance(node.value, str) and any(w in node.value for w in _TENSOR_WORDS):  # type: ignore[attr-defined]
            return True
    return False


def _docstring_mentions_tensors(function: ast.AST) -> bool:
    """The function's docstring may give a parameter's type as a tensor or array."""
    body = getattr(function, "body", None)
    if not body or type(body[0]) is not ast.Expr:
        return False
    value = body[0].value  # type: ignore[attr-defined]
    return type(value) is ast.Constant and isinstance(value.value, str) and (
        "ensor" in value.value or "ndarray" in value.value or "mask" in value.value)


def tensor_may_be(node: ast.AST, bound: Bindings, context: TensorContext, seen: Optional[set[str]] = None) -> bool:
    """A superset of the expressions the walker can know to be a tensor, or a container of
    tensors (`Facts.value_of`): a name bound (in the segment or outside functions) to such a
    value, or unknowably (a loop target, a parameter annotated as a tensor); what `torch`/NumPy
    functions and tensor-making methods return; views, subscripts, arithmetic and comparisons
    of such values; `self.<attr>` held as a tensor by a class. A plain parameter, an unknown
    attribute or call, a constant: no."""
    kind = type(node)
    if kind is ast.Name:
        name = node.id  # type: ignore[attr-defined]
        return name in context.cpu_names or _bound_to_tensor(name, bound, context, seen)
    if kind is ast.Attribute:
        attr = node.attr  # type: ignore[attr-defined]
        name = dotted(node)
        if attr in context.cpu_names or (name is not None and (name in context.cpu_names or _bound_to_tensor(name, bound, context, seen))):
            return True
        if attr in _HOST_ATTRIBUTES:
            return False
        if attr in _VIEWING_ATTRIBUTES:
            return True  # `.data`, `.grad`, `.T`: of a tensor, or of a module's parameter
        if attr in semantics.PARAMETER_ATTRIBUTE_NAMES and name != f"self.{attr}":
            return True  # `layer.weight`: a module's parameter
        if name is not None and context.tensor_module(name.split(".", 1)[0]):
            return False  # `torch.bfloat16`, `torch.version.hip`, `np.float32`: a dtype, a string, a constant
        if attr in context.tensor_fields:
            return True  # a tensor field of a class of this module
        if name is not None and name.startswith("self."):
            dots = name.count(".")
            if dots == 1:
                named = (attr in ("weight", "bias") or attr.endswith(("_weight", "_bias", "_proj"))) \
                    and not attr.startswith(semantics.FLAG_PREFIXES)  # `self.use_bias` is a flag
                return attr in context.tensor_attributes or attr in context.container_attributes or named
        if attr.startswith(_FLAG_ATTRIBUTE_PREFIXES):
            return False  # `c.decl.is_primary`, `batch.use_cache`: a flag of some object, not a tensor
        if _tensor_parameter(node.value, bound, context):  # type: ignore[attr-defined]
            return False  # `mP.element_type` of a tensor parameter: no field the walker knows
        # A field of an object built from tensors (`entry.embedding`, `Entry(piece).embedding`).
        return tensor_may_be(node.value, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.Call:
        return _call_tensor_may_be(node, bound, context, seen)
    return _value_tensor_may_be(node, bound, context, seen)


def _call_tensor_may_be(node: ast.AST, bound: Bindings, context: TensorContext, seen: Optional[set[str]],
                        summarised: bool = True) -> bool:
    """`tensor_may_be` of a call; `summarised=False`: without what the functions of this module of its name
    may return (already judged by the caller)."""
    func = node.func  # type: ignore[attr-defined]
    if summarised and context.may_return(callee_name(func), tensor_may_be):
        return True  # a function of this module that may return a tensor
    known = context.torch_result(func)
    if known is not None:
        return known  # a torch function the walker knows the result of (not `torch.cuda.is_available()`), NumPy's
    if type(func) is ast.Attribute:
        if func.attr in semantics.HOST_VALUE_METHODS or func.attr in _STRING_PREDICATES or func.attr == "keys":
            return False  # `x.dim()`, `x.size(0)`, `x.item()`, `name.endswith(".bias")`, `d.keys()`: Python values
        if tensor_may_be(func.value, bound, context, seen):
            return True
        if func.attr in _TENSOR_MAKING_METHODS and (func.attr not in semantics.MAYBE_VIEW_METHODS_NEED_TENSOR
                                                    or _given_tensor_arguments(node, context)):
            # `x.reshape(...)`, `x.clone()`: only tensors have them. `.to(...)`, `.float()`, `.cuda()` (Triton's
            # values, modules and NumPy arrays have them too) of something unknown: only with a torch dtype.
            return True
        # `self.proj(x)`, `self.gate(x)`: a submodule or a callable the class holds, applied to a tensor.
        if type(func.value) is ast.Name and func.value.id == "self" and func.attr in context.torch_modules:
            return True
        return type(func.value) is ast.Name and func.value.id == "self" and func.attr in context.held_callables \
            and not func.attr.startswith(semantics.PREDICATE_PREFIXES) and _positional_tensor(node, bound, context, seen)
    if type(func) is ast.Name and func.id in ("max", "min", "sum", "abs"):
        return any(tensor_may_be(a, bound, context, seen) for a in _arguments(node))  # over 0-d tensors: a tensor
    if not _wrapping_call(func):
        # `fn(x)`, `model(x)`: a callable held in a parameter or a name bound here, applied to a tensor. Any other
        # plain call is unknown to the walker (`isinstance`, `len`, `helper(x)`).
        name = func.id if type(func) is ast.Name else None
        return name is not None and (name in bound or name in context.outer) and name not in context.aliases \
            and name not in semantics.BUILTIN_NAMES and not name.startswith(semantics.PREDICATE_PREFIXES) \
            and _positional_tensor(node, bound, context, seen)
    # A class or container built from tensors holds them (`Pair(a, b)[0]`, `list(pieces)`).
    return any(tensor_may_be(a, bound, context, seen) for a in _arguments(node))


def _value_tensor_may_be(node: ast.AST, bound: Bindings, context: TensorContext, seen: Optional[set[str]]) -> bool:
    """`tensor_may_be` of what is neither a name, an attribute nor a call."""
    kind = type(node)
    if kind is ast.Subscript:
        index = node.slice  # type: ignore[attr-defined]
        if type(index) is ast.Tuple or (type(index) is ast.Constant and index.value is Ellipsis):  # type: ignore[attr-defined]
            return True  # `x[:, 0]`, `x[...]`: tensor-style indexing, whatever `x` is
        if tensor_may_be(node.value, bound, context, seen):  # type: ignore[attr-defined]
            return True
        # `x[idx]` with a tensor index: only tensors and arrays take one.
        return maybe_advanced(index) and any(tensor_may_be(e, bound, context, seen) for e in _index_elements(index))
    if kind is ast.Compare:
        if any(isinstance(op, _HOST_COMPARISONS) for op in node.ops):  # type: ignore[attr-defined]
            return False  # `is`, `in`: a Python bool
        if any(type(c) is ast.Constant and isinstance(c.value, str) for c in (node.left, *node.comparators)):  # type: ignore[attr-defined]
            return False  # compared with a string: not a tensor
        return any(tensor_may_be(o, bound, context, seen) for o in (node.left, *node.comparators))  # type: ignore[attr-defined]
    if kind is ast.BinOp:
        return tensor_may_be(node.left, bound, context, seen) or tensor_may_be(node.right, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp:
        return type(node.op) is not ast.Not and tensor_may_be(node.operand, bound, context, seen)  # type: ignore[attr-defined]
    if kind is _Element:
        return _element_tensor_may_be(node, bound, context, seen)  # type: ignore[arg-type]
    return _through(node, tensor_may_be, bound, context, seen)


def _given_tensor_arguments(call: ast.AST, context: TensorContext) -> bool:
    """`.to(torch.float16)`, `.to(dtype=...)`, `.type(device=...)`: the walker reads the receiver of such a
    `.to`/`.type` as a tensor, whatever else it knows of it (only tensors take a torch dtype or a device)."""
    if call.func.attr not in ("to", "type"):  # type: ignore[attr-defined]
        return False
    return any(k.arg in ("dtype", "device") or context.torch_module(k.value) for k in call.keywords) \
        or any(context.torch_module(a) for a in call.args)  # type: ignore[attr-defined]


def _positional_tensor(call: ast.AST, bound: Bindings, context: TensorContext, seen: Optional[set[str]]) -> bool:
    """Some positional (unstarred) argument of the call may be a tensor."""
    return any(type(a) is not ast.Starred and tensor_may_be(a, bound, context, seen) for a in call.args)  # type: ignore[attr-defined]


def _tensor_parameter(node: ast.AST, bound: Bindings, context: TensorContext) -> bool:
    """A name bound only as a parameter the walker reads as a tensor (annotated as one, or an activation of a
    `forward`), never rebound. The walker binds it to a tensor (or, joined with what callers pass, a container
    without named fields), so an attribute it has no rule for (`x.element_type`) is unknown, not a field."""
    if type(node) is not ast.Name or node.id in context.outer:  # type: ignore[attr-defined]
        return False
    values = bound.get(node.id)  # type: ignore[attr-defined]
    return bool(values) and PARAMETER in values and all(v is PARAMETER or v is PLAIN_PARAMETER for v in values)


def _element_tensor_may_be(node: "_Element", bound: Bindings, context: TensorContext, seen: Optional[set[str]]) -> bool:
    """An item of what a loop or an unpacking takes it from may be a tensor: as the walker iterates
    (`Evaluator.iterate`, `bind_target_into`), `range` gives ints, `enumerate` counts, `zip` and the
    other iterating builtins give items of their arguments, a literal its elements; anything else
    gives a tensor only when it may be a tensor or hold tensors."""
    source = node.source
    if source is _COUNTER:
        return False
    kind = type(source)
    if node.slot is not None and kind is ast.Call:
        # `causal, local = _resolve(...)`: item `local` of what every `return` of the functions of that name gives.
        at = context.may_return_at(callee_name(source.func), node.slot, tensor_may_be)  # type: ignore[attr-defined]
        if at is not None:
            return at or _call_tensor_may_be(source, bound, context, seen, summarised=False)
    if kind is ast.Call and type(source.func) is ast.Name:  # type: ignore[attr-defined]
        called = source.func.id  # type: ignore[attr-defined]
        if called == "range":
            return False
        if called in _ITERATING_BUILTINS:
            return any(_element_tensor_may_be(_Element(a.value if type(a) is ast.Starred else a), bound, context, seen)
                       for a in (*source.args, *(k.value for k in source.keywords)))  # type: ignore[attr-defined]
    if kind is ast.List or kind is ast.Tuple or kind is ast.Set:
        return any(tensor_may_be(e, bound, context, seen) for e in source.elts)  # type: ignore[attr-defined]
    return tensor_may_be(source, bound, context, seen)


def _bound_to_tensor(name: str, bound: Bindings, context: TensorContext, seen: Optional[set[str]]) -> bool:
    """Some value `name` is bound to, in the segment or outside functions, may be a tensor."""
    return _bound_to(name, bound, context, seen, tensor_may_be, True)


class _Element(ast.AST):
    """What a loop target or an unpacked name is bound to: an item of `source` (see `_with_elements`).
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


class _Held(ast.AST):
    """What a container bound here may hold after `pieces.append(item)` or `d[k] = item` (see `_note_addition`),
    visible from the end of that statement on (as the walker adds it, when the statement is done)."""

    _fields = ("item",)

    def __init__(self, item: ast.AST, statement: ast.AST) -> None:
        super().__init__()
        self.item = item
        self.lineno, self.col_offset = statement.lineno, statement.col_offset  # type: ignore[attr-defined]
        self.end_lineno = statement.end_lineno  # type: ignore[attr-defined]
        self.end_col_offset = statement.end_col_offset  # type: ignore[attr-defined]


# What a name holds when it is built as a container (`pieces = []`, `{k: v ...}`, `dict()`): its truth is its length.
_CONTAINER_BUILDERS = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_EMPTY_CONTAINER_CALLS = frozenset({"list", "dict", "set", "tuple", "OrderedDict", "defaultdict", "deque"})


def _built_container(value: Optional[ast.AST]) -> bool:
    """A binding that makes a container (`[]`, `{k: v ...}`, `dict()`) or adds to one (`_Held`)."""
    if value is None:
        return False
    kind = type(value)
    if kind is _Held or kind in _CONTAINER_BUILDERS:
        return True
    return kind is ast.Call and callee_name(value.func) in _EMPTY_CONTAINER_CALLS and not value.args  # type: ignore[attr-defined]


def _built_here(node: ast.AST, bound: Bindings, context: TensorContext) -> bool:
    """A name the function builds as a container and fills (`pieces = []; pieces.append(t)`): a list or a dict
    to the walker, whatever it holds."""
    if type(node) is not ast.Name or context.outer.get(node.id) is not None:  # type: ignore[attr-defined]
        return False
    values = bound.get(node.id)  # type: ignore[attr-defined]
    return bool(values) and all(_built_container(value) for value in values)


def _itself_may_be_tensor(node: ast.AST, bound: Bindings, context: TensorContext) -> bool:
    """`tensor_may_be` for a question about the value itself, not what it holds (its truth, a method called on it,
    `int(...)` of it): a container built here is none (`if pieces:`, `seen.add(k)`)."""
    return not _built_here(node, bound, context) and tensor_may_be(node, bound, context)


class _Before:
    """The bindings a use can see: the walker reads a function once, in source order, and binds an
    assignment's names when the statement is done, so an assignment that ends after the use (`x =
    x.contiguous()`, a later rebinding) is not yet made there. Loop targets, unpacked names (no position
    of their own here), parameters and `:=` values are always visible."""

    __slots__ = ("bound", "row", "column", "unordered")

    def __init__(self, bound: Bindings, use: ast.AST, unordered: set[int]) -> None:
        self.bound = bound
        self.row = getattr(use, "lineno", None)
        self.column = getattr(use, "col_offset", 0)
        self.unordered = unordered

    def __contains__(self, name: str) -> bool:
        return name in self.bound

    def get(self, name: str, default: Optional[list[Optional[ast.AST]]] = None) -> Optional[list[Optional[ast.AST]]]:
        values = self.bound.get(name)
        if values is None or self.row is None:
            return values if values is not None else default
        row, column, unordered = self.row, self.column, self.unordered
        return [v for v in values if v is None or getattr(v, "end_lineno", None) is None or id(v) in unordered
                or v.end_lineno < row or (v.end_lineno == row and v.end_col_offset <= column)]  # type: ignore[attr-defined,operator]


def _with_elements(bound: Bindings, sources: Bindings, parameters: set[str],
                   comprehended: frozenset[int] = frozenset(), slots: Optional[dict[tuple[str, int], tuple[int, int]]] = None) -> Bindings:
    """`bound` with each unknown binding that a loop target or an unpacking made replaced by an item of
    what it is taken from (`_Element`); unknown bindings of other kinds (`with ... as x`) stay.
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
            + [_Element(s, ordered=id(s) not in comprehended, slot=slots.get((name, id(s))) if slots else None) for s in taken_from]
    return judged


def _part_of_self(node: ast.AST, bound: Bindings, context: TensorContext) -> bool:
    """`self.ids[n:]`, `self.table[0]`: a part of something the object holds that is not a container of
    other tensors and that the segment does not set (to a view of a local); its storage lives as long
    as the object, so storing it pins nothing more (VL101, VL102)."""
    if type(node) is not ast.Subscript:
        return False
    held = node.value  # type: ignore[attr-defined]
    return type(held) is ast.Attribute and type(held.value) is ast.Name and held.value.id == "self" \
        and held.attr not in context.container_attributes and f"self.{held.attr}" not in bound  # type: ignore[attr-defined]


def _element_partial_may_be(node: _Element, bound: Bindings, context: TensorContext, seen: Optional[set[str]]) -> bool:
    """An element of a tensor (a row: a view of part of it), of a sequence of views, or of `zip`/`enumerate` of them."""
    source = node.source
    if type(source) is ast.Call and type(source.func) is ast.Name and source.func.id in _ITERATING_BUILTINS:  # type: ignore[attr-defined]
        return any(_element_partial_may_be(_Element(a), bound, context, seen) for a in source.args)  # type: ignore[attr-defined]
    before = set(seen) if seen is not None else None  # the names the other question may visit again
    return partial_may_be(source, bound, context, seen) or tensor_may_be(source, bound, context, before)


def _bound_to(name: str, bound: Bindings, context: TensorContext, seen: Optional[set[str]],
              judge: "Callable[[ast.AST, Bindings, TensorContext, Optional[set[str]]], bool]", parameter: bool) -> bool:
    """`judge` holds for some value `name` is bound to (in the segment or outside functions);
    an unknown binding (a loop target) counts, a tensor parameter counts when `parameter`."""
    local, outer = bound.get(name), context.outer.get(name)
    if local is None and outer is None:
        return False
    seen = set() if seen is None else seen
    if name in seen:
        return False  # a cycle (`x = x + 1`) adds nothing
    seen.add(name)
    for value in (*(local or ()), *(outer or ())):
        if value is None or (parameter if value is PARAMETER else judge(value, bound, context, seen)):
            return True
    return False


def contiguous_may_be(node: ast.AST, bound: Bindings, context: TensorContext, seen: Optional[set[str]] = None) -> bool:
    """A superset of the expressions the walker can know to be contiguous tensors (VL301):
    `torch`/NumPy results, `.contiguous()`, `.clone()`, fresh contiguous methods (`matmul`, `repeat`...),
    gathers, what casts, moves and in-place methods of such a value return, arithmetic
    on it, and names bound to any of these (or unknowably). Views, parameters, comparisons: no."""
    kind = type(node)
    if kind is ast.Name:
        return _bound_to(node.id, bound, context, seen, contiguous_may_be, False)  # type: ignore[attr-defined]
    if kind is _Element:
        return _element_tensor_may_be(node, bound, context, seen)  # type: ignore[arg-type]  # a row of a contiguous tensor
    if kind is ast.Attribute:
        name = dotted(node)
        return name is not None and _bound_to(name, bound, context, seen, contiguous_may_be, False)
    if kind is ast.Call:
        func = node.func  # type: ignore[attr-defined]
        if context.torch_result(func) or context.may_return(callee_name(func), contiguous_may_be):
            return True
        if type(func) is ast.Attribute:
            method = func.attr
            if method in ("contiguous", "clone") or method in semantics.FRESH_CONTIGUOUS_METHODS:
                return True  # (VL301 flags `.clone().contiguous()` whatever was cloned)
            if method in semantics.MAYBE_VIEW_METHODS or semantics.is_inplace_method(method):
                return contiguous_may_be(func.value, bound, context, seen)
            return False
        if not _wrapping_call(func):
            return False
        return any(contiguous_may_be(a, bound, context, seen) for a in _arguments(node))
    if kind is ast.Subscript:
        if maybe_advanced(node.slice) and (tensor_may_be(node.value, bound, context, seen) or any(  # type: ignore[attr-defined]
                tensor_may_be(e, bound, context, seen) for e in _index_elements(node.slice))):  # type: ignore[attr-defined]
            return True  # a gather: a fresh contiguous tensor
        index = node.slice  # type: ignore[attr-defined]
        if type(index) is ast.Slice or type(index) is ast.Tuple:
            return False  # `x[a:b]`, `x[:, 0]`: a view, which the walker never knows to be contiguous
        return contiguous_may_be(node.value, bound, context, seen)  # type: ignore[attr-defined]  # `parts[0]`: an element
    if kind is ast.BinOp:
        if type(node.op) is ast.MatMult:  # type: ignore[attr-defined]
            return True
        return contiguous_may_be(node.left, bound, context, seen) or contiguous_may_be(node.right, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp:
        return type(node.op) is not ast.Not and contiguous_may_be(node.operand, bound, context, seen)  # type: ignore[attr-defined]
    return _through(node, contiguous_may_be, bound, context, seen)


def partial_may_be(node: ast.AST, bound: Bindings, context: TensorContext, seen: Optional[set[str]] = None) -> bool:
    """A superset of the values the walker can know to be, or to hold, a view of part of a tensor
    (`Value.partial`, VL101/VL102): subscripts of what may be a tensor; `split`/`narrow`/`select`/...,
    `.real`/`.imag`; views, casts and moves of such a value; containers and wrappers holding one;
    names bound to any of these or unknowably (a loop target: rows of a tensor are views)."""
    kind = type(node)
    if kind is ast.Name:
        return _bound_to(node.id, bound, context, seen, partial_may_be, False)  # type: ignore[attr-defined]
    if kind is _Element:
        return _element_partial_may_be(node, bound, context, seen)  # type: ignore[arg-type]
    if kind is ast.Attribute:
        attr = node.attr  # type: ignore[attr-defined]
        name = dotted(node)
        if name is not None and _bound_to(name, bound, context, seen, partial_may_be, False):
            return True
        if attr in _HOST_ATTRIBUTES:
            return False  # `x.shape`, `x.device`: metadata, never a view
        if attr in _PARTIAL_VIEW_CALLS:
            return True  # `.real`, `.imag`
        if name is not None and name.startswith("self.") and name.count(".") == 1 and attr in context.container_attributes:
            return True  # what a class keeps in a container attribute
        # A view attribute of a part (`piece.data`), or a field of an object holding one (`entry.embedding`).
        return partial_may_be(node.value, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.Subscript:
        index = node.slice  # type: ignore[attr-defined]
        return type(index) is ast.Tuple or (type(index) is ast.Constant and index.value is Ellipsis) \
            or tensor_may_be(node.value, bound, context, seen) or partial_may_be(node.value, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.Call:
        func = node.func  # type: ignore[attr-defined]
        last = callee_name(func) or ""
        if last in _PARTIAL_VIEW_CALLS or context.may_return(last, partial_may_be):
            return True  # a split, or a function of this module that may return a view of part of a tensor
        torch_call = context.torch_call(func)
        if torch_call and last in _NEW_TENSOR_FUNCTIONS:
            return False  # `torch.empty(...)`, `torch.cat(...)`: a tensor with storage of its own
        if type(func) is ast.Attribute and not torch_call:
            if last in semantics.VIEW_METHODS or last in semantics.MAYBE_VIEW_METHODS or last in _CONTAINER_READS:
                return partial_may_be(func.value, bound, context, seen)
            return False
        if not torch_call and not _wrapping_call(func):
            return False
        # A torch function of a partial view (`torch.reshape(piece, ...)`), a wrapper holding one (`Entry(piece)`).
        return any(partial_may_be(a, bound, context, seen) for a in _arguments(node))
    if kind is ast.BoolOp:
        return any(partial_may_be(v, bound, context, seen) for v in node.values)  # type: ignore[attr-defined]
    return _through(node, partial_may_be, bound, context, seen)


def _through(node: ast.AST, judge: "Callable[[ast.AST, Bindings, TensorContext, Optional[set[str]]], bool]",
             bound: Bindings, context: TensorContext, seen: Optional[set[str]]) -> bool:
    """The cases the value predicates share: a conditional expression or `:=` is what it may
    give; a literal container holds its elements; a comprehension's elements come from its own
    `for`, so it may hold anything."""
    kind = type(node)
    if kind is _Held:
        return judge(node.item, bound, context, seen)  # type: ignore[attr-defined]  # a container holding it
    if kind is ast.IfExp:
        return judge(node.body, bound, context, seen) or judge(node.orelse, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.NamedExpr or kind is ast.Starred:
        return judge(node.value, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.List or kind is ast.Tuple or kind is ast.Set:
        return any(judge(element, bound, context, seen) for element in node.elts)  # type: ignore[attr-defined]
    if kind is ast.Dict:
        return any(judge(value, bound, context, seen) for value in node.values)  # type: ignore[attr-defined]
    return kind is ast.ListComp or kind is ast.SetComp or kind is ast.GeneratorExp or kind is ast.DictComp


def _tested(node: ast.AST) -> Iterator[ast.AST]:
    """The values whose truth Python asks for in a test: through `and`, `or` and `not`."""
    kind = type(node)
    if kind is ast.BoolOp:
        for value in node.values:  # type: ignore[attr-defined]
            yield from _tested(value)
    elif kind is ast.UnaryOp and type(node.op) is ast.Not:  # type: ignore[attr-defined]
        yield from _tested(node.operand)  # type: ignore[attr-defined]
    else:
        yield node


def _index_elements(index: ast.AST) -> list[ast.AST]:
    if type(index) is ast.Tuple:
        return [e for e in index.elts if type(e) is not ast.Slice]  # type: ignore[attr-defined]
    return [] if type(index) is ast.Slice else [index]


# Flags only hot-path rules read (VL401, VL403, VL404): `collect` judges them only where the segment may be hot.
HOT_PATH_FLAGS = frozenset({"device-truth-test", "mask-subscript", "tensor-scalar-read"})


def collect(nodes: Iterable[ast.AST], retention: RetentionContext, into: Optional[Features] = None,
            tensors: Optional[TensorContext] = None, cold: Optional[Callable[[], bool]] = None) -> Features:
    """The features of these nodes (a segment's preorder list). `cold()`: whether the segment is not on a
    hot path, asked only before judging the flags that only hot-path rules read (`HOT_PATH_FLAGS`), which
    are then left out."""
    features = into if into is not None else Features()
    calls, attrs, flags = features.calls, features.attrs, features.flags
    Call, Attribute, Subscript, Expr, Assign, Name = ast.Call, ast.Attribute, ast.Subscript, ast.Expr, ast.Assign, ast.Name
    Store = ast.Store
    bound: Bindings = {}  # names (and `self.<attr>`s) bound in the segment, with their values
    direct: set[int] = set()
    tests: list[ast.AST] = []  # truth-tested expressions
    subscripts: list[ast.AST] = []  # subscripts with a maybe-advanced index
    made_contiguous: list[ast.AST] = []  # receivers of `.contiguous()`
    stored: list[ast.AST] = []  # values stored into something that may outlive the function
    accumulated: list[tuple[str, ast.AST]] = []  # `name.append(...)` calls: stored when `name` is returned
    handed_back: set[str] = set()  # the names returns and yields hand back (themselves, or in a tuple or list)
    twins: list[ast.AST] = []  # `x.<m>(...)` statements where `m` has an in-place twin
    scalar_reads: list[ast.AST] = []  # what `.item()`/`.tolist()`/`int(...)` and the like read
    inplace_roots: list[str] = []  # names written by in-place statements (`y.add_(1)`, `y[0].zero_()`)
    written_roots: list[str] = []  # names written by subscript assignments and augmented assignments
    sources: Bindings = {}  # loop targets and unpacked names: what they are taken from
    parameters: set[str] = set()  # the parameters of the functions in the segment
    cached_returns: list[ast.AST] = []  # what `functools.cache`d functions return
    converted: list[ast.AST] = []  # what `x.cuda().half()` chains move and cast
    chained_stores: list[ast.AST] = []  # what subscript assignment targets subscript (`x[idx]` in `x[idx][0] = v`)
    listed: list[str] = []  # parameters annotated as something other than a number or a string
    unordered: set[int] = set()  # values bound by `:=`, visible wherever they are used
    comprehended: set[int] = set()  # what comprehensions iterate (their names are visible wherever they are used)
    narrowed: set[str] = set()  # names `isinstance(name, ...)` tests
    slots: dict[tuple[str, int], tuple[int, int]] = {}  # (name, id(source)) -> its place in the unpacked tuple
    collected = _COLLECTED
    for node in nodes:
        kind = type(node)
        if kind is Name:
            if type(node.ctx) is Store:  # type: ignore[attr-defined]
                _note_binding(node, bound, direct)
            continue
        if kind not in collected:
            continue  # constants, operators, keywords, arguments, displays: nothing below reads them
        if kind is Expr or kind is Assign:
            _note_addition(node, bound)
        if (kind is ast.Return or kind is ast.Yield) and node.value is not None:  # type: ignore[attr-defined]
            handed_back.update(n.id for n in _directly_held(node.value) if type(n) is Name)  # type: ignore[attr-defined]
            continue
        if kind in _BINDING_KINDS:
            _note_binding(node, bound, direct)
            if kind is ast.NamedExpr:
                unordered.add(id(node.value))  # type: ignore[attr-defined]  # `:=` in a test the walker reads first
        if kind is Attribute:
            attr = node.attr  # type: ignore[attr-defined]
            attrs.add(attr)
            if attr == "real" or attr == "imag":
                flags.add("partial-view")
            if attr in semantics.ARRAY_METHODS and type(node.value) is Name:  # type: ignore[attr-defined]
                # `mask.any()`: the walker may read `mask` as an array (a tensor of unknown layout and provenance).
                bound.setdefault(node.value.id, []).append(PARAMETER)
            if attr == "data" and type(node.ctx) is Store:  # type: ignore[attr-defined]
                flags.add("retains")  # `layer.weight.data = piece`: a parameter now lives on `piece`'s storage
        elif kind is Call:
            func = node.func  # type: ignore[attr-defined]
            name = callee_name(func)
            if name is None:
                continue
            calls.add(name)
            if name == "isinstance" and node.args and type(node.args[0]) is Name:  # type: ignore[attr-defined]
                narrowed.add(node.args[0].id)  # type: ignore[attr-defined]  # the walker narrows it in the branches
            if name in _PARTIAL_VIEW_CALLS:
                flags.add("partial-view")
            if name in semantics.GATHER_METHODS:
                flags.add("advanced-subscript")  # `x.index_select(0, rows)`, `torch.gather(...)`: a gathered copy
            if name[-1:] == "_":
                flags.add("inplace-call")
            if name in ("max", "min") and type(func) is Name and node.args:  # type: ignore[attr-defined]
                flags.add("builtin-compare")  # `max(a, b)`, `max(t)`: Python compares what it is given
            if name in semantics.HOST_SCALAR_METHODS and type(func) is Attribute and not node.args:  # type: ignore[attr-defined]
                scalar_reads.append(func.value)  # type: ignore[attr-defined]
            elif name in semantics.HOST_SCALAR_BUILTINS and type(func) is Name and len(node.args) == 1 \
                    and type(node.args[0]) is not ast.Starred and not node.keywords:  # type: ignore[attr-defined]
                scalar_reads.append(node.args[0])  # type: ignore[attr-defined]
            if type(func) is Attribute:
                if (name in semantics.STORING_METHODS and retention.receiver(func.value, name)) \
                        or name in retention.retaining_methods:
                    flags.add("retains")
                    stored.extend(_arguments(node))
                elif name in semantics.ACCUMULATING_METHODS and type(func.value) is Name:
                    accumulated.append((func.value.id, node))  # type: ignore[attr-defined]  # a list a loop may fill
                inner = func.value
                if name in _CAST_CHAIN_OUTER and type(inner) is Call and type(inner.func) is Attribute \
                        and inner.func.attr in _CAST_CHAIN_INNER:
                    flags.add("conversion-chain")
                    source = inner.func.value
                    if type(source) is Call and callee_name(source.func) in _FACTORY_NAMES:  # type: ignore[attr-defined]
                        converted.append(source)  # VL305 reads only a factory's tensor (its dtype is known)
                if name == "contiguous" and not node.args and not node.keywords:  # type: ignore[attr-defined]
                    made_contiguous.append(inner)
                if name == "contiguous" and (
                    (type(inner) is Attribute and inner.attr in _TRANSPOSED_ATTRIBUTES)
                    or (type(inner) is Call and callee_name(inner.func) in _TRANSPOSING_CALLS)
                ):
                    flags.add("transposed-contiguous")
                elif name == "to" and _names_cpu(node):  # type: ignore[arg-type]
                    flags.add("to-cpu")
                elif name == "numpy" and any(k.arg == "force" for k in node.keywords):  # type: ignore[attr-defined]
                    flags.add("numpy-force")
            elif name in retention.retaining_functions:
                flags.add("retains")
                stored.extend(_arguments(node))
        elif kind is Subscript:
            flags.add("partial-view")
            if maybe_advanced(node.slice):  # type: ignore[attr-defined]
                flags.add("advanced-subscript")
                subscripts.append(node)
            if type(node.ctx) is ast.Store and _advanced_in_chain(node.value):  # type: ignore[attr-defined]
                chained_stores.append(node.value)  # type: ignore[attr-defined]
        elif kind is Expr:
            value = node.value  # type: ignore[attr-defined]
            if type(value) is Call:
                name = callee_name(value.func)
                if name is not None:
                    if name[-1:] == "_":
                        flags.add("inplace-statement")
                        root = _inplace_statement(value, flags)
                        if root is not None:
                            inplace_roots.append(root)
                    if name in semantics.HAS_INPLACE_TWIN and type(value.func) is Attribute:
                        flags.add("twin-statement")
                        twins.append(value.func)
        elif kind is Assign:
            value = node.value  # type: ignore[attr-defined]
            if any(type(target) is ast.Tuple or type(target) is ast.List for target in node.targets):  # type: ignore[attr-defined]
                flags.add("partial-view")  # unpacking a tensor iterates it
                for target in node.targets:  # type: ignore[attr-defined]
                    if type(target) is ast.Tuple or type(target) is ast.List:  # (`a = b, c = x` binds `a` to `x` itself)
                        _note_source(target, value, sources)
                        _note_slots(target, value, slots)
            if type(value) is Call and type(value.func) is Attribute and value.func.attr in semantics.OUT_OF_PLACE_UPDATE_METHODS:
                flags.add("update-assigned")
            if len(node.targets) == 1 and type(node.targets[0]) is Name and _strided_contiguous(value):  # type: ignore[attr-defined]
                flags.add("strided-contiguous-assign")
            for target in node.targets:  # type: ignore[attr-defined]
                if type(target) is Subscript:
                    root = _root_name(target)
                    if root is not None:
                        written_roots.append(root)  # `flat[:3] = 0`
                if type(target) is Subscript and retention.container(target.value):
                    flags.add("retains")
                    stored.append(value)
                elif type(target) is Attribute and target.attr == "data":  # type: ignore[attr-defined]
                    stored.append(value)
        elif kind is ast.AugAssign:
            root = _root_name(node.target)  # type: ignore[attr-defined]
            if root is not None:
                written_roots.append(root)  # `flat += 1`, `flat[0] *= 2`
        elif kind in _TRUTH_NODES or (kind is ast.UnaryOp and type(node.op) is ast.Not):  # type: ignore[attr-defined]
            if not _host_truth(node):
                flags.add("truth-test")
                tests.append(node if kind is ast.BoolOp or kind is ast.UnaryOp else node.test)  # type: ignore[attr-defined]
        elif kind is ast.comprehension:
            flags.add("partial-view")  # iterating a tensor yields views of its rows
            _note_source(node.target, node.iter, sources)  # type: ignore[attr-defined]
            comprehended.update(id(n) for n in preorder(node.iter))  # type: ignore[attr-defined]  # (`enumerate(xs)`: `xs`)
            for test in node.ifs:  # type: ignore[attr-defined]
                if not _host_value(test):
                    flags.add("truth-test")
                    tests.append(test)
        elif kind is ast.For or kind is ast.AsyncFor:
            flags.add("partial-view")
            _note_source(node.target, node.iter, sources)  # type: ignore[attr-defined]
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            arguments = node.args  # type: ignore[attr-defined]
            for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg):
                if arg is not None:
                    sources.setdefault(arg.arg, [])  # a parameter: made by the callers, not by this segment
                    parameters.add(arg.arg)
                    bound.setdefault(arg.arg, []).append(PLAIN_PARAMETER)
                    if arg.annotation is not None and not _scalar_annotation(arg.annotation):
                        listed.append(arg.arg)  # may be annotated as a sequence (an index the walker reads as a gather)
            if tensors is not None and id(node) in tensors.forwards:
                arguments = node.args  # type: ignore[attr-defined]
                defaults = dict(zip([a.arg for a in arguments.args][::-1], arguments.defaults[::-1]))
                defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
                for arg in (*arguments.args[1:], *arguments.kwonlyargs):
                    default = defaults.get(arg.arg)
                    if semantics.is_module_input(arg.arg, arg.annotation is not None,
                                                 default is None or (type(default) is ast.Constant and default.value is None)):
                        bound.setdefault(arg.arg, []).append(PARAMETER)  # an activation, for the walker
            if tensors is not None:
                # Its callers here pass its unannotated parameters (not a method's `self`), or its docstring
                # types them: the walker may know anything of them.
                filled = tensors.called.get(id(node), frozenset())
                documented = _docstring_mentions_tensors(node)
                arguments = node.args  # type: ignore[attr-defined]
                for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
                    if arg.annotation is None and (documented or arg.arg in filled):
                        bound.setdefault(arg.arg, []).append(None)
            for decorator in node.decorator_list:  # type: ignore[attr-defined]
                target = decorator.func if type(decorator) is Call else decorator
                if callee_name(target) in ("cache", "lru_cache"):
                    flags.add("cached-def")
                    cached_returns.extend(n.value for n in ast.walk(node) if type(n) is ast.Return and n.value is not None)  # type: ignore[attr-defined]
    # Loop targets and unpacked names: items of what they are taken from; for the tensor questions, at each
    # use only the assignments made before it.
    itemised = _with_elements(bound, sources, parameters, frozenset(comprehended), slots) if tensors is not None and sources else bound

    def before(node: ast.AST) -> Bindings:
        return _Before(itemised, node, unordered)  # type: ignore[return-value]

    judged: list[bool] = []

    def hot() -> bool:
        if not judged:
            judged.append(cold is None or not cold())
        return judged[0]

    if tests and hot() and (tensors is None or any(_itself_may_be_tensor(v, before(v), tensors) for test in tests for v in _tested(test))):
        flags.add("device-truth-test")
    if subscripts and hot() and (tensors is None or any(
        _itself_may_be_tensor(s.value, before(s), tensors) and any(tensor_may_be(e, before(s), tensors) for e in _index_elements(s.slice))  # type: ignore[attr-defined]
        for s in subscripts
    )):
        flags.add("mask-subscript")
    if made_contiguous and (tensors is None or any(not _built_here(r, before(r), tensors) and contiguous_may_be(r, before(r), tensors) for r in made_contiguous)):
        flags.add("contiguous-of-contiguous")
    if converted and (tensors is None or any(tensor_may_be(value, before(value), tensors) for value in converted)):
        flags.add("tensor-conversion-chain")
    if accumulated:
        # A list the function returns (or yields), filled by `append`: what a loop adds outlives its iteration
        # (`Facts._accumulating_loop` reads the loop and the list; this is a superset).
        for receiver, call in accumulated:
            if receiver in handed_back:
                stored.extend(_arguments(call))
    if stored or cached_returns:
        if stored and (tensors is None or any(partial_may_be(value, itemised, tensors) for value in stored
                                              if not _part_of_self(value, itemised, tensors))):
            flags.add("retains-view")
        if cached_returns and (tensors is None or any(partial_may_be(value, itemised, tensors) for value in cached_returns)):
            flags.add("cached-returns-view")
    if chained_stores and (tensors is None or any(_gathered_in_chain(r, before(r), tensors, frozenset(listed), frozenset(narrowed))
                                                  for r in chained_stores)):
        flags.add("chained-subscript-store")
    if scalar_reads and hot() and (tensors is None or any(_itself_may_be_tensor(value, before(value), tensors) for value in scalar_reads)):
        flags.add("tensor-scalar-read")
    if twins and (tensors is None or any(_twin_may_be_tensor(func, before(func), tensors) for func in twins)):
        flags.add("tensor-twin-statement")
    # A subscript or augmented assignment is reported only through `copy_of`: a conversion of a named tensor.
    if (inplace_roots or written_roots) and not calls.isdisjoint(semantics.MAYBE_COPY_METHODS) and (
            any(_chain_has(ast.Name(id=root), _maybe_copy_node, bound, sources) for root in inplace_roots)
            or any(_chain_has(ast.Name(id=root), _converts_a_name(bound, tensors), bound, sources) for root in written_roots)):
        flags.add("write-into-maybe-copy")
    if inplace_roots and "advanced-subscript" in flags and any(
            _chain_has(ast.Name(id=root), _gather_node, bound, sources) for root in inplace_roots):
        flags.add("inplace-on-gathered-name")
    return features


def _strided_contiguous(value: ast.AST) -> bool:
    """`x[..., :-1, :].contiguous()`, `x[:, 1:].contiguous()`, `x.transpose(1, 2).contiguous()` (VL306's copies)."""
    if not (type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr == "contiguous"  # type: ignore[attr-defined]
            and not value.args and not value.keywords):  # type: ignore[attr-defined]
        return False
    receiver = value.func.value  # type: ignore[attr-defined]
    if type(receiver) is ast.Call:
        return type(receiver.func) is ast.Attribute and receiver.func.attr in ("transpose", "permute", "t", "mT")  # type: ignore[attr-defined]
    if type(receiver) is not ast.Subscript:
        return False
    index = receiver.slice  # type: ignore[attr-defined]
    elements = list(index.elts) if type(index) is ast.Tuple else [index]

    def bounded(element: ast.AST) -> bool:
        return type(element) is ast.Slice and any(
            part is not None for part in (element.lower, element.upper, element.step))  # type: ignore[attr-defined]

    for position, element in enumerate(elements):
        if type(element) is ast.Constant and element.value is Ellipsis and position < len(elements) - 1:  # type: ignore[attr-defined]
            return any(bounded(e) for e in elements[position + 1:])
        if position > 0 and bounded(element):
            return True
    return False


def _twin_may_be_tensor(func: ast.AST, bound: Bindings, context: TensorContext) -> bool:
    """`x.<m>` of a twin statement that VL205 may report: a method only tensors have, a function of an
    imported module (`torch.clamp`), or a receiver that may be a tensor the walker knows."""
    if func.attr in semantics.TENSOR_ONLY_TWIN_METHODS:  # type: ignore[attr-defined]
        return True
    receiver = func.value  # type: ignore[attr-defined]
    head = receiver
    while type(head) is ast.Attribute:
        head = head.value  # type: ignore[attr-defined]
    if type(head) is ast.Name and head.id in context.aliases:  # type: ignore[attr-defined]
        return True
    return _itself_may_be_tensor(receiver, bound, context)


def _arguments(call: ast.AST) -> list[ast.AST]:
    """The argument values of a call, positional (unstarred) and keyword."""
    return [a.value if type(a) is ast.Starred else a for a in call.args] + [k.value for k in call.keywords]  # type: ignore[attr-defined]


_HOST_COMPARISONS = (ast.Is, ast.IsNot, ast.In, ast.NotIn)


def _host_value(node: ast.AST) -> bool:
    """A test that is a plain Python bool whatever its operands: a constant, or a comparison
    with `is`/`is not`/`in`/`not in` (the walker's value for these is a host value)."""
    kind = type(node)
    if kind is ast.Constant:
        return True
    if kind is ast.Compare:
        return any(isinstance(op, _HOST_COMPARISONS) for op in node.ops)  # type: ignore[attr-defined]
    if kind is ast.BoolOp:
        return all(_host_value(value) for value in node.values)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp and type(node.op) is ast.Not:  # type: ignore[attr-defined]
        return _host_value(node.operand)  # type: ignore[attr-defined]
    return False


def _host_truth(node: ast.AST) -> bool:
    """A truth test (`if`, `while`, `assert`, `x if c else y`, `and`/`or`, `not`) whose tested values are all host values."""
    if type(node) is ast.BoolOp or type(node) is ast.UnaryOp:
        return _host_value(node)
    return _host_value(node.test)  # type: ignore[attr-defined]


def maybe_advanced(index: ast.AST) -> bool:
    """An index that may select by tensor, list or mask: anything but slices, literals and `...`/`None`."""
    kind = type(index)
    if kind is ast.Slice or kind is ast.Constant:
        return False
    if kind is ast.Tuple:
        return any(maybe_advanced(element) for element in index.elts)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp:
        return type(index.operand) is not ast.Constant  # type: ignore[attr-defined]
    return True


def _advanced_in_chain(node: ast.AST) -> bool:
    """A maybe-advanced subscript under attribute reads, method calls and subscripts: `x[idx]`, `x[idx].T[0]`."""
    while True:
        kind = type(node)
        if kind is ast.Subscript:
            if maybe_advanced(node.slice):  # type: ignore[attr-defined]
                return True
            node = node.value  # type: ignore[attr-defined]
        elif kind is ast.Attribute:
            node = node.value  # type: ignore[attr-defined]
        elif kind is ast.Call and type(node.func) is ast.Attribute:  # type: ignore[attr-defined]
            node = node.func.value  # type: ignore[attr-defined]
        else:
            return False


_CHAIN_VIEW_ATTRIBUTES = semantics.VIEW_ATTRIBUTES | semantics.AMBIGUOUS_VIEW_ATTRIBUTES
# Methods that may give a tensor or a sequence of them whatever they are called on (if it reads as a tensor).
_ALIAS_SEQUENCE_METHODS = _TENSOR_MAKING_METHODS | {"tolist", "topk", "sort", "max", "min", "median", "mode", "kthvalue",
                                                    "nonzero", "unique", "where"}
_SCALAR_ANNOTATIONS = frozenset({"int", "float", "bool", "str", "bytes", "complex", "None"})


def _scalar_annotation(annotation: ast.AST) -> bool:
    """`int`, `Optional[int]`, `int | None`, `"float"`: a number, a bool or a string, never an index that gathers."""
    kind = type(annotation)
    if kind is ast.Constant:
        return annotation.value is None or (isinstance(annotation.value, str)  # type: ignore[attr-defined]
                                            and annotation.value.strip() in _SCALAR_ANNOTATIONS)  # type: ignore[attr-defined]
    if kind is ast.Name:
        return annotation.id in _SCALAR_ANNOTATIONS  # type: ignore[attr-defined]
    if kind is ast.BinOp and type(annotation.op) is ast.BitOr:  # type: ignore[attr-defined]
        return _scalar_annotation(annotation.left) and _scalar_annotation(annotation.right)  # type: ignore[attr-defined]
    if kind is ast.Subscript and (dotted(annotation.value) or "").split(".")[-1] in ("Optional", "Union"):  # type: ignore[attr-defined]
        inner = annotation.slice  # type: ignore[attr-defined]
        return all(_scalar_annotation(e) for e in (inner.elts if type(inner) is ast.Tuple else [inner]))  # type: ignore[attr-defined]
    return False


def _gathered_in_chain(node: ast.AST, bound: Bindings, context: TensorContext, listed: frozenset[str],
                       narrowed: frozenset[str] = frozenset()) -> bool:
    """A subscript the walker may read as a gather (`Evaluator.index_kind`) in the receiver chain of an
    assignment target, through the views it follows (VL202): subscripts, view attributes (`.T`, `.real`)
    and view methods (`.view(...)`, `.transpose(...)`). A subscript of a list or dict the function builds
    (`_built_here`) is no gather, since `index_kind` never reads a container receiver as gathered
    (`rows = [[None] * n for _ in range(m)]; rows[i][j] = v`); `narrowed`: names an `isinstance` test may
    turn into something else."""
    for _ in range(64):
        kind = type(node)
        if kind is ast.Subscript:
            receiver = node.value  # type: ignore[attr-defined]
            built = type(receiver) is ast.Name and receiver.id not in narrowed and _built_here(receiver, bound, context)  # type: ignore[attr-defined]
            if not built and _index_may_gather(node.slice, bound, context, listed):  # type: ignore[attr-defined]
                return True
            node = node.value  # type: ignore[attr-defined]
        elif kind is ast.Attribute and node.attr in _CHAIN_VIEW_ATTRIBUTES:  # type: ignore[attr-defined]
            node = node.value  # type: ignore[attr-defined]
        elif kind is ast.Call and type(node.func) is ast.Attribute and node.func.attr in semantics.VIEW_METHODS:  # type: ignore[attr-defined]
            node = node.func.value  # type: ignore[attr-defined]
        else:
            return False
    return True


def _index_may_gather(index: ast.AST, bound: Bindings, context: TensorContext, listed: frozenset[str]) -> bool:
    """An index the walker may read as advanced: a list, a comparison (a mask), a name that reads as a mask or
    an index tensor (`keep_mask`, `token_ids`), or a value that may be a tensor or a sequence (of ints)."""
    kind = type(index)
    if kind is ast.Slice or kind is ast.Constant:
        return False
    if kind is ast.Tuple:
        return any(_index_may_gather(element, bound, context, listed) for element in index.elts)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp and type(index.operand) is ast.Constant:  # type: ignore[attr-defined]
        return False  # `x[-1]`
    if kind is ast.List or kind is ast.ListComp or kind is ast.Compare:
        return True
    name = dotted(index)
    if name is not None and semantics.looks_like_index_name(name):
        return True
    return tensor_may_be(index, bound, context) or _sequence_may_be(index, bound, context, listed)


def _sequence_may_be(node: ast.AST, bound: Bindings, context: TensorContext, listed: frozenset[str] = frozenset(),
                     seen: Optional[set[str]] = None) -> bool:
    """A superset of the values the walker may know to be a list or sequence that indexes by gathering (a list
    of ints or tensors, a NumPy array, `torch.where`'s tuple): displays, calls (but those giving a Python
    number), attributes, elements of something; a name bound to one, or unknowably; a parameter annotated as a
    sequence. Not an int: a constant, a `range` counter, arithmetic of those."""
    kind = type(node)
    if kind is ast.Constant:
        return False
    if kind is ast.Name:
        name = node.id  # type: ignore[attr-defined]
        values = [*(bound.get(name) or ()), *(context.outer.get(name) or ())]
        seen = set() if seen is None else seen
        if name in seen:
            return False
        seen.add(name)
        for value in values:
            if value is None or value is PARAMETER:
                return True
            if value is PLAIN_PARAMETER:
                if name in listed:
                    return True  # annotated as something other than a number or a string
                continue
            if _sequence_may_be(value, bound, context, listed, seen):
                return True
        return False
    if kind is _Element:
        source = node.source  # type: ignore[attr-defined]
        if source is _COUNTER or (type(source) is ast.Call and type(source.func) is ast.Name and source.func.id == "range"):  # type: ignore[attr-defined]
            return False  # a count
        # A row of a list of lists: what it is taken from holds sequences (an item of something unknown is unknown).
        return _sequence_may_be(source, bound, context, listed, seen)
    if kind is ast.BinOp:
        return _sequence_may_be(node.left, bound, context, listed, seen) or _sequence_may_be(node.right, bound, context, listed, seen)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp:
        return False  # `-n`, `not x`: a number or a bool (a tensor's: `tensor_may_be`)
    if kind is ast.IfExp:
        return _sequence_may_be(node.body, bound, context, listed, seen) or _sequence_may_be(node.orelse, bound, context, listed, seen)  # type: ignore[attr-defined]
    if kind is ast.Call:
        func = node.func  # type: ignore[attr-defined]
        called = callee_name(func)
        if called in _HOST_RESULT_CALLS or called in ("int", "float", "round", "abs", "bool"):
            return False
        # A function of an imported module other than torch and NumPy (`fx.range_constexpr(n)`, `tl.arange(...)`):
        # unknown to the walker, unless it is a method that makes tensors or sequences of them.
        return not (type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id in context.aliases
                    and not context.tensor_module(func.value.id) and called not in _ALIAS_SEQUENCE_METHODS)
    return kind is not ast.JoinedStr and kind is not ast.Compare and kind is not ast.BoolOp


def _inplace_statement(call: ast.Call, flags: set[str]) -> Optional[str]:
    """Classify the receiver of an in-place statement: `buf[idx].add_(1).mul_(2)` -> `buf[idx]`;
    the name at its root (`buf`), if it has one."""
    receiver: Optional[ast.AST] = None
    current: ast.AST = call
    while type(current) is ast.Call and type(current.func) is ast.Attribute \
            and semantics.is_inplace_method(current.func.attr):  # type: ignore[attr-defined]
        receiver = current = current.func.value  # type: ignore[attr-defined]
    if call.args and _advanced_in_chain(call.args[0]):
        flags.add("inplace-on-subscript")  # `nn.init.normal_(w[idx])`: the written tensor is the first argument
    if receiver is None:
        return None
    if type(receiver) is ast.Call:
        flags.add("inplace-on-call")
    if _chain_has(receiver, _maybe_copy_node):
        flags.add("inplace-on-maybe-copy")  # `x.float().add_(1)`, `x.reshape(-1)[0].zero_()`
    if _chain_has(receiver, _gather_node):
        flags.add("inplace-on-gather")  # `x.index_select(0, rows).add_(1)`, `buf[idx].zero_()`
    if _advanced_in_chain(receiver):
        flags.add("inplace-on-subscript")
    root = _root_name(receiver)  # `picked[0].view(-1)` -> `picked`
    if root is not None:
        flags.add("inplace-on-name")
    return root


_COUNTER = ast.Constant(value=0)  # what `enumerate` counts with, the keys of `.items()`: host values


def _note_source(target: ast.AST, source: ast.AST, sources: Bindings) -> None:
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
                _note_source(elements[0], _COUNTER, sources)
                _note_source(elements[1], arguments[0], sources)
                return
            if type(func) is ast.Name and func.id == "zip" and len(elements) == len(arguments) \
                    and not any(type(a) is ast.Starred for a in arguments):
                for element, argument in zip(elements, arguments):
                    _note_source(element, argument, sources)
                return
            if type(func) is ast.Attribute and func.attr == "items" and len(elements) == 2:
                _note_source(elements[0], _COUNTER, sources)
                _note_source(elements[1], source, sources)
                return
        for element in elements:
            _note_source(element, source, sources)
    elif kind is ast.Starred:
        _note_source(target.value, source, sources)  # type: ignore[attr-defined]


def _note_slots(target: ast.AST, source: ast.AST, slots: dict[tuple[str, int], tuple[int, int]]) -> None:
    """`a, b = f(x)`: `a` is item 0 of 2 of what the call gives, `b` item 1 (names only, no `*rest`)."""
    elements = target.elts  # type: ignore[attr-defined]
    if type(source) is not ast.Call or any(type(e) is ast.Starred for e in elements):
        return
    for position, element in enumerate(elements):
        if type(element) is ast.Name:
            slots[(element.id, id(source))] = (position, len(elements))  # type: ignore[attr-defined]


def _root_name(node: ast.AST) -> Optional[str]:
    """The name under subscripts, attribute reads and method calls: `flat[:3]` -> `flat`."""
    while True:
        kind = type(node)
        if kind is ast.Subscript or kind is ast.Attribute:
            node = node.value  # type: ignore[attr-defined]
        elif kind is ast.Call and type(node.func) is ast.Attribute:  # type: ignore[attr-defined]
            node = node.func.value  # type: ignore[attr-defined]
        else:
            return node.id if kind is ast.Name else None  # type: ignore[attr-defined]


def _maybe_copy_node(node: ast.AST) -> bool:
    """A conversion that returns its input when it can and a copy when it cannot (`x.float()`, `x.reshape(-1)`)."""
    if type(node) is not ast.Call:
        return False
    func = node.func  # type: ignore[attr-defined]
    if type(func) is ast.Attribute:
        return func.attr in semantics.MAYBE_COPY_METHODS
    return type(func) is ast.Name and func.id in ("reshape", "flatten", "ravel")  # `from torch import reshape`; not `int(n)`


def _maybe_copy_of_a_name(node: ast.AST) -> bool:
    """A conversion that may copy a named tensor (`x.float()`, `self.w.reshape(-1)`, `torch.flatten(x)`): the
    walker remembers which tensor a write into its result was meant for (`Value.copy_of`) only for these."""
    if type(node) is not ast.Call:
        return False
    func = node.func  # type: ignore[attr-defined]
    if type(func) is ast.Attribute:
        return func.attr in semantics.MAYBE_COPY_METHODS and dotted(func.value) is not None
    return type(func) is ast.Name and func.id in ("reshape", "flatten", "ravel") \
        and bool(node.args) and dotted(node.args[0]) is not None  # type: ignore[attr-defined]


def _converts_a_name(bound: Bindings, tensors: Optional[TensorContext]) -> Callable[[ast.AST], bool]:
    """`_maybe_copy_of_a_name`, as the walker reads the conversion: a method only tensors are sure to have
    (`reshape`, `contiguous`) converts whatever it is called on, but one other objects have too (`.to(...)`,
    `.float()`) converts only what may be a tensor, or what it is given a torch dtype or a `dtype=`/`device=`
    for (`tl.load(p).to(tl.float32)` in a Triton kernel is not)."""
    if tensors is None:
        return _maybe_copy_of_a_name

    def converts(node: ast.AST) -> bool:
        if not _maybe_copy_of_a_name(node):
            return False
        func = node.func  # type: ignore[attr-defined]
        if type(func) is not ast.Attribute or func.attr not in semantics.MAYBE_VIEW_METHODS_NEED_TENSOR:
            return True
        return _given_tensor_arguments(node, tensors) or tensor_may_be(func.value, bound, tensors)

    return converts


def _gather_node(node: ast.AST) -> bool:
    """A gathered copy: a subscript with a maybe-advanced index, or `index_select`/`gather`/`masked_select`/`take`."""
    kind = type(node)
    if kind is ast.Subscript:
        return maybe_advanced(node.slice)  # type: ignore[attr-defined]
    return kind is ast.Call and callee_name(node.func) in semantics.GATHER_METHODS  # type: ignore[attr-defined]


def _chain_has(node: ast.AST, made_by: Callable[[ast.AST], bool], bound: Optional[Bindings] = None,
               sources: Optional[Bindings] = None, seen: Optional[set[str]] = None) -> bool:
    """Whether `node`'s value may come from an expression `made_by` accepts, through the views,
    conversions and method calls on top of it (`y.view(-1)[0]`), the first argument of a function
    (`torch.narrow(y, ...)`, every argument of `zip(...)`), both arms of a conditional expression and,
    with `bound`, the values a name in the chain is bound to in the segment. A loop target or an
    unpacked name comes from what is iterated or unpacked (`sources`); a name bound where the
    segment cannot say to what (`with ... as y`) may come from anything."""
    for _ in range(64):
        if made_by(node):
            return True
        kind = type(node)
        if kind is ast.Attribute and node.attr in _HOST_ATTRIBUTES:  # type: ignore[attr-defined]
            return False  # `x.shape`, `x.dtype`: metadata, not the tensor
        if kind is ast.Subscript or kind is ast.Attribute or kind is ast.Starred:
            node = node.value  # type: ignore[attr-defined]
        elif kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            called = callee_name(func)
            if called in _HOST_RESULT_CALLS or called in _FRESH_RESULT_CALLS:
                return False  # `int(n.item())`, `x.size(0)`: host values; `x.new_zeros(...)`, `x.clone()`: fresh tensors
            if type(func) is ast.Name:
                # What `zip(a, b)` or `enumerate(a)` yields comes from their arguments; what another function
                # returns is its own.
                return called in _ITERATING_BUILTINS and any(_chain_has(a, made_by, bound, sources, seen) for a in node.args)  # type: ignore[attr-defined]
            arguments = node.args[:1]  # type: ignore[attr-defined]
            if any(_chain_has(a, made_by, bound, sources, seen) for a in arguments):
                return True
            if type(func) is not ast.Attribute:
                return False
            node = func.value
        elif kind is ast.IfExp:
            return _chain_has(node.body, made_by, bound, sources, seen) \
                or _chain_has(node.orelse, made_by, bound, sources, seen)  # type: ignore[attr-defined]
        elif kind is ast.NamedExpr:
            node = node.value  # type: ignore[attr-defined]
        elif kind is _Held:
            return False  # what a container holds: a write into the container does not reach it
        elif kind is ast.Name and bound is not None:
            name = node.id  # type: ignore[attr-defined]
            seen = set() if seen is None else seen
            if name in seen:
                return False
            seen.add(name)
            for value in bound.get(name, ()):
                if value is None:
                    unpacked = sources.get(name) if sources is not None else None
                    if unpacked is None or any(s is None or _chain_has(s, made_by, bound, sources, seen) for s in unpacked):
                        return True
                elif value is not PARAMETER and _chain_has(value, made_by, bound, sources, seen):
                    return True
            return False
        else:
            return False
    return True  # too long a chain to follow: it may


def _names_cpu(call: ast.Call) -> bool:
    """`.to("cpu")`, `.to(device="cpu")`, `.to(torch.device("cpu"))`."""
    arguments = [*call.args, *(k.value for k in call.keywords if k.arg == "device")]
    for argument in arguments:
        if type(argument) is ast.Call and argument.args:
            argument = argument.args[0]
        if type(argument) is ast.Constant and argument.value == "cpu":  # type: ignore[attr-defined]
            return True
    return False


def calls(*names: str) -> Needs:
    """Needs: a call to any of these names."""
    return tuple(((("call", name),) for name in sorted(names)))


def flag(name: str) -> Atom:
    return ("flag", name)


def _directly_held(node: ast.AST) -> list[ast.AST]:
    """`node` and the items of the tuples and lists it displays (`return feats, n`): what a return hands back."""
    if type(node) in (ast.Tuple, ast.List):
        return [n for e in node.elts for n in _directly_held(e)]  # type: ignore[attr-defined]
    return [node]
