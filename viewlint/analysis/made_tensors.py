"""Tensors a class makes for itself: `self.<attr>` assignments that are factory calls (`torch.zeros(n, device="cuda")`,
`torch.empty(n).cuda()`), where they put the tensor and whether it is row-major. `module_index` reads every method's
assignments with it (`ClassInfo.made_tensors`)."""

from __future__ import annotations

import ast
from typing import Callable, Optional

from viewlint.analysis import semantics
from viewlint.analysis.nodes import dotted


def made_tensor(value: ast.AST, qualify: Callable[[Optional[str]], Optional[str]]) -> Optional[tuple[Optional[str], bool]]:
    """A new tensor a factory makes (`torch.zeros(n, device="cuda")`), moved or pinned or not (`.cuda()`, `.to(d)`,
    `.pin_memory()`): (where it lives: "cuda", "cpu" or None; whether it is row-major); None for anything else."""
    moved: Optional[str] = "unmoved"
    while type(value) is ast.Call and type(value.func) is ast.Attribute \
            and value.func.attr in ("cuda", "to", "pin_memory", "cpu"):  # type: ignore[attr-defined]
        method = value.func.attr  # type: ignore[attr-defined]
        if moved == "unmoved":
            if method == "cuda" or method == "cpu":
                moved = method
            elif method == "pin_memory":
                moved = "cpu"
            else:
                first = value.args[0] if value.args else None  # type: ignore[attr-defined]
                text = first.value if type(first) is ast.Constant and isinstance(first.value, str) else None  # type: ignore[attr-defined]
                moved = "cuda" if text is not None and text.startswith("cuda") else "cpu" if text == "cpu" else None
        value = value.func.value  # type: ignore[attr-defined]
    if type(value) is not ast.Call:
        return None
    qualified = qualify(dotted(value.func)) or ""  # type: ignore[attr-defined]
    if qualified not in semantics.FACTORY_FUNCTIONS:
        return None
    row_major = qualified not in semantics.NON_CONTIGUOUS_FACTORIES \
        and not any(k.arg == "memory_format" for k in value.keywords)  # type: ignore[attr-defined]
    if moved != "unmoved":
        return moved, row_major
    device = next((k.value for k in value.keywords if k.arg == "device"), None)  # type: ignore[attr-defined]
    if device is None:
        return "cpu", row_major  # a factory without a device makes its tensor on the CPU
    if type(device) is ast.Constant and isinstance(device.value, str):
        return ("cuda" if device.value.startswith("cuda") else "cpu" if device.value == "cpu" else None), row_major
    return None, row_major
