"""What chains of subscripts, views and conversions may do, judged on `ast` for the prefilter: gather a copy
(`buf[idx][0] = v`), convert a name into a copy (`flat = x.flatten()`), alias a sequence that indexes by gathering.
Supersets of what the walker decides, like every judge the prefilter asks (`viewlint.analysis.tensor_context`)."""

from __future__ import annotations

import ast
from typing import Callable, Optional

from viewlint.analysis import semantics
from viewlint.analysis.bindings import COUNTER, PARAMETER, PLAIN_PARAMETER, Bindings, Element, Held
from viewlint.analysis.nodes import callee_name, dotted
from viewlint.analysis.tensor_context import (FRESH_RESULT_CALLS, HOST_ATTRIBUTES, HOST_RESULT_CALLS,
                                              ITERATING_BUILTINS, TENSOR_MAKING_METHODS, TensorContext, built_here,
                                              given_tensor_arguments, itself_may_be_tensor, tensor_may_be)


# Methods that may give a tensor or a sequence of them whatever they are called on (if it reads as a tensor).
_ALIAS_SEQUENCE_METHODS = TENSOR_MAKING_METHODS | {"tolist", "topk", "sort", "max", "min", "median", "mode", "kthvalue",
                                                    "nonzero", "unique", "where"}


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
    if kind is Element:
        source = node.source  # type: ignore[attr-defined]
        if source is COUNTER or (type(source) is ast.Call and type(source.func) is ast.Name and source.func.id == "range"):  # type: ignore[attr-defined]
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
        if called in HOST_RESULT_CALLS or called in ("int", "float", "round", "abs", "bool"):
            return False
        # A function of an imported module other than torch and NumPy (`fx.range_constexpr(n)`, `tl.arange(...)`):
        # unknown to the walker, unless it is a method that makes tensors or sequences of them.
        return not (type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id in context.aliases
                    and not context.tensor_module(func.value.id) and called not in _ALIAS_SEQUENCE_METHODS)
    return kind is not ast.JoinedStr and kind is not ast.Compare and kind is not ast.BoolOp


def twin_may_be_tensor(func: ast.AST, bound: Bindings, context: TensorContext) -> bool:
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
    if type(receiver) is ast.Call and type(receiver.func) is ast.Attribute and semantics.inplace_twin(receiver.func.attr):  # type: ignore[attr-defined]
        return True  # `exp_avg.mul_(beta1).add(...)`: an in-place twin returns its tensor
    return itself_may_be_tensor(receiver, bound, context)


_CHAIN_VIEW_ATTRIBUTES = semantics.VIEW_ATTRIBUTES | semantics.AMBIGUOUS_VIEW_ATTRIBUTES


def gathered_in_chain(node: ast.AST, bound: Bindings, context: TensorContext, listed: frozenset[str],
                       narrowed: frozenset[str] = frozenset()) -> bool:
    """A subscript the walker may read as a gather (`Evaluator.index_kind`) in the receiver chain of an
    assignment target, through the views it follows (VL202): subscripts, view attributes (`.T`, `.real`)
    and view methods (`.view(...)`, `.transpose(...)`). A subscript of a list or dict the function builds
    (`built_here`) is no gather, since `index_kind` never reads a container receiver as gathered
    (`rows = [[None] * n for _ in range(m)]; rows[i][j] = v`); `narrowed`: names an `isinstance` test may
    turn into something else."""
    for _ in range(64):
        kind = type(node)
        if kind is ast.Subscript:
            receiver = node.value  # type: ignore[attr-defined]
            built = type(receiver) is ast.Name and receiver.id not in narrowed and built_here(receiver, bound, context)  # type: ignore[attr-defined]
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


def converts_a_name(bound: Bindings, tensors: Optional[TensorContext]) -> Callable[[ast.AST], bool]:
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
        return given_tensor_arguments(node, tensors) or tensor_may_be(func.value, bound, tensors)

    return converts


def chain_has(node: ast.AST, made_by: Callable[[ast.AST], bool], bound: Optional[Bindings] = None,
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
        if kind is ast.Attribute and node.attr in HOST_ATTRIBUTES:  # type: ignore[attr-defined]
            return False  # `x.shape`, `x.dtype`: metadata, not the tensor
        if kind is ast.Subscript or kind is ast.Attribute or kind is ast.Starred:
            node = node.value  # type: ignore[attr-defined]
        elif kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            called = callee_name(func)
            if called in HOST_RESULT_CALLS or called in FRESH_RESULT_CALLS:
                return False  # `int(n.item())`, `x.size(0)`: host values; `x.new_zeros(...)`, `x.clone()`: fresh tensors
            if type(func) is ast.Name:
                # What `zip(a, b)` or `enumerate(a)` yields comes from their arguments; what another function
                # returns is its own.
                return called in ITERATING_BUILTINS and any(chain_has(a, made_by, bound, sources, seen) for a in node.args)  # type: ignore[attr-defined]
            arguments = node.args[:1]  # type: ignore[attr-defined]
            if any(chain_has(a, made_by, bound, sources, seen) for a in arguments):
                return True
            if type(func) is not ast.Attribute:
                return False
            node = func.value
        elif kind is ast.IfExp:
            return chain_has(node.body, made_by, bound, sources, seen) \
                or chain_has(node.orelse, made_by, bound, sources, seen)  # type: ignore[attr-defined]
        elif kind is ast.NamedExpr:
            node = node.value  # type: ignore[attr-defined]
        elif kind is ast.ListComp or kind is ast.GeneratorExp:
            node = node.elt  # type: ignore[attr-defined]  # what each item is: a loop over the list reaches it
        elif kind is Held:
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
                    if unpacked is None or any(s is None or chain_has(s, made_by, bound, sources, seen) for s in unpacked):
                        return True
                elif value is not PARAMETER and chain_has(value, made_by, bound, sources, seen):
                    return True
            return False
        else:
            return False
    return True  # too long a chain to follow: it may
