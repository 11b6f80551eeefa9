"""Parameters re-pointed at one flat buffer: what `module.state_dict()` holds in a module that does it.

Mixed-precision and ZeRO optimizers flatten a group's parameters into one buffer and point each parameter's `.data`
at its slice (`p.data = flat[offset:offset + n].view_as(p)`, or `for p, q in zip(params, _unflatten_dense_tensors(
flat, params)): p.data = q.data`). From then on every tensor of `state_dict()` is a view of the flat buffer:
`torch.save(layer.state_dict(), path)` writes the whole buffer into each layer's file (DeepSpeed PR #1326,
transformers PR #24489). Read once per module off its `ast` (kept in the index's memo); where the module re-points
no parameter, `state_dict()` is what any unknown call gives.
"""

from __future__ import annotations

import ast
from typing import Optional

from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.nodes import dotted
from viewlint.analysis.values import Kind, Provenance, Value

# What a re-pointed parameter is made a view of: a slice, a view of one, another tensor's storage.
_VIEWING_METHODS = frozenset({"view_as", "view", "narrow", "reshape", "as_strided", "view_as_real"})


def flat_buffer(index: ModuleIndex) -> Optional[str]:
    """What this module re-points parameters at (`flat`, `self.bit16_groups_flat`, `updated_params` of `for p, q in
    zip(params, updated_params): p.data = q.data`), or None when it re-points none."""
    found = index.memo.get("re-pointed parameters", False)
    if found is False:
        found = index.memo["re-pointed parameters"] = _find(index)
    return found  # type: ignore[return-value]


def state_dict_value(buffer: str) -> Value:
    """`module.state_dict()` in a module that re-points parameters at `buffer`: a dict of views of part of it."""
    piece = Value(kind=Kind.TENSOR, provenance=Provenance.VIEW, base=buffer, origin=".data = …", partial=True,
                  why=f"a parameter this module points at a slice of `{buffer}`")
    return Value(kind=Kind.WRAPPER, wrapper="dict", elements=(piece,))


def _find(index: ModuleIndex) -> Optional[str]:
    tree = index.tree
    if tree is None or (index.source and ".data =" not in index.source):
        return None  # (asked where `state_dict()` is called: most modules never set `.data`)
    for loop in ast.walk(tree):
        if not isinstance(loop, (ast.For, ast.AsyncFor)):
            continue
        targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
        for node in ast.walk(loop):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
                    and node.targets[0].attr == "data" and isinstance(node.targets[0].value, ast.Name) \
                    and node.targets[0].value.id in targets:
                buffer = _viewed(node.value, targets)
                if buffer is not None:
                    return _zipped_source(loop, buffer) or buffer
    return None


def _zipped_source(loop: ast.AST, name: str) -> Optional[str]:
    """For `for p, q in zip(params, updated):`, the name `q` is taken from (`updated`)."""
    target, iterated = getattr(loop, "target", None), getattr(loop, "iter", None)
    if not (isinstance(target, ast.Tuple) and isinstance(iterated, ast.Call) and dotted(iterated.func) == "zip"):
        return None
    for element, argument in zip(target.elts, iterated.args):
        if isinstance(element, ast.Name) and element.id == name:
            return dotted(argument)
    return None


# Viewing methods that take a part of their receiver (not all of it, as `view_as` does).
_PART_METHODS = frozenset({"narrow", "as_strided"})


def _viewed(value: ast.AST, loop_names: set[str]) -> Optional[str]:
    """What `p.data = <value>` points `p` at, when `value` is part of another tensor: `flat[a:b].view_as(p)` (`flat`),
    `q.data` or `q` of the loop's own items (`zip(params, unflatten(flat, params))`: `q`)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _VIEWING_METHODS:
        if value.func.attr in _PART_METHODS:
            return dotted(value.func.value) or "a flat buffer"  # `flat.narrow(0, offset, n).view_as(p)`
        value = value.func.value
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
        return dotted(value.value) or "a flat buffer"
    if isinstance(value, ast.Attribute) and value.attr == "data":
        value = value.value
    if isinstance(value, ast.Name) and value.id in loop_names:
        return value.id  # (named after what the loop takes it from, where it can: `_zipped_source`)
    return None
