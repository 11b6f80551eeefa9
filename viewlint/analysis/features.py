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
- `strided-contiguous-assign`: `y = x[..., :-1, :].contiguous()` (a slice past the first dimension),
  `y = x.transpose(...).contiguous()` (`permute`, `t`) or `y = x.contiguous()` of a name, assigned to a name.
- `to-cpu`: `.to("cpu")` and its spellings; `numpy-force`: `.numpy(force=...)`.
- `twin-statement`: an expression statement `x.<m>(...)` where `m` has an in-place `m_` twin (`x.add(1)`), or is a
  conversion (`x.to(device)`);
  `tensor-twin-statement`: one whose receiver may be a tensor the walker knows (`tensor_may_be`), or an
  imported module (`torch.clamp(x, 0, 1)`), or whose method only tensors have (`index_add`): not `seen.add(k)`;
  or a bare call of a function of the module that only makes what it returns (`purity.makes_only`).
- `tensor-scalar-read`: `.item()`/`.tolist()` of, or `int()`/`float()`/`bool()`/`complex()` of, something
  that may be a tensor the walker knows (`tensor_may_be`): not `int(n_heads)`; or such a thing read as an int (a
  slice bound, an argument of `range`/`arange`), or given to a `torch.linalg` function that checks for errors on the
  host (`torch.linalg.inv(a)`, `a.inverse()`).
- `dead-loop-rebind`: a loop variable assigned a new value that nothing after reads (`for p in ps: p = p * 0.9`).
- `update-assigned`: `a = b.<m>(...)` with `m` an out-of-place update (`index_copy`, `scatter`, ...).
- `repeat-unit-dims`: `.repeat(...)` of `x.unsqueeze(d)` or of an index with `None` (under shape-keeping casts).
- `converted-slice`: a conversion's result (`.to(...)`, `.float()`, `.cuda()`) sliced with a bound or a step.
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
from typing import Callable, Iterable, Iterator, Optional

from viewlint.analysis import host_syncs, semantics
from viewlint.analysis.broadcasting import makes_unit_dims, sliced_conversion
from viewlint.analysis.bindings import (BINDING_KINDS, PARAMETER, PASSED_PARAMETER, PLAIN_PARAMETER, Bindings, note_addition, note_binding,
                                        note_source, with_elements)
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.callgraph import callgraph_of
from viewlint.analysis.hooks import may_be_hooked, registered_hooks
from viewlint.analysis.purity import makes_only
from viewlint.analysis.retention import held_container, long_lived_receiver, receiver_name
from viewlint.analysis.nodes import callee_name, dotted, preorder
from viewlint.analysis.chain_judges import chain_has, converts_a_name, gathered_in_chain, twin_may_be_tensor
from viewlint.analysis.tensor_context import (HOST_COMPARISONS, PARTIAL_VIEW_CALLS, TensorContext, built_here,
                                              call_arguments, contiguous_may_be, index_elements, itself_may_be_tensor,
                                              maybe_advanced, part_of_self, partial_may_be, tensor_may_be)

Atom = tuple[str, str]
# A rule's needs: any one of these conjunctions of atoms must hold in a segment.
Needs = tuple[tuple[Atom, ...], ...]

_TRUTH_NODES = (ast.If, ast.While, ast.Assert, ast.IfExp, ast.BoolOp)
# The node kinds `collect` reads (besides names): every other kind is skipped at once.
_COLLECTED = frozenset({ast.Attribute, ast.Call, ast.Subscript, ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign,
                        ast.NamedExpr, ast.arg, ast.UnaryOp, ast.comprehension, ast.For, ast.AsyncFor, ast.FunctionDef,
                        ast.AsyncFunctionDef, ast.Return, ast.Yield, ast.Slice, ast.FormattedValue, *_TRUTH_NODES})
_CAST_CHAIN_OUTER = semantics.DTYPE_CAST_METHODS | {"to"}
_CAST_CHAIN_INNER = frozenset({"cuda", "to"})
# The last names of torch's factories (`torch.zeros`, `zeros` imported from torch): what VL305 converts.
_FACTORY_NAMES = frozenset(name.rsplit(".", 1)[1] for name in semantics.FACTORY_FUNCTIONS)


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
    """Whether a store may outlive its function, asked of `retention` as the walker asks it, knowing nothing of
    the function's class or locals: a superset of the walker's answer."""

    __slots__ = ("index", "long_lived_names", "retaining_methods", "retaining_functions")

    def __init__(self, index: ModuleIndex, long_lived_names: Iterable[str] = ()) -> None:
        self.index = index
        self.long_lived_names = tuple(long_lived_names)
        self.retaining_methods = {m for info in index.classes.values() for m in info.retaining_methods}
        self.retaining_functions = set(index.retaining_functions)

    def container(self, node: ast.AST) -> bool:
        name = dotted(node)
        return name is not None and held_container(name, self.index)

    def receiver(self, node: ast.AST, method: str) -> bool:
        name = receiver_name(node, method, dotted, ast.Subscript)  # type: ignore[arg-type]
        return name is not None and long_lived_receiver(name, method, self.index, self.long_lived_names)


def _docstring_mentions_tensors(function: ast.AST) -> bool:
    """The function's docstring may give a parameter's type as a tensor or array."""
    body = getattr(function, "body", None)
    if not body or type(body[0]) is not ast.Expr:
        return False
    value = body[0].value  # type: ignore[attr-defined]
    return type(value) is ast.Constant and isinstance(value.value, str) and (
        "ensor" in value.value or "ndarray" in value.value or "mask" in value.value)


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
    keyed: list[tuple[str, ast.AST]] = []  # `name[key] = value`, `name += (value,)`: stored when `name` is returned
    handed_back: set[str] = set()  # the names returns and yields hand back (themselves, or in a tuple or list)
    fields_set: list[tuple[str, ast.AST]] = []  # `hyps[i].y = value`: stored when `hyps` may leave the function
    added_names: set[str] = set()  # `out += hyps`: names whose objects a list of the function may take
    twins: list[ast.AST] = []  # `x.<m>(...)` statements where `m` has an in-place twin
    own_calls: list[str] = []  # `f(...)` statements
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
    # `d["k"]` the walker may read as a tensor: a type test narrows it (in the expression around it), the segment stores
    # something under the key (`state["s"] = torch.zeros_like(p)`), or uses it as only tensors are (`d["k"].fill_(n)`).
    tested: set[str] = set()
    slots: dict[tuple[str, int], tuple[int, int]] = {}  # (name, id(source)) -> its place in the unpacked tuple
    collected = _COLLECTED
    for node in nodes:
        kind = type(node)
        if kind is Name:
            if type(node.ctx) is Store:  # type: ignore[attr-defined]
                note_binding(node, bound, direct)
            continue
        if kind not in collected:
            continue  # constants, operators, keywords, arguments, displays: nothing below reads them
        if kind is Expr or kind is Assign:
            note_addition(node, bound)
        if (kind is ast.Return or kind is ast.Yield) and node.value is not None:  # type: ignore[attr-defined]
            handed_back.update(n.id for n in _directly_held(node.value) if type(n) is Name)  # type: ignore[attr-defined]
            continue
        if kind in BINDING_KINDS:
            note_binding(node, bound, direct)
            if kind is ast.NamedExpr:
                unordered.add(id(node.value))  # type: ignore[attr-defined]  # `:=` in a test the walker reads first
        if kind is Attribute:
            attr = node.attr  # type: ignore[attr-defined]
            attrs.add(attr)
            if attr == "real" or attr == "imag":
                flags.add("partial-view")
            if attr in semantics.TENSOR_USAGE_METHODS and _keyed(node.value) is not None:  # type: ignore[attr-defined]
                tested.add(_keyed(node.value))  # type: ignore[arg-type, attr-defined]
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
            elif name in ("isinstance", "is_tensor") and node.args and _keyed(node.args[0]) is not None:  # type: ignore[attr-defined]
                tested.add(_keyed(node.args[0]))  # type: ignore[arg-type, attr-defined]  # `isinstance(d["k"], torch.Tensor)`
            if name in PARTIAL_VIEW_CALLS:
                flags.add("partial-view")
            if name in semantics.GATHER_METHODS:
                flags.add("advanced-subscript")  # `x.index_select(0, rows)`, `torch.gather(...)`: a gathered copy
            if name[-1:] == "_":
                flags.add("inplace-call")
            if name in ("max", "min") and type(func) is Name and node.args:  # type: ignore[attr-defined]
                flags.add("builtin-compare")  # `max(a, b)`, `max(t)`: Python compares what it is given
            if (name == "any" or name == "all") and type(func) is Name and len(node.args) == 1:  # type: ignore[attr-defined]
                # `any(v > 0 for v in t)`, `any(mask)`: Python asks each item's truth value.
                argument = node.args[0]  # type: ignore[attr-defined]
                flags.add("truth-test")
                tests.append(argument.elt if type(argument) in (ast.GeneratorExp, ast.ListComp) else argument)  # type: ignore[attr-defined]
            if name in semantics.HOST_SCALAR_METHODS and type(func) is Attribute and not node.args:  # type: ignore[attr-defined]
                scalar_reads.append(func.value)  # type: ignore[attr-defined]
            elif name in semantics.HOST_SCALAR_BUILTINS and type(func) is Name and len(node.args) == 1 \
                    and type(node.args[0]) is not ast.Starred and not node.keywords:  # type: ignore[attr-defined]
                scalar_reads.append(node.args[0])  # type: ignore[attr-defined]
            elif name in semantics.HOST_BOOL_READS:  # `torch.equal(a, b)`, `a.allclose(b)`: a Python bool
                scalar_reads.extend((*node.args, *((func.value,) if type(func) is Attribute else ())))  # type: ignore[attr-defined]
            elif name == "range" or name == "arange":  # a tensor read as an int: `range(t)`, `torch.arange(t)`
                scalar_reads.extend(a for a in (*node.args, *(k.value for k in node.keywords))  # type: ignore[attr-defined]
                                    if type(a) is not ast.Constant and type(a) is not ast.Starred)
            elif name in semantics.SCALAR_KEYWORDS:  # `g.sub(w, alpha=proj)`: a Python scalar
                scalar_reads.extend(k.value for k in node.keywords if k.arg == semantics.SCALAR_KEYWORDS[name])  # type: ignore[attr-defined]
            elif name in semantics.HOST_INT_PARAMETERS:  # `flash_attn_varlen_func(..., lens.max(), lens.max())`
                scalar_reads.extend(a for a in (*node.args, *(k.value for k in node.keywords))  # type: ignore[attr-defined]
                                    if type(a) is not ast.Constant and type(a) is not ast.Starred)
            elif name in host_syncs.ERROR_CHECKING_LINALG_NAMES:  # `torch.linalg.inv(a)`, `a.inverse()`: error codes read
                given = node.args[0] if node.args else (func.value if type(func) is Attribute else None)  # type: ignore[attr-defined]
                if given is not None and type(given) is not ast.Starred:
                    scalar_reads.append(given)
            elif name in _SIZE_CALL_NAMES:  # sizes read as ints: `pred.view(natoms.sum(), 3)`, `torch.zeros(n.max())`
                scalar_reads.extend(a for a in node.args  # type: ignore[attr-defined]
                                    if type(a) is not ast.Constant and type(a) is not ast.Starred and type(a) is not ast.UnaryOp)
            if type(func) is Attribute:
                if (name in semantics.STORING_METHODS and retention.receiver(func.value, name)) \
                        or name in retention.retaining_methods:
                    flags.add("retains")
                    stored.extend(call_arguments(node))
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
                if name == "repeat" and makes_unit_dims(inner):
                    flags.add("repeat-unit-dims")  # `mask.unsqueeze(1).repeat(1, c, 1, 1)`, `x[:, None].repeat(1, n)`
                if name == "contiguous" and (
                    (type(inner) is Attribute and inner.attr in semantics.TRANSPOSING_ATTRIBUTES)
                    or (type(inner) is Call and callee_name(inner.func) in semantics.TRANSPOSING_METHODS)
                ):
                    flags.add("transposed-contiguous")
                elif name == "to" and _names_cpu(node):  # type: ignore[arg-type]
                    flags.add("to-cpu")
                elif name == "numpy" and any(k.arg == "force" for k in node.keywords):  # type: ignore[attr-defined]
                    flags.add("numpy-force")
            elif name in retention.retaining_functions:
                flags.add("retains")
                stored.extend(call_arguments(node))
        elif kind is ast.FormattedValue:
            scalar_reads.append(node.value)  # type: ignore[attr-defined]  # `f"{loss:.3f}"` formats the value on the host
        elif kind is ast.Slice:
            # `x[:, :lengths.max()]`: a slice bound is read as an int.
            scalar_reads.extend(b for b in (node.lower, node.upper, node.step)  # type: ignore[attr-defined]
                                if b is not None and type(b) is not ast.Constant
                                and not (type(b) is ast.UnaryOp and type(b.operand) is ast.Constant))  # type: ignore[attr-defined]
        elif kind is Subscript:
            flags.add("partial-view")
            if sliced_conversion(node):
                flags.add("converted-slice")  # `self.pos_freqs.to(device)[a:b]`
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
                    if (name in semantics.HAS_INPLACE_TWIN or name in semantics.DISCARDABLE_CONVERSIONS
                            or name in semantics.DISCARDABLE_VIEWS) and type(value.func) is Attribute:
                        flags.add("twin-statement")
                        twins.append(value.func)
                    elif type(value.func) is Name:
                        own_calls.append(name)  # `random_weight(shape)` as a statement (`purity.makes_only`)
        elif kind is Assign:
            value = node.value  # type: ignore[attr-defined]
            if any(type(target) is ast.Tuple or type(target) is ast.List for target in node.targets):  # type: ignore[attr-defined]
                flags.add("partial-view")  # unpacking a tensor iterates it
                for target in node.targets:  # type: ignore[attr-defined]
                    if type(target) is ast.Tuple or type(target) is ast.List:  # (`a = b, c = x` binds `a` to `x` itself)
                        note_source(target, value, sources)
                        _note_slots(target, value, slots)
            if type(value) is Call and callee_name(value.func) in semantics.OUT_OF_PLACE_UPDATE_METHODS:
                flags.add("update-assigned")  # `buf = buf.index_copy(...)`, `k = self.k = torch.index_add(self.k, ...)`
            if len(node.targets) == 1 and type(node.targets[0]) is Name and _strided_contiguous(value):  # type: ignore[attr-defined]
                flags.add("strided-contiguous-assign")
            for target in node.targets:  # type: ignore[attr-defined]
                if type(target) is Subscript:
                    if _keyed(target) is not None:
                        tested.add(_keyed(target))  # type: ignore[arg-type]
                    root = _root_name(target)
                    if root is not None:
                        written_roots.append(root)  # `flat[:3] = 0`
                    if chain_has(target, _maybe_copy_node):
                        flags.add("inplace-on-maybe-copy")  # `w.T.contiguous()[0] = 1`
                    if type(target.value) is Name:  # type: ignore[attr-defined]
                        keyed.append((target.value.id, value))  # type: ignore[attr-defined]  # a dict the function may return
                if type(target) is Subscript and (retention.container(target.value) or retention.receiver(target.value, "__setitem__")):
                    flags.add("retains")
                    stored.append(value)
                elif type(target) is Attribute and type(target.value) is Name and target.value.id == "self":  # type: ignore[attr-defined]
                    stored.append(value)  # `self.last_logits = logits[:, -1]` (`StoreQuestions._store_events`)
                elif type(target) is Attribute and target.attr == "data":  # type: ignore[attr-defined]
                    stored.append(value)
                elif type(target) is Attribute and (root := _root_name(target.value)) is not None:  # type: ignore[attr-defined]
                    fields_set.append((root, value))  # `hyps[i].y_sequence = v` (`StoreQuestions._handed_back`)
        elif kind is ast.AugAssign:
            root = _root_name(node.target)  # type: ignore[attr-defined]
            if root is not None:
                written_roots.append(root)  # `flat += 1`, `flat[0] *= 2`
            if type(node.target) is Subscript and chain_has(node.target, _maybe_copy_node):  # type: ignore[attr-defined]
                flags.add("inplace-on-maybe-copy")  # `x.float()[0] += 1`
            value = node.value  # type: ignore[attr-defined]
            if type(node.op) is ast.Add and type(value) is Name:  # type: ignore[attr-defined]
                added_names.add(value.id)  # type: ignore[attr-defined]  # `hypotheses += current_hypotheses`
            if type(node.op) is ast.Add and type(node.target) is Name and (type(value) is ast.Tuple or type(value) is ast.List):  # type: ignore[attr-defined]
                # `raw += (logits[:, -1],)`: a sequence the function may return, grown like an `append`
                keyed.extend((node.target.id, e) for e in value.elts if type(e) is not ast.Starred)  # type: ignore[attr-defined]
        elif kind in _TRUTH_NODES or (kind is ast.UnaryOp and type(node.op) is ast.Not):  # type: ignore[attr-defined]
            if not _host_truth(node):
                flags.add("truth-test")
                tests.append(node if kind is ast.BoolOp or kind is ast.UnaryOp else node.test)  # type: ignore[attr-defined]
        elif kind is ast.comprehension:
            flags.add("partial-view")  # iterating a tensor yields views of its rows
            note_source(node.target, node.iter, sources)  # type: ignore[attr-defined]
            comprehended.update(id(n) for n in preorder(node.iter))  # type: ignore[attr-defined]  # (`enumerate(xs)`: `xs`)
            for test in node.ifs:  # type: ignore[attr-defined]
                if not _host_value(test):
                    flags.add("truth-test")
                    tests.append(test)
        elif kind is ast.For or kind is ast.AsyncFor:
            flags.add("partial-view")
            note_source(node.target, node.iter, sources)  # type: ignore[attr-defined]
            if _dead_target_rebinding(node) is not None:
                flags.add("dead-loop-rebind")
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            bound.setdefault(node.name, []).append(PLAIN_PARAMETER)  # type: ignore[attr-defined]  # `def closure():` (see `tensor_may_be`)
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
            if tensors is not None and may_be_hooked(node.name, registered_hooks(tensors.index.tree, tensors.index.memo, tensors.index.source)):  # type: ignore[attr-defined]
                for arg in (*arguments.posonlyargs, *arguments.args):
                    bound.setdefault(arg.arg, []).append(PARAMETER)  # what PyTorch passes a hook (`hooks.hook_inputs`)
            if tensors is not None:
                # Its callers here pass its unannotated parameters (not a method's `self`), or its docstring
                # types them: the walker may know anything of them.
                filled = tensors.called.get(id(node), frozenset())
                documented = _docstring_mentions_tensors(node)
                arguments = node.args  # type: ignore[attr-defined]
                for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
                    if arg.annotation is None and (documented or arg.arg in filled):
                        bound.setdefault(arg.arg, []).append(None)
                    elif arg.arg in filled:
                        bound.setdefault(arg.arg, []).append(PASSED_PARAMETER)  # a view its callers pass moves over
            for decorator in node.decorator_list:  # type: ignore[attr-defined]
                target = decorator.func if type(decorator) is Call else decorator
                if callee_name(target) in ("cache", "lru_cache"):
                    flags.add("cached-def")
                    cached_returns.extend(n.value for n in ast.walk(node) if type(n) is ast.Return and n.value is not None)  # type: ignore[attr-defined]
    # Loop targets and unpacked names: items of what they are taken from; for the tensor questions, at each
    # use only the assignments made before it.
    itemised = with_elements(bound, sources, parameters, frozenset(comprehended), slots) if tensors is not None and sources else bound

    def before(node: ast.AST) -> Bindings:
        return _Before(itemised, node, unordered)  # type: ignore[return-value]

    judged: list[bool] = []

    def hot() -> bool:
        if not judged:
            judged.append(cold is None or not cold())
        return judged[0]

    if tests and hot() and (tensors is None or any(itself_may_be_tensor(v, before(v), tensors) or _keyed(v) in tested
                                                   for test in tests for v in _tested(test))):
        flags.add("device-truth-test")
    if subscripts and hot() and (tensors is None or any(
        itself_may_be_tensor(s.value, before(s), tensors) and any(tensor_may_be(e, before(s), tensors) for e in index_elements(s.slice))  # type: ignore[attr-defined]
        for s in subscripts
    )):
        flags.add("mask-subscript")
    if made_contiguous and (tensors is None or any(not built_here(r, before(r), tensors) and contiguous_may_be(r, before(r), tensors) for r in made_contiguous)):
        flags.add("contiguous-of-contiguous")
    if converted and (tensors is None or any(tensor_may_be(value, before(value), tensors) for value in converted)):
        flags.add("tensor-conversion-chain")
    if (accumulated or keyed) and any(r not in handed_back for r, _ in (*accumulated, *keyed)):
        # A list read after the loop that fills it (`torch.cat(bank)`), as one returned is: a superset of what
        # `Facts._accumulating_loop` reads (any name some call is given).
        handed_back = handed_back | _passed_names(nodes)
    if accumulated:
        # A list the function returns (or yields), filled by `append`: what a loop adds outlives its iteration
        # (`Facts._accumulating_loop` reads the loop and the list; this is a superset).
        for receiver, call in accumulated:
            if receiver in handed_back:
                stored.extend(call_arguments(call))
    for receiver, value in keyed:
        if receiver in handed_back:
            stored.append(value)  # `index[key] = h[0, 0]` in a loop, `index` returned (`Facts._accumulating_loop`)
    if fields_set:
        # Objects the function may hand back (a superset of `StoreQuestions._handed_back`: returned, added to a list,
        # given to a call, or a loop's item of any such name).
        leaving = handed_back | added_names | _passed_names(nodes) | _loop_items(nodes)
        stored.extend(value for root, value in fields_set if root in leaving and root != "self" and root != "cls")
    if stored or cached_returns:
        if stored and (tensors is None or any(partial_may_be(value, itemised, tensors) for value in stored
                                              if not part_of_self(value, itemised, tensors))):
            flags.add("retains-view")
        if cached_returns and (tensors is None or any(partial_may_be(value, itemised, tensors) for value in cached_returns)):
            flags.add("cached-returns-view")
    if chained_stores and (tensors is None or any(gathered_in_chain(r, before(r), tensors, frozenset(listed), frozenset(narrowed))
                                                  for r in chained_stores)):
        flags.add("chained-subscript-store")
    if scalar_reads and hot() and (tensors is None or any(itself_may_be_tensor(value, before(value), tensors) or _keyed(value) in tested
                                                           for value in scalar_reads)):
        flags.add("tensor-scalar-read")
    if twins and (tensors is None or any(twin_may_be_tensor(func, before(func), tensors) for func in twins)):
        flags.add("tensor-twin-statement")
    if own_calls and (tensors is None or any(makes_only(callgraph_of(tensors.index), name) for name in own_calls)):
        flags.add("tensor-twin-statement")  # a function of the module that only makes what it returns
    # A subscript or augmented assignment is reported only through `copy_of`: a conversion of a named tensor.
    if (inplace_roots or written_roots) and not calls.isdisjoint(semantics.MAYBE_COPY_METHODS) and (
            any(chain_has(ast.Name(id=root), _maybe_copy_node, bound, sources) for root in inplace_roots)
            or any(chain_has(ast.Name(id=root), converts_a_name(bound, tensors), bound, sources) for root in written_roots)):
        flags.add("write-into-maybe-copy")
    if inplace_roots and "advanced-subscript" in flags and any(
            chain_has(ast.Name(id=root), _gather_node, bound, sources) for root in inplace_roots):
        flags.add("inplace-on-gathered-name")
    return features


def _dead_target_rebinding(loop: ast.AST) -> Optional[ast.Assign]:
    """`for p in params: p = p * 0.9` where nothing after the assignment reads `p` again: the loop variable is rebound
    and dropped, and what it held is unchanged (VL205)."""
    names = {n.id for n in ast.walk(loop.target) if type(n) is ast.Name}  # type: ignore[attr-defined]
    return _dead_rebinding_in(loop.body, names, [])  # type: ignore[attr-defined]


def _dead_rebinding_in(body: list[ast.stmt], names: set[str], after: list[ast.stmt]) -> Optional[ast.Assign]:
    """In `body` (or an `if` block in it, `after` being what runs after that block in the iteration)."""
    for i, statement in enumerate(body):
        later = [*body[i + 1:], *after]
        if type(statement) is ast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is ast.Name \
                and statement.targets[0].id in names:
            name = statement.targets[0].id
            if not any(type(n) is ast.Name and n.id == name for statement_after in later for n in ast.walk(statement_after)):
                return statement
        elif type(statement) is ast.If:
            found = _dead_rebinding_in(statement.body, names, later)
            if found is not None:
                return found
    return None


def _strided_contiguous(value: ast.AST) -> bool:
    """`x[..., :-1, :].contiguous()`, `x[:, 1:].contiguous()`, `x.transpose(1, 2).contiguous()` (VL306's copies)."""
    if not (type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr == "contiguous"  # type: ignore[attr-defined]
            and not value.args and not value.keywords):  # type: ignore[attr-defined]
        return False
    receiver = value.func.value  # type: ignore[attr-defined]
    if type(receiver) is ast.Call:
        return type(receiver.func) is ast.Attribute and receiver.func.attr in ("transpose", "permute", "t", "mT")  # type: ignore[attr-defined]
    if type(receiver) is ast.Name:
        return True  # `query.contiguous()`: whether `query` holds a transpose is the analysis's to say
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


def _host_value(node: ast.AST) -> bool:
    """A test that is a plain Python bool whatever its operands: a constant, or a comparison
    with `is`/`is not`/`in`/`not in` (the walker's value for these is a host value)."""
    kind = type(node)
    if kind is ast.Constant:
        return True
    if kind is ast.Compare:
        return any(isinstance(op, HOST_COMPARISONS) for op in node.ops)  # type: ignore[attr-defined]
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
    if chain_has(receiver, _maybe_copy_node):
        flags.add("inplace-on-maybe-copy")  # `x.float().add_(1)`, `x.reshape(-1)[0].zero_()`
    if chain_has(receiver, _gather_node):
        flags.add("inplace-on-gather")  # `x.index_select(0, rows).add_(1)`, `buf[idx].zero_()`
    if _advanced_in_chain(receiver):
        flags.add("inplace-on-subscript")
    root = _root_name(receiver)  # `picked[0].view(-1)` -> `picked`
    if root is not None:
        flags.add("inplace-on-name")
    return root


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


def _gather_node(node: ast.AST) -> bool:
    """A gathered copy: a subscript with a maybe-advanced index, or `index_select`/`gather`/`masked_select`/`take`."""
    kind = type(node)
    if kind is ast.Subscript:
        return maybe_advanced(node.slice)  # type: ignore[attr-defined]
    return kind is ast.Call and callee_name(node.func) in semantics.GATHER_METHODS  # type: ignore[attr-defined]


def _names_cpu(call: ast.Call) -> bool:
    """`.to("cpu")`, `.to(device="cpu")`, `.to(torch.device("cpu"))`."""
    arguments = [*call.args, *(k.value for k in call.keywords if k.arg == "device")]
    for argument in arguments:
        if type(argument) is ast.Call and argument.args:
            argument = argument.args[0]
        if type(argument) is ast.Constant and argument.value == "cpu":  # type: ignore[attr-defined]
            return True
    return False


def _keyed(node: ast.AST) -> Optional[str]:
    """`d["k"]` as `Evaluator` narrows it (`tree.keyed_reference`), else None."""
    if type(node) is not ast.Subscript or type(node.slice) is not ast.Constant or not isinstance(node.slice.value, str):  # type: ignore[attr-defined]
        return None
    base = dotted(node.value)  # type: ignore[attr-defined]
    return f"{base}[{node.slice.value!r}]" if base is not None else None  # type: ignore[attr-defined]


def calls(*names: str) -> Needs:
    """Needs: a call to any of these names."""
    return tuple(((("call", name),) for name in sorted(names)))


def flag(name: str) -> Atom:
    return ("flag", name)


def _loop_items(nodes: Iterable[ast.AST]) -> set[str]:
    """The names `for` loops of the segment bind (`h` of `for h in hyps`, of `for i, h in enumerate(hyps)`)."""
    return {n.id for node in nodes if type(node) is ast.For  # type: ignore[attr-defined]
            for n in ast.walk(node.target) if type(n) is ast.Name}  # type: ignore[attr-defined]


def _passed_names(nodes: Iterable[ast.AST]) -> set[str]:
    """The names some call of the segment is given as an argument (`torch.cat(bank)`)."""
    return {a.id for node in nodes if type(node) is ast.Call  # type: ignore[attr-defined]
            for a in (*node.args, *(k.value for k in node.keywords)) if type(a) is ast.Name}  # type: ignore[attr-defined]


# The last names of `semantics.SIZE_ARGUMENT_METHODS` and `SIZE_ARGUMENT_FUNCTIONS` (a superset of what VL401 asks).
_SIZE_CALL_NAMES = semantics.SIZE_ARGUMENT_METHODS | {name.rsplit(".", 1)[-1] for name in semantics.SIZE_ARGUMENT_FUNCTIONS}


def _directly_held(node: ast.AST) -> list[ast.AST]:
    """`node` and the items of the tuples, lists and dicts it displays and of the objects it builds (`return feats, n`,
    `return Output(preds=feats)`): what a return hands back, as `Facts._accumulating_loop` reads it."""
    kind = type(node)
    if kind is ast.IfExp:
        return [*_directly_held(node.body), *_directly_held(node.orelse)]  # type: ignore[attr-defined]
    if kind is ast.Tuple or kind is ast.List:
        return [n for e in node.elts for n in _directly_held(e)]  # type: ignore[attr-defined]
    if kind is ast.Dict:
        return [n for e in node.values for n in _directly_held(e)]  # type: ignore[attr-defined]
    if kind is ast.Call and type(node.func) is ast.Name and node.func.id[:1].isupper():  # type: ignore[attr-defined]
        arguments = [*node.args, *(k.value for k in node.keywords)]  # type: ignore[attr-defined]
        return [node, *(n for a in arguments for n in _directly_held(a.value if type(a) is ast.Starred else a))]
    return [node]
