"""What a function does with each plain name, read off its `ast`: the attributes and methods read off it (`mask.any()`),
and where it is passed that only a tensor is taken (`torch.exp(x)`, `self.bce(x, y)`). The one reading of "used as a
tensor" by its use: the walker's lookups (`Facts.usage_of`) and the call graph's caches keyed by a tensor ask it."""

from __future__ import annotations

import ast
from typing import Iterable, Optional

from viewlint.analysis import semantics as sem
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.nodes import dotted, qualify_name


def tensor_use(name: str, usage: frozenset[str]) -> Optional[str]:
    """Why `usage` (what `attribute_reads` found for `name`) says `name` holds a tensor, or None: a method or attribute
    only tensors have (`mask.masked_fill(...)`, `idx.long()`), or a place only a tensor is taken."""
    used = usage & sem.TENSOR_USAGE_METHODS
    if used:
        return f"`{name}` is used as a tensor (`.{sorted(used)[0]}`)"
    taken = sorted(u for u in usage if u.startswith(sem.TENSOR_INPUT_MARK))
    return f"`{name}` is passed to {taken[0][len(sem.TENSOR_INPUT_MARK):]}" if taken else None


def attribute_reads(nodes: Iterable[ast.AST], index: Optional[ModuleIndex] = None,
                     layers: Optional[dict[str, str]] = None) -> dict[str, frozenset[str]]:
    """For each plain name, the attributes read off it (`mask.any()` -> {"any"}), from `ast` nodes, and where it is
    passed that only a tensor is taken (`torch.exp(x)`, `self.bce(x, y)`: `TENSOR_INPUT_MARK` and the taker; `index`
    qualifies names, `layers` are the `torch.nn` layers the function's class holds, `{attr: class}`). A name the scope
    converts into a tensor (`t = torch.tensor(t)`, `image = to_tensor(image)`) is left out: what is read off it
    after the conversion says nothing of what it held before."""
    found: dict[str, set[str]] = {}
    converted: set[str] = set()
    scopes: list[tuple[tuple[int, int], tuple[int, int], frozenset[str]]] = []  # lambdas: their span, their parameters
    local_layers: dict[str, str] = {}  # `loss_fn = nn.CrossEntropyLoss()`
    calls: list[ast.Call] = []

    def own(name: str, node: ast.AST) -> bool:  # not a lambda's parameter of that name
        # `lambda x: x.numel()` reads its own `x`, not the function's (`reduce(lambda x, y: x or y, flags)`).
        return not scopes or not any(name in names and start <= (node.lineno, node.col_offset) <= end  # type: ignore[attr-defined]
                                     for start, end, names in scopes)

    for node in nodes:
        kind = type(node)
        if kind is ast.Lambda:
            scopes.append(((node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
                           frozenset(a.arg for a in ast.walk(node.args) if type(a) is ast.arg)))  # type: ignore[attr-defined]
        elif kind is ast.Attribute and type(node.value) is ast.Name:  # type: ignore[attr-defined]
            name = node.value.id  # type: ignore[attr-defined]
            if own(name, node):
                found.setdefault(name, set()).add(node.attr)  # type: ignore[attr-defined]
        elif kind is ast.Attribute and type(node.value) is ast.Call and type(node.value.func) is ast.Attribute \
                and type(node.value.func.value) is ast.Name and node.value.func.attr in _SAME_KIND_METHODS:  # type: ignore[attr-defined]
            # `data.reshape(-1).copy_(src)`: what a tensor-only method is called on, `reshape` gives only of a tensor.
            name = node.value.func.value.id  # type: ignore[attr-defined]
            if own(name, node) and node.attr not in _SAME_KIND_METHODS:  # type: ignore[attr-defined]
                found.setdefault(name, set()).add(node.attr)  # type: ignore[attr-defined]
        elif kind is ast.Call and index is not None and node.args:  # type: ignore[attr-defined]
            calls.append(node)  # type: ignore[arg-type]
        elif kind is ast.Attribute and type(node.value) is ast.Subscript and type(node.value.value) is ast.Name \
                and type(node.value.slice) is ast.Constant and type(node.value.slice.value) is str:  # type: ignore[attr-defined]
            # `cache["end"].fill_(n)`: read as `tree.keyed_reference` spells it.
            found.setdefault(f"{node.value.value.id}[{node.value.slice.value!r}]", set()).add(node.attr)  # type: ignore[attr-defined]
        elif kind is ast.Assign:
            value = node.value  # type: ignore[attr-defined]
            if type(value) is ast.Call and value.args and type(value.args[0]) is ast.Name \
                    and _converts_to_tensor(value.func) \
                    and any(type(t) is ast.Name and t.id == value.args[0].id for t in node.targets):  # type: ignore[attr-defined]
                converted.add(value.args[0].id)
            if index is not None and type(value) is ast.Call and len(node.targets) == 1 \
                    and type(node.targets[0]) is ast.Name:  # type: ignore[attr-defined]
                built = qualify_name(index, dotted(value.func))
                if built is not None and sem.nn_module_class(built):
                    local_layers[node.targets[0].id] = built  # type: ignore[attr-defined]
    for call in calls:
        taker, taken = _tensor_inputs(call, index, layers or {}, local_layers)  # type: ignore[arg-type]
        for argument in taken:
            if type(argument) is ast.Name and own(argument.id, argument):  # type: ignore[attr-defined]
                found.setdefault(argument.id, set()).add(sem.TENSOR_INPUT_MARK + taker)  # type: ignore[attr-defined]
    return {name: frozenset(attrs) for name, attrs in found.items() if name not in converted}


def _tensor_inputs(call: ast.Call, index: ModuleIndex, layers: dict[str, str],
                   local_layers: dict[str, str]) -> tuple[str, list[ast.AST]]:
    """(what takes them, the arguments of `call` that must be tensors): the first of a torch function that takes
    only a tensor there (`torch.exp(x)`, `F.pad(x, p)`), the input of a `torch.nn` layer (`self.norm(x)`, and a
    loss's target: `self.bce(logits, labels)`; not a container's, whose first layer may take anything)."""
    name = dotted(call.func)
    if name is None:
        return "", []
    qualified = qualify_name(index, name)
    if qualified is not None and (qualified in sem.TENSOR_INPUT_FUNCTIONS or qualified.startswith("torch.nn.functional.")):
        return f"`{name}`", call.args[:1]
    held = local_layers.get(name) if "." not in name else layers.get(name[5:]) if name.startswith("self.") \
        and name.count(".") == 1 else None
    if held is None:
        return "", []
    classes = held.split("|")
    if not all(sem.nn_module_class(c) and c.split(".")[-1] not in _LAYER_CONTAINERS for c in classes):
        return "", []
    losses = all(c.endswith("Loss") for c in classes)
    return f"`{name}` (`{classes[0].split('.')[-1]}`)", call.args[:2] if losses else call.args[:1]


# Methods whose result is a tensor only where the receiver is one (a view, a conversion, an elementwise op): a
# tensor-only method called on the result says the receiver is a tensor (`x.reshape(-1).copy_(...)`). Not `values`
# and `indices`, which a dict's and a sparse tensor's share. A chain of these methods alone says nothing more than its
# first link (`y.clone().contiguous()`: a TensorDict has both).
_SAME_KIND_METHODS = (sem.VIEW_METHODS - {"values", "indices"}) | sem.MAYBE_VIEW_METHODS | sem.ELEMENTWISE_METHODS

# `torch.nn` modules whose call passes its input on to layers it holds (which may take anything).
_LAYER_CONTAINERS = frozenset({"Module", "Sequential", "ModuleList", "ModuleDict"})


def _converts_to_tensor(func: ast.AST) -> bool:
    """`torch.tensor`, `torch.as_tensor`, `torch.from_numpy`, `torch.asarray`, a `*to_tensor*` helper."""
    last = (dotted(func) or "").split(".")[-1].lower()
    return last in ("tensor", "as_tensor", "from_numpy", "asarray") or "to_tensor" in last
