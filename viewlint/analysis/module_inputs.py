"""What a module's `forward` uses its parameters as, read off its libcst tree: the way tensors are used (`x.shape`,
`x[:, 0]`, an argument of a `torch` function or of a submodule), only the way host values are (`max(n, 1)`,
`x.view(b, n, d)`), only handed on (`default(v, d)`), or compared with constants (`if mode == "train":`). The flow
(`viewlint.analysis.flow`) asks here which unannotated parameters of a `forward` are its input tensors."""

from __future__ import annotations

from typing import Callable, Iterator, Optional

import libcst as cst

from viewlint.analysis import semantics as sem
from viewlint.analysis.module_index import ClassInfo, ModuleIndex
from viewlint.analysis.tree import children, descendants, dotted_name, remembered, subtree


def _host_only_parameters(function: cst.FunctionDef) -> frozenset[str]:
    """The parameters a function uses only the way host values are, directly or through a name it binds them to
    (`n = r if pos is None else pos`): given to `max`/`len`/`range`/..., indexed with an integer (`video_fhw[0]`), as a
    slice bound (`x[:, :n]`) or a size (`x.view(b, n, d)`). Tests against `None` and comparisons say nothing either way."""
    params = {p.name.value for p in function.params.params[1:]}
    aliases: dict[str, str] = {}  # name -> the parameter it is bound to (one of its arms)
    for node in descendants(function.body):
        if type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:  # type: ignore[attr-defined]
            value = node.value  # type: ignore[attr-defined]
            for arm in (value.body, value.orelse) if type(value) is cst.IfExp else (value,):
                if type(arm) is cst.Name and arm.value in params:
                    aliases[node.targets[0].target.value] = arm.value  # type: ignore[attr-defined]
    uses: dict[str, list[bool]] = {}
    for node, parent, grand in _reads(function, params | set(aliases)):
        if type(parent) is cst.Comparison or type(parent) is cst.ComparisonTarget or type(parent) is cst.IfExp:
            pass  # `pos is None`, `n < r`, an arm of what a name is bound to: neither way
        else:
            uses.setdefault(node.value, []).append(_host_use(node, parent, grand))
    found = set()
    for name in params:
        seen = uses.get(name, []) + [u for alias, to in aliases.items() if to == name for u in uses.get(alias, [])]
        if seen and all(seen):
            found.add(name)
    return frozenset(found)


def _host_use(node: cst.CSTNode, parent: Optional[cst.CSTNode], grand: Optional[cst.CSTNode]) -> bool:
    if type(parent) is cst.Arg and type(grand) is cst.Call:
        func = grand.func  # type: ignore[attr-defined]
        return (type(func) is cst.Name and func.value in _HOST_BUILTINS) or (
            type(func) is cst.Attribute and func.attr.value in sem.SIZE_ARGUMENT_METHODS)  # `x.view(b, n, d)`: a size
    if type(parent) is cst.Subscript and parent.value is node:  # type: ignore[attr-defined]
        index = parent.slice[0].slice if len(parent.slice) == 1 else None  # type: ignore[attr-defined]
        return type(index) is cst.Index and type(index.value) is cst.Integer  # type: ignore[attr-defined]
    return type(parent) is cst.Slice  # `x[:, :n]`: a bound


# How many calls down a helper's use of its parameter counts as the caller's use of what it hands it.
_HELPER_DEPTH = 3
_HOST_BUILTINS = frozenset({"max", "min", "len", "sum", "range", "list", "tuple", "sorted", "int", "float", "enumerate", "zip"})


def _reads(function: cst.FunctionDef, names: set[str]) -> Iterator[tuple[cst.Name, Optional[cst.CSTNode], Optional[cst.CSTNode]]]:
    """Each read of one of `names` in the function's body (not a store), with its parent and grandparent nodes."""
    stack: list[tuple[cst.CSTNode, Optional[cst.CSTNode], Optional[cst.CSTNode]]] = [(function.body, None, None)]
    while stack:
        node, parent, grand = stack.pop()
        if type(node) is cst.Name and node.value in names and type(parent) is not cst.AssignTarget:  # type: ignore[attr-defined]
            yield node, parent, grand  # type: ignore[misc]
        stack.extend((child, node, parent) for child in children(node))


def used_as_tensors(function: cst.FunctionDef, index: ModuleIndex, info: ClassInfo,
                     forward_of: Callable[[str], Optional[cst.FunctionDef]],
                     function_of: Callable[[str], Optional[cst.FunctionDef]] = lambda name: None,
                     depth: int = _HELPER_DEPTH) -> set[str]:
    """Names a function uses the way tensors are used: an array method or attribute (`x.shape`, `mask.any()`),
    an argument of a `torch` function (not of a factory: `torch.arange(height)` takes a size), of a submodule (`self.proj(x)`),
    or of a function of this module that uses that parameter so in turn (two calls deep: `_kldiv_forward(y_pred,
    y_true, log_target, reduction, eps)` makes tensors of the inputs it reads `.shape` of, not of the `eps` it gives
    a kernel as `float(eps)`), tensor-style indexing (`x[:, 0]`), a matrix product. Given to a submodule whose class this
    module defines (`self.pos_embed(img_shapes, txt_seq_lens)`), not where that class's `forward` uses the parameter
    only as a host value is (`max(txt_seq_lens)`, `video_fhw[0]`)."""
    by_shape, calls = remembered("tensor uses", function, lambda: _tensor_uses(function))
    found: set[str] = set(by_shape)
    for node in calls:
        func = node.func
        qualified = index.qualify(func) or ""
        receiver = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
        callee = dotted_name(func) or ""
        submodule = receiver == "self" and (func.attr.value in info.submodule_attributes or func.attr.value in info.assigned_attributes)  # type: ignore[attr-defined]
        if not (qualified.startswith("torch.") and qualified not in sem.FACTORY_FUNCTIONS or submodule or callee in index.defined_functions):
            continue
        held = info.attribute_classes.get(func.attr.value) if submodule else None  # type: ignore[attr-defined]
        forward = forward_of(held) if held in index.classes and index.classes[held].is_module else None  # type: ignore[index]
        params = [p.name.value for p in forward.params.params[1:]] if forward is not None else []
        host = remembered("host-only parameters", forward, lambda: _host_only_parameters(forward)) if forward is not None else set()
        helper = function_of(callee) if not submodule and not qualified.startswith("torch.") \
            and callee in index.defined_functions else None
        if helper is not None:
            # `default(straight_through, self.training)`: a helper that only hands its parameter on, or one that reads
            # it as a host value (`float(eps)`), says nothing of a tensor; one that uses it as one does.
            params = [p.name.value for p in (*helper.params.posonly_params, *helper.params.params)]
            host = set(params) - _helper_tensor_parameters(helper, index, forward_of, function_of, depth - 1)
        for position, arg in enumerate(node.args):
            if not isinstance(arg.value, cst.Name) or arg.star:
                continue
            parameter = arg.keyword.value if arg.keyword is not None else params[position] if position < len(params) else None
            if parameter not in host:
                found.add(arg.value.value)
    return found


def _helper_tensor_parameters(helper: cst.FunctionDef, index: ModuleIndex,
                              forward_of: Callable[[str], Optional[cst.FunctionDef]],
                              function_of: Callable[[str], Optional[cst.FunctionDef]], depth: int) -> frozenset[str]:
    """The parameters a function of the module uses as tensors (`used_as_tensors`, `depth` calls further down), once
    per module and depth."""
    if depth <= 0:
        return frozenset()
    key = ("helper tensor parameters", id(helper), depth)
    known = index.memo.get(key)
    if known is not None and known[0] is helper:  # type: ignore[index]
        return known[1]  # type: ignore[index,no-any-return]
    index.memo[key] = (helper, frozenset())  # (a recursive helper: what is being read says nothing yet)
    params = {p.name.value for p in (*helper.params.posonly_params, *helper.params.params, *helper.params.kwonly_params)}
    found = frozenset(used_as_tensors(helper, index, ClassInfo(name=""), forward_of, function_of, depth) & params)
    index.memo[key] = (helper, found)
    return found


def _tensor_uses(function: cst.FunctionDef) -> tuple[frozenset[str], tuple[cst.Call, ...]]:
    """What `used_as_tensors` reads off the function's tree alone: the names used the way tensors are by their
    shape (`x.shape`, `x[:, 0]`, `a @ b`), and the calls, whose callees the module index judges."""
    found: set[str] = set()
    calls: list[cst.Call] = []
    masks: dict[str, set[str]] = {}  # `keep = scores > t`: keep -> the names compared
    masked: list[tuple[str, cst.BaseExpression]] = []  # `scores[keep]`, `scores[scores > t]`: (name, index)
    Attribute, Call, Name, Subscript, BinaryOperation = cst.Attribute, cst.Call, cst.Name, cst.Subscript, cst.BinaryOperation
    for node in subtree(function):
        kind = type(node)  # exact types: libcst's `isinstance` runs Python code for its ABCs
        if kind is Name:
            continue
        if kind is Attribute and type(node.value) is Name and node.attr.value in sem.ARRAY_METHODS:  # type: ignore[attr-defined]
            found.add(node.value.value)  # type: ignore[attr-defined]
        elif kind is Call:
            calls.append(node)  # type: ignore[arg-type]
        elif kind is Subscript and type(node.value) is Name and len(node.slice) > 1:  # type: ignore[attr-defined]
            found.add(node.value.value)  # type: ignore[attr-defined]
        elif kind is Subscript and type(node.value) is Name and type(node.slice[0].slice) is cst.Index:  # type: ignore[attr-defined]
            masked.append((node.value.value, node.slice[0].slice.value))  # type: ignore[attr-defined]
        elif kind is cst.Assign and type(node.value) is cst.Comparison and len(node.targets) == 1 \
                and type(node.targets[0].target) is Name:  # type: ignore[attr-defined]
            masks.setdefault(node.targets[0].target.value, set()).update(_compared_names(node.value))  # type: ignore[attr-defined]
        elif kind is BinaryOperation and type(node.operator) is cst.MatrixMultiply:  # type: ignore[attr-defined]
            found.update(n.value for n in (node.left, node.right) if isinstance(n, cst.Name))  # type: ignore[attr-defined]
    for name, index in masked:
        # Indexed by a comparison of itself: a mask of its own elements, which only arrays take (`list > 0` fails).
        compared = _compared_names(index) if type(index) is cst.Comparison else \
            masks.get(index.value, set()) if type(index) is Name else set()  # type: ignore[attr-defined]
        # Indexed by a boolean tensor (`x[mask.bool()]`) or what its name says is a mask (`x[attention_mask]`): no list
        # or tuple takes a mask.
        by_mask = (type(index) is Call and type(index.func) is Attribute and index.func.attr.value == "bool"  # type: ignore[attr-defined]
                   and not index.args) or (type(index) is Name and sem.MASK_NAME.search(index.value) is not None)  # type: ignore[attr-defined]
        if name in compared or by_mask:
            found.add(name)
            if type(index) is Name:
                found.add(index.value)  # type: ignore[attr-defined]  # the mask itself: an array of booleans
    # A comparison whose result is used as an array (`target_mask = target != ignore_index`, `target_mask.sum()`): a
    # number compared gives a `bool`, which has no `.sum()`, so what it compares is an array, but for parameters whose
    # default is a number (`ignore_index=-100`): those are what the array is compared with.
    numbers = _number_defaults(function)
    for mask, compared in masks.items():
        if mask in found:
            found.update(compared - numbers)
    return frozenset(found), tuple(calls)


def _number_defaults(function: cst.FunctionDef) -> set[str]:
    """The parameters whose default is a number, a string or a bool literal."""
    found = set()
    for param in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params):
        default = param.default
        if type(default) is cst.UnaryOperation:
            default = default.expression  # type: ignore[attr-defined]  # `-100`
        if type(default) in (cst.Integer, cst.Float, cst.SimpleString) or (
                type(default) is cst.Name and default.value in ("True", "False")):  # type: ignore[union-attr]
            found.add(param.name.value)
    return found


def _compared_names(comparison: cst.Comparison) -> set[str]:
    """The names a comparison compares (`scores > thresh`: scores, thresh); none for identity and membership tests."""
    if any(type(c.operator) in (cst.Is, cst.IsNot, cst.In, cst.NotIn) for c in comparison.comparisons):
        return set()
    operands = [comparison.left, *(c.comparator for c in comparison.comparisons)]
    return {o.value for o in operands if type(o) is cst.Name}


def compared_with_constants(function: cst.FunctionDef) -> frozenset[str]:
    """Names compared with a string or an enum member (`mode == "train"`, `cache[i] == "Rep"`,
    `method == Kind.MHA`): options or containers of them, not tensors."""
    return remembered("compared with constants", function, lambda: _find_compared_with_constants(function))


def _find_compared_with_constants(function: cst.FunctionDef) -> frozenset[str]:
    found: set[str] = set()
    for node in descendants(function):
        if type(node) is cst.Comparison:
            left = node.left  # type: ignore[attr-defined]
            while isinstance(left, cst.Subscript):
                left = left.value
            if not isinstance(left, cst.Name):
                continue
            for target in node.comparisons:
                other = target.comparator
                if isinstance(other, (cst.SimpleString, cst.ConcatenatedString)) or (
                        isinstance(other, cst.Attribute) and isinstance(other.value, cst.Name) and other.value.value[:1].isupper()):
                    found.add(left.value)
    return frozenset(found)
