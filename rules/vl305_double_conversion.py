"""VL305: a host tensor moved to the device and then cast there: `x.cuda().half()`."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from viewlint.analysis import features, semantics
from viewlint.analysis.tree import descendants
from viewlint.analysis.values import Kind
from viewlint.diagnostics import Applicability
from viewlint.rule import Rule

# Factories whose default dtype is float32, and those that always make int64.
_FLOAT_FACTORIES = frozenset({"torch.empty", "torch.zeros", "torch.ones", "torch.rand", "torch.randn", "torch.linspace", "torch.logspace", "torch.eye"})
_INT64_FACTORIES = frozenset({"torch.randint", "torch.randperm", "torch.tril_indices", "torch.triu_indices"})
# Bytes per element of each dtype name (`torch.<name>`).
_WIDTH = {
    "float64": 8, "double": 8, "int64": 8, "long": 8, "complex64": 8, "complex128": 16, "cfloat": 8, "cdouble": 16,
    "float32": 4, "float": 4, "int32": 4, "int": 4, "float16": 2, "half": 2, "bfloat16": 2, "int16": 2, "short": 2,
    "int8": 1, "uint8": 1, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1,
}
# Spellings of the same dtype.
_SAME = {"float": "float32", "double": "float64", "long": "int64", "int": "int32", "half": "float16", "short": "int16"}
_DEVICE_NAME_HINTS = ("device", "dev")


class DoubleConversion(Rule):
    """
    ## What it does
    Flags a tensor built on the host by a factory (no `device=`) that is moved to the
    device and *then* narrowed there: `torch.randn(n).cuda().half()`,
    `torch.arange(n).to(device).to(torch.int32)`, `torch.tensor(v, dtype=torch.float64).to(dev).float()`.

    It does not flag the other orders, which the fused call does not improve: a cast
    followed by a move (`x.float().to(device)`) and a move to the host followed by a cast
    (`x.cpu().float()`) run exactly the steps that `.to(device=…, dtype=…)` runs
    internally (for blocking copies PyTorch converts on the host, see `copy_kernel_cuda`).
    It also stays silent on `non_blocking=True` moves (the fused call then converts on the
    device too) and on casts to a dtype it cannot read. It fires only when the source dtype
    is known (a factory's `dtype=` or its default: `torch.randn` is float32, `torch.arange`
    of integers is int64) and the cast does not widen it: for a widening cast (`uint8`
    pixels to `float32`) moving the narrow data first and casting on the device is the
    better order. Casts that convert nothing (`torch.arange(n).cuda().long()`) are skipped.

    ## Why it matters
    `x.cuda().half()` first allocates a device copy of `x` in its *old* dtype, transfers
    it, launches a conversion kernel, and allocates a second device tensor for the result:
    two device allocations and the full old-dtype size over the bus. A blocking
    `x.to(device="cuda", dtype=torch.half)` converts on the host and transfers the result
    once: one device allocation, no temporary on the device.

    ## Example
    ```python
    noise = torch.randn(4, 64).cuda().half()
    ```

    ## Fix
    ```python
    noise = torch.randn(4, 64).to(device="cuda", dtype=torch.half)
    ```
    Fix safety: safe (same values, dtype and device) when the device is proven one: `.cuda()`,
    `.to("cuda")`, `.to(torch.device(…))`, `x.device`, or a name the analysis saw bound to one.
    A name that only looks like a device (`.to(dev)`, a parameter `device`) gets an unsafe fix
    (`--unsafe-fixes`): were it a dtype, `.to(device=dev, …)` would raise. No fix when the name
    may hold a dtype or a tensor (`dev = torch.float64`). Offered when the dtype is written out
    (`.half()`, `.to(torch.bfloat16)`) and `torch` is imported under that name. The fused call converts on the host before
    the transfer, which then moves fewer bytes because the cast narrows.
    """

    code = "VL305"
    reports_a_cost = True
    name = "double-conversion"
    summary = "`x.cuda().half()`: a device temporary in the old dtype; `.to(device=…, dtype=…)` converts once"
    fix_applicability = Applicability.SAFE

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return ((features.flag("tensor-conversion-chain"),),)  # the rule needs `x` known to be a CPU tensor

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        dtype = self._cast_dtype(node, func.attr.value)
        if dtype is None:
            return
        move = func.value
        moved = self._device_move(move)
        if moved is None:
            return
        device, proven = moved
        source = move.func.value  # type: ignore[attr-defined]
        value = self.facts.value_of(source)
        if not (value.is_tensor and value.cpu):
            return  # the move may be a no-op: only one conversion happens
        source_dtype = self._source_dtype(source)
        target_dtype = dtype.split(".")[-1]
        if source_dtype is None or _WIDTH.get(source_dtype, 0) < _WIDTH.get(target_dtype, 99):
            return  # unknown source dtype, or a widening cast: moving first then casting may be the faster order
        if _SAME.get(source_dtype, source_dtype) == _SAME.get(target_dtype, target_dtype):
            return  # the cast converts nothing
        facts = self.facts
        text = facts.short_source(node)
        edits: tuple[tuple[cst.CSTNode, str], ...] = ()
        if facts.index.aliases.get("torch") == "torch":
            edits = ((node, f"{facts.source_for_edit(source)}.to(device={device}, dtype={dtype})"),)
        self.report(
            node,
            f"`{text}` copies `{facts.short_source(source)}` to the device in its old dtype, then converts it there: "
            f"a device temporary and a second kernel",
            fix_message=f"move and convert in one call: `.to(device={device}, dtype={dtype})`"
                        + ("" if proven else f" (if `{device}` is a device)"),
            edits=edits,
            applicability=None if proven else Applicability.UNSAFE,
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

    def _device_move(self, node: cst.BaseExpression) -> Optional[tuple[str, bool]]:
        """(The device's source text, whether it is proven a device) when `node` is `x.cuda()` or
        `x.to(<a device>)` (blocking), else None."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
            return None
        method = node.func.attr.value
        if any(arg.keyword is not None and arg.keyword.value == "non_blocking" for arg in node.args):
            return None
        if method == "cuda":
            return ('"cuda"', True) if not node.args else None
        if method != "to" or len(node.args) != 1:
            return None
        arg = node.args[0]
        if arg.keyword is not None and arg.keyword.value != "device":
            return None
        return self._device_text(arg.value)

    def _device_text(self, node: cst.BaseExpression) -> Optional[tuple[str, bool]]:
        """(source text, proven a device): `"cuda"` and `torch.device("cuda")` are; a name that only looks
        like one (`device`, `self.device`) is not, unless the analysis saw a device bound to it; a name that
        may hold a dtype (`dev = torch.float64`) or a tensor is no device at all."""
        text = self.facts.module.code_for_node(node)
        if isinstance(node, cst.SimpleString):
            device = node.value.strip("'\"")
            return (text, True) if device.startswith(("cuda", "xpu", "npu", "mps")) else None
        qualified = self.facts.qualify(node) or ""
        if isinstance(node, cst.Call) and qualified == "torch.device" and node.args and isinstance(node.args[0].value, cst.SimpleString):
            return (text, True) if node.args[0].value.value.strip("'\"").startswith(("cuda", "xpu", "npu", "mps")) else None
        name = node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else ""
        if name.lower().endswith(_DEVICE_NAME_HINTS) and "cpu" not in name.lower():
            value = self.facts.value_of(node)  # `device`, `self.device`, `x.device`, `target_device`
            if value.host_type == "device":
                return text, True
            if value.kind is Kind.UNKNOWN and value.host_type is None:
                return text, False  # nothing says what it holds: a device by its name only
        return None

    def _source_dtype(self, source: cst.BaseExpression) -> Optional[str]:
        """The dtype name a factory call makes: its `dtype=` argument, or the factory's default."""
        if not isinstance(source, cst.Call):
            return None
        qualified = self.facts.qualify(source.func) or ""
        if qualified not in semantics.FACTORY_FUNCTIONS:
            return None
        for arg in source.args:
            if arg.keyword is not None and arg.keyword.value == "dtype":
                name = self.facts.qualify(arg.value) or ""
                return name.split(".")[-1] if name.startswith("torch.") and name.count(".") == 1 else None
        if qualified in _FLOAT_FACTORIES:
            return "float32"
        if qualified in _INT64_FACTORIES:
            return "int64"
        if qualified == "torch.arange" and source.args and all(a.keyword is None for a in source.args):
            if not any(isinstance(n, cst.Float) or (isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide)) for n in descendants(source)):
                return "int64"  # `torch.arange(1, n + 1)`: integer bounds (a float bound would make float32)
        return None
