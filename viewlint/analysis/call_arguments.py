"""What a call's arguments say: the device it names (`device=`, `.to(...)`), the dtype a factory or a cast makes, the
memory format it asks for.

A part of `Evaluator`'s reading of calls (`viewlint.analysis.calls`), a class of its own only to keep each file
readable: `CallEvaluation` inherits it, and its methods read the rest of the evaluator through `self`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from viewlint.analysis import semantics as sem
from viewlint.analysis.tree import descendants, dotted_name
from viewlint.analysis.value_ops import Locals
from viewlint.analysis.values import Device, Kind, Value


class ArgumentReading:
    """The arguments' part of `Evaluator`'s reading of calls (a mixin)."""

    if TYPE_CHECKING:  # the rest of `Evaluator`, which this part calls
        def evaluate(self, node: cst.BaseExpression, local: Locals) -> Value: ...
        def qualify(self, node: cst.BaseExpression) -> Optional[str]: ...
        @staticmethod
        def source(node: cst.CSTNode) -> str: ...

    def _factory_dtype(self, node: cst.Call, qualified: str) -> Optional[str]:
        """The dtype a factory makes: its `dtype=`, or its default when that does not depend on the data."""
        dtype = self.keyword(node, "dtype")
        if dtype is not None:
            return sem.canonical_dtype(self.qualify(dtype.value))
        if qualified in sem.FLOAT_DEFAULT_FACTORIES:
            return "float32"
        if qualified in sem.INT64_DEFAULT_FACTORIES:
            return "int64"
        # `torch.full(shape, 2.0)`, `torch.tensor([1, 2])`, `torch.arange(6)`: the literals say it.
        if qualified == "torch.full" and len(node.args) >= 2:
            literals = [node.args[1].value]
        elif qualified in ("torch.tensor", "torch.arange") and node.args:
            literals = [a.value for a in node.args if a.keyword is None] if qualified == "torch.arange" else [node.args[0].value]
        else:
            return None
        kinds = set()
        for literal in literals:
            for leaf in descendants(literal):
                if isinstance(leaf, (cst.Integer, cst.Float)):
                    kinds.add(type(leaf))
                elif isinstance(leaf, cst.Name) and leaf.value in ("True", "False"):
                    kinds.add(bool)
                elif not isinstance(leaf, (cst.List, cst.Tuple, cst.Element, cst.UnaryOperation)):
                    return None  # a name or an expression: its type is not read here
        if kinds == {cst.Integer}:
            return "int64"
        if kinds and kinds <= {cst.Integer, cst.Float}:
            return "float32"
        return "bool" if kinds == {bool} else None

    def _converted_dtype(self, node: cst.Call, method: str, receiver: Value, local: Locals) -> Optional[str]:
        """The dtype after `.half()`, `.to(torch.int32)`, `.to(dtype=…)`; a move or reshape keeps the receiver's."""
        if method in sem.CAST_METHOD_DTYPES:
            return sem.canonical_dtype(sem.CAST_METHOD_DTYPES[method]) if not node.args else None
        if method in ("to", "type"):
            for arg in node.args:
                if arg.keyword is None or arg.keyword.value == "dtype":
                    value = self.evaluate(arg.value, local)
                    if value.host_type == "dtype" or value.is_tensor or value.kind is Kind.UNKNOWN or arg.keyword is not None:
                        return sem.canonical_dtype(self.qualify(arg.value))  # a dtype (known or not), or `.to(other)`
            return receiver.dtype if method == "to" else None
        return receiver.dtype if method in ("contiguous", "reshape", "flatten", "cpu", "cuda") else None

    def _dtype_is_bool(self, node: cst.Call) -> bool:
        dtype = self.keyword(node, "dtype")
        return dtype is not None and (self.qualify(dtype.value) or "") in ("torch.bool", "torch.uint8")

    def memory_format_layout(self, node: cst.Call) -> Optional[bool]:
        """Whether the result of a call with this `memory_format=` is row-major: True for the default or
        `torch.contiguous_format`; False for `channels_last`/`channels_last_3d` (strided, but for sizes
        of 1); None for `preserve_format` or a format the analysis cannot read."""
        memory_format = self.keyword(node, "memory_format")
        if memory_format is None:
            return True
        text = self.source(memory_format.value)
        if "contiguous_format" in text:
            return True
        return False if text.rsplit(".", 1)[-1] in ("channels_last", "channels_last_3d") else None

    def default_memory_format(self, node: cst.Call) -> bool:
        """No `memory_format=` argument, or `torch.contiguous_format`: the result is row-major."""
        memory_format = self.keyword(node, "memory_format")
        return memory_format is None or "contiguous_format" in self.source(memory_format.value)

    def is_dtype_argument(self, node: cst.BaseExpression) -> bool:
        qualified = self.qualify(node) or ""
        return qualified.startswith("torch.") and qualified.split(".")[-1] in sem.DTYPE_NAMES

    def _is_bool_dtype(self, node: cst.BaseExpression) -> bool:
        return (self.qualify(node) or "") == "torch.bool"

    @staticmethod
    def _is_cpu_device(node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.SimpleString) and node.value.strip("'\"") == "cpu"

    def _device_expression(self, node: cst.BaseExpression, local: Locals) -> Device:
        """What device a `device=`/`.to()` argument names: the CPU, a device, or unknown."""
        if self._is_cpu_device(node):
            return Device.CPU
        if isinstance(node, cst.SimpleString):
            return Device.ACCELERATOR  # "cuda", "cuda:0", "npu"
        if isinstance(node, cst.Call) and self.qualify(node.func) == "torch.device" and node.args:
            return self._device_expression(node.args[0].value, local)
        if isinstance(node, cst.Attribute) and node.attr.value == "device":
            receiver = self.evaluate(node.value, local)
            # `device=ext.device` of a value known to be on the host (even if not known to be a tensor); not of one
            # only guessed to be there by its name (`grid_thw.device`): that is where the guessed tensor really is.
            if receiver.guessed_cpu:
                return Device.UNKNOWN
            return receiver.device if receiver.is_tensor or receiver.device is Device.CPU else Device.UNKNOWN
        name = dotted_name(node) or ""
        if "cpu" in name.split(".")[-1].lower():
            return Device.CPU
        if isinstance(node, cst.Name):
            # A local bound to a device on every path (`host = torch.device("cpu")`): the device it names.
            bound = self.evaluate(node, local)
            if bound.host_type == "device" and bound.device is Device.CPU:
                return Device.CPU
        return Device.UNKNOWN

    def _to_device(self, node: cst.Call, receiver: Value, local: Locals) -> Device:
        """`.to("cpu")`, `.to(cpu_tensor)`, a dtype-only `.to(torch.float16)` (keeps the device), `.to(device)`."""
        device = self.keyword(node, "device")
        positional = [a.value for a in node.args if a.keyword is None and a.star == ""]
        target = device.value if device is not None else (positional[0] if positional else None)
        if target is None or self.is_dtype_argument(target):
            return receiver.device if not any(a.star for a in node.args) else Device.UNKNOWN
        found = self._device_expression(target, local)
        if found is not Device.UNKNOWN:
            return found
        value = self.evaluate(target, local)
        if value.host_type == "dtype":
            return receiver.device  # `.to(x.dtype)`, `.to(dtype)` of a local bound to a dtype: a cast where it is
        if value.is_tensor:
            return value.device if value.device is not Device.UNKNOWN else Device.ACCELERATOR
        # `.to(device)`, `.to(self.device)`, `.to(x.device)` of something unknown: a move to the device the
        # code computes on (moves to the CPU say so: `.cpu()`, `.to("cpu")`).
        return Device.ACCELERATOR

    def _device_argument(self, node: cst.Call, local: Locals) -> Optional[Device]:
        """The device `device=` names; None when the call has no `device=`."""
        arg = self.keyword(node, "device")
        return None if arg is None else self._device_expression(arg.value, local)

    @staticmethod
    def keyword(node: cst.Call, name: str) -> Optional[cst.Arg]:
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == name:
                return arg
        return None
