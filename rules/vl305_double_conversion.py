"""VL305: a host tensor moved to the device and then cast there: `x.cuda().half()`."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from viewlint.analysis import semantics
from viewlint.diagnostics import Applicability
from viewlint.rule import Rule

# Factories whose default dtype is float32 (a `.float()` after them converts nothing).
_FLOAT_FACTORIES = frozenset({"torch.tensor", "torch.full", "torch.empty", "torch.zeros", "torch.ones", "torch.rand", "torch.randn", "torch.linspace", "torch.logspace", "torch.eye"})
# Factories whose default dtype is int64 for integer data (a `.long()` after them converts nothing).
_INT_FACTORIES = frozenset({"torch.full", "torch.arange", "torch.randint", "torch.randperm", "torch.tensor", "torch.tril_indices", "torch.triu_indices"})
_DEVICE_NAME_HINTS = ("device", "dev")


class DoubleConversion(Rule):
    """
    ## What it does
    Flags a tensor known to be on the host (built without `device=`, a `.cpu()` result,
    `torch.from_numpy(...)`) that is moved to the device and *then* cast there:
    `x.cuda().half()`, `x.to(device).float()`, `x.to("cuda").to(torch.bfloat16)`.

    It does not flag the other orders, which the fused call does not improve: a cast
    followed by a move (`x.float().to(device)`) and a move to the host followed by a cast
    (`x.cpu().float()`) run exactly the steps that `.to(device=…, dtype=…)` runs
    internally (for blocking copies PyTorch converts on the host, see `copy_kernel_cuda`).
    It also stays silent on `non_blocking=True` moves (the fused call then converts on the
    device too), on casts to a dtype it cannot read, and on casts that a factory's default
    dtype makes no-ops (`torch.arange(n).cuda().long()`).

    ## Why it matters
    `x.cuda().half()` first allocates a device copy of `x` in its *old* dtype, transfers
    it, launches a conversion kernel, and allocates a second device tensor for the result:
    two device allocations and the full old-dtype size over the bus. A blocking
    `x.to(device="cuda", dtype=torch.half)` converts on the host and transfers the result
    once: one device allocation, no temporary on the device.

    ## Example
    ```python
    pixels = torch.from_numpy(batch).cuda().half()
    ```

    ## Fix
    ```python
    pixels = torch.from_numpy(batch).to(device="cuda", dtype=torch.half)
    ```
    Fix safety: safe (same values, dtype and device). Offered when both the device and
    the dtype are written out (`.cuda()`, `.to(dev)`, `.half()`, `.to(torch.bfloat16)`)
    and `torch` is imported under that name. When the cast widens (`uint8` to `float32`),
    the transfer grows: moving first and casting on the device may then be the faster
    choice, so review the flagged line rather than applying blindly.
    """

    code = "VL305"
    name = "double-conversion"
    summary = "`x.cuda().half()`: a device temporary in the old dtype; `.to(device=…, dtype=…)` converts once"
    fix_applicability = Applicability.SAFE
    triggers = (".cuda(", ".to(")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        dtype = self._cast_dtype(node, func.attr.value)
        if dtype is None:
            return
        move = func.value
        device = self._device_move(move)
        if device is None:
            return
        source = move.func.value  # type: ignore[attr-defined]
        value = self.facts.value_of(source)
        if not (value.is_tensor and value.cpu):
            return  # the move may be a no-op: only one conversion happens
        if self._default_dtype_matches(source, dtype):
            return
        facts = self.facts
        text = facts.short_source(node)
        edits: tuple[tuple[cst.CSTNode, str], ...] = ()
        if facts.index.aliases.get("torch") == "torch":
            edits = ((node, f"{facts.module.code_for_node(source)}.to(device={device}, dtype={dtype})"),)
        self.report(
            node,
            f"`{text}` copies `{facts.short_source(source)}` to the device in its old dtype, then converts it there: "
            f"a device temporary and a second kernel",
            fix_message=f"move and convert in one call: `.to(device={device}, dtype={dtype})`",
            edits=edits,
        )

    def _cast_dtype(self, node: cst.Call, method: str) -> Optional[str]:
        """The target dtype's source text for `.half()` / `.to(torch.half)` / `.to(dtype=torch.half)`."""
        if method in semantics.DTYPE_CAST_METHODS:
            return semantics.CAST_METHOD_DTYPES[method] if not node.args else None
        if method != "to" or len(node.args) != 1:
            return None
        arg = node.args[0]
        if arg.keyword is not None and arg.keyword.value != "dtype":
            return None
        qualified = self.facts.qualify(arg.value) or ""
        if qualified.count(".") == 1 and qualified.startswith("torch.") and qualified.split(".")[1] in semantics.DTYPE_NAMES:
            return self.facts.module.code_for_node(arg.value)
        return None

    def _device_move(self, node: cst.BaseExpression) -> Optional[str]:
        """The device's source text when `node` is `x.cuda()` or `x.to(<a device>)` (blocking), else None."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
            return None
        method = node.func.attr.value
        if any(arg.keyword is not None and arg.keyword.value == "non_blocking" for arg in node.args):
            return None
        if method == "cuda":
            return '"cuda"' if not node.args else None
        if method != "to" or len(node.args) != 1:
            return None
        arg = node.args[0]
        if arg.keyword is not None and arg.keyword.value != "device":
            return None
        return self._device_text(arg.value)

    def _device_text(self, node: cst.BaseExpression) -> Optional[str]:
        text = self.facts.module.code_for_node(node)
        if isinstance(node, cst.SimpleString):
            device = node.value.strip("'\"")
            return text if device.startswith(("cuda", "xpu", "npu", "mps")) else None
        qualified = self.facts.qualify(node) or ""
        if isinstance(node, cst.Call) and qualified == "torch.device" and node.args and isinstance(node.args[0].value, cst.SimpleString):
            return text if node.args[0].value.value.strip("'\"").startswith(("cuda", "xpu", "npu", "mps")) else None
        name = node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else ""
        if name.lower().endswith(_DEVICE_NAME_HINTS) and "cpu" not in name.lower():
            return text  # `device`, `self.device`, `x.device`, `target_device`
        return None

    def _default_dtype_matches(self, source: cst.BaseExpression, dtype: str) -> bool:
        """`torch.arange(n).cuda().long()`: the factory's default dtype is already the target."""
        if not isinstance(source, cst.Call):
            return False
        qualified = self.facts.qualify(source.func) or ""
        if any(arg.keyword is not None and arg.keyword.value == "dtype" for arg in source.args):
            return False
        return (qualified in _FLOAT_FACTORIES and dtype in ("torch.float32", "torch.float")) or (
            qualified in _INT_FACTORIES and dtype in ("torch.int64", "torch.long")
        )
