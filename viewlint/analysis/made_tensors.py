"""Tensors a class makes for itself: `self.<attr>` assignments that are factory calls (`torch.zeros(n, device="cuda")`,
`torch.empty(n).cuda()`), where they put the tensor and whether it is row-major. `module_index` reads every method's
assignments with it (`ClassInfo.made_tensors`)."""

from __future__ import annotations

import ast
from typing import Callable, Optional

from viewlint.analysis import semantics
from viewlint.analysis.nodes import dotted
from viewlint.analysis.values import Device


# Casts that keep where a tensor lives (`torch.from_numpy(ts).float().to(device)`).
_CASTS = ("float", "half", "bfloat16", "double", "long", "int", "bool")
# Functions that join tensors into a new one.
_JOINS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack"})


def made_tensor(value: ast.AST, qualify: Callable[[Optional[str]], Optional[str]]) -> Optional[tuple[Device, bool]]:
    """A new tensor a factory or a join makes (`torch.zeros(n, device="cuda")`, `torch.cat([a, b])`), moved or
    pinned or not (`.cuda()`, `.to(d)`, `.pin_memory()`): (where it lives; whether it is row-major); None for anything
    else."""
    moves = []  # outermost first: the first is where the tensor ends up
    while type(value) is ast.Call and type(value.func) is ast.Attribute \
            and value.func.attr in ("cuda", "to", "pin_memory", "cpu", *_CASTS):  # type: ignore[attr-defined]
        method = value.func.attr  # type: ignore[attr-defined]
        if method in _CASTS:
            value = value.func.value  # type: ignore[attr-defined]  # `.float()`: a cast, where the tensor already is
            continue
        moves.append(Device.ACCELERATOR if method == "cuda" else Device.CPU if method in ("cpu", "pin_memory")
                     else _device_literal(value.args[0] if value.args else  # type: ignore[attr-defined]
                                          next((k.value for k in value.keywords if k.arg == "device"), None)))  # type: ignore[attr-defined]
        value = value.func.value  # type: ignore[attr-defined]
    if type(value) is not ast.Call:
        return None
    qualified = qualify(dotted(value.func)) or ""  # type: ignore[attr-defined]
    if qualified == "torch.from_numpy":
        return (moves[0] if moves else Device.CPU), False  # an array's memory, in its own layout
    if qualified in _JOINS:
        # `self.pos_freqs = torch.cat([self.rope_params(...), ...], dim=1)`: a new tensor, where and in what layout
        # its pieces say.
        return (moves[0] if moves else Device.UNKNOWN), False
    if qualified not in semantics.FACTORY_FUNCTIONS:
        return None
    row_major = qualified not in semantics.NON_CONTIGUOUS_FACTORIES \
        and not any(k.arg == "memory_format" for k in value.keywords)  # type: ignore[attr-defined]
    if moves:
        return moves[0], row_major
    device = next((k.value for k in value.keywords if k.arg == "device"), None)  # type: ignore[attr-defined]
    # A factory without a device makes its tensor on the CPU.
    return (Device.CPU if device is None else _device_literal(device)), row_major


def _device_literal(node: Optional[ast.AST]) -> Device:
    """`"cpu"`: the CPU; another string (`"cuda"`, `"cuda:0"`, `"npu"`): a device; anything else: not known (as
    `CallArguments._device_expression` reads a literal)."""
    if type(node) is not ast.Constant or not isinstance(node.value, str):  # type: ignore[attr-defined]
        return Device.UNKNOWN
    return Device.CPU if node.value == "cpu" else Device.ACCELERATOR  # type: ignore[attr-defined]
