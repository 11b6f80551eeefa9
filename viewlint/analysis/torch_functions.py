"""What a call of a torch function gives (`torch.cat`, `torch.max(a, b)`, `F.linear`, `torch.zeros`, ...).

A part of `Evaluator` (`viewlint.analysis.evaluator`) in a file of its own only to keep each file readable:
`CallEvaluation` (`viewlint.analysis.calls`) inherits it, and its methods read the evaluator's state and the rest of
its methods through `self`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from viewlint.analysis import semantics as sem
from viewlint.analysis.call_arguments import ArgumentReading
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.tree import dotted_name
from viewlint.analysis.value_ops import Environment, Locals
from viewlint.analysis.annotations import DEVICE_VALUE
from viewlint.analysis.value_ops import dropped_out, elementwise_device
from viewlint.analysis.values import (ADVANCED_INDEX, EMPTY, FACTORY, UNKNOWN, UNKNOWN_TENSOR, Device, Kind, Value, fresh,
                                      shape_of)


class TorchFunctionCalls(ArgumentReading):
    """`Evaluator`'s reading of torch functions (a mixin: `CallEvaluation` is the only class that inherits it)."""

    env: Environment
    index: ModuleIndex

    if TYPE_CHECKING:  # the rest of `Evaluator`, which this part calls
        def evaluate(self, node: cst.BaseExpression, local: Locals) -> Value: ...
        def short_source(self, node: cst.CSTNode, limit: int = 60) -> str: ...
        def view_of(self, base_node: cst.BaseExpression, base: Value, origin: str, partial: Optional[bool] = None) -> Value: ...
        def maybe_view(self, receiver: Value, op: str, device: Device, source: Optional[cst.BaseExpression] = None) -> Value: ...

    def _torch_function(self, node: cst.Call, qualified: str, local: Locals) -> Value:
        if qualified.startswith("numpy."):
            # NumPy computes on the host: `np.broadcast_to(...)`, `np.arange(n) + offsets`. Its arrays index
            # like lists (they gather).
            return Value(kind=Kind.ARRAY)
        if qualified == "torch.device":
            # `host = torch.device("cpu")`: a device, and which one where the argument says (`.to(host)` reads it).
            named = self._device_expression(node.args[0].value, local) if node.args else Device.UNKNOWN
            return DEVICE_VALUE.with_(device=named) if named is Device.CPU else DEVICE_VALUE
        first = self.first_arg(node)
        first_value = self.evaluate(first, local) if first is not None else UNKNOWN
        has_device = self.keyword(node, "device") is not None
        if qualified in sem.SEQUENCE_VIEW_FUNCTIONS and first is not None:
            element = self.view_of(first, first_value if first_value.is_tensor else UNKNOWN_TENSOR, qualified)
            if self.split_across(node, 2 if qualified != "torch.unbind" else 1):
                element = element.with_(contiguous=False)
            return Value(kind=Kind.TENSOR_SEQUENCE, elements=(element,), origin=qualified, whole_partition=True)
        if qualified in sem.VIEW_FUNCTIONS and first is not None:
            return self.view_of(first, first_value if first_value.is_tensor else UNKNOWN_TENSOR, qualified)
        device = self._device_argument(node, local)
        if qualified in sem.MAYBE_VIEW_FUNCTIONS and first is not None:
            # `torch.as_tensor(list)` builds on the CPU unless told otherwise; a tensor keeps its device.
            host_data = is_host_data(first, first_value)
            if device is None:
                device = Device.CPU if (first_value.cpu or host_data or qualified == "torch.from_numpy") else first_value.device
            return self.maybe_view(first_value, qualified, device=device, source=first)
        if qualified == "torch.where" and len([a for a in node.args if a.keyword is None]) == 1:
            return Value(kind=Kind.TENSOR_SEQUENCE, elements=(fresh(contiguous=True, index_like=True, zero_dim=False, device=first_value.device),))
        if qualified == "torch.nonzero" and self.keyword(node, "as_tuple") is not None:
            return Value(kind=Kind.TENSOR_SEQUENCE, elements=(fresh(contiguous=True, index_like=True, zero_dim=False, device=first_value.device),))
        if qualified in sem.FACTORY_FUNCTIONS:
            zero_dim: Optional[bool] = None
            if qualified == "torch.tensor" and first is not None:
                zero_dim = not isinstance(first, (cst.List, cst.Tuple, cst.ListComp)) and first_value.kind not in (
                    Kind.INT_LIST, Kind.WRAPPER, Kind.TENSOR_SEQUENCE, Kind.ARRAY)
                if zero_dim and first_value.kind is Kind.UNKNOWN and isinstance(first, cst.Name) \
                        and sem.INDEX_NAME.search(first.value) is not None:
                    zero_dim = None  # `torch.tensor(pad_ids)`: a list of ids, by its name, as likely as one number
                if isinstance(first, (cst.Integer, cst.Float)):
                    zero_dim = True
            elif qualified in ("torch.arange", "torch.randperm", "torch.linspace"):
                zero_dim = False
            index_like = qualified in ("torch.arange", "torch.randperm", "torch.tril_indices", "torch.triu_indices") or (
                qualified == "torch.tensor" and zero_dim is False and isinstance(first, (cst.List, cst.ListComp))
            )
            # Row-major unless the strides are explicit, follow an input, or another memory format is asked for.
            contiguous = None if qualified in sem.NON_CONTIGUOUS_FACTORIES else self.memory_format_layout(node)
            # On the CPU without a device (`torch.tensor(t)` of a tensor keeps t's device), or on the one named.
            if device is None and qualified in sem.SAMPLING_FUNCTIONS and first_value.kind in (Kind.TENSOR, Kind.UNKNOWN):
                device = first_value.device  # sampled from a tensor (`probs`), on its device; a number: the CPU
            if device is None:
                device = first_value.device if qualified == "torch.tensor" and first_value.is_tensor else Device.CPU
            mask = self._dtype_is_bool(node)
            requires_grad = self.keyword(node, "requires_grad")
            return fresh(contiguous=contiguous, device=device, zero_dim=False if mask and zero_dim is None else zero_dim,
                         index_like=index_like, bool_mask=mask, permutation=qualified == "torch.randperm", origin=EMPTY if qualified in sem.EMPTY_FACTORIES else FACTORY,
                         dtype=self._factory_dtype(node, qualified),
                         grad_leaf=requires_grad is not None and not (isinstance(requires_grad.value, cst.Name)
                                                                       and requires_grad.value.value in ("False", "None")))
        if qualified in sem.LIKE_FACTORY_FUNCTIONS:
            return fresh(contiguous=first_value.contiguous if not has_device else None,
                         origin=EMPTY if qualified == "torch.empty_like" else FACTORY,
                         device=device if device is not None else first_value.device,
                         bool_mask=self._dtype_is_bool(node) or (first_value.bool_mask and self.keyword(node, "dtype") is None))
        inputs, every_input_known = self._tensor_inputs(node, local)
        input_device = elementwise_device(inputs) if inputs else Device.UNKNOWN
        if not inputs and (first_value.device is Device.CPU or first_value.kind in (Kind.INT, Kind.HOST)):
            # `torch.any(lens_cpu == 1)` of a value known only to be on the host, `torch.sqrt(1. - lam)` of a number:
            # made on the host.
            input_device = Device.CPU
        if qualified in sem.FRESH_CONTIGUOUS_FUNCTIONS:
            index_like = qualified in ("torch.nonzero", "torch.argwhere")
            # nonzero/argwhere come back transposed (stride (1, n)); cat/stack keep their inputs' layout.
            layout_follows_inputs = qualified in sem.LAYOUT_FOLLOWING_FUNCTIONS
            contiguous = None if index_like else (True if not layout_follows_inputs else
                                                  (True if inputs and every_input_known and all(v.contiguous for v in inputs) else None))
            return fresh(contiguous=contiguous, index_like=index_like, zero_dim=False if index_like else None,
                         device=input_device, origin=ADVANCED_INDEX if qualified in sem.GATHER_FUNCTIONS else None,
                         has_base=None if qualified.rsplit(".", 1)[-1] in sem.BASE_SETTING_OPS else False,
                         base=self.short_source(first) if qualified in sem.GATHER_FUNCTIONS and first is not None else None)
        if qualified in sem.PRODUCT_VIEW_FUNCTIONS:
            return fresh(contiguous=None, device=input_device, has_base=None)  # a view of what it computed, or of its input
        if qualified in sem.BROADCAST_VIEW_FUNCTIONS:
            # Expanded views of the inputs, all of each one's storage (a view of one of several: no one base to name).
            return Value(kind=Kind.TENSOR_SEQUENCE, elements=(fresh(contiguous=None, device=input_device, has_base=True),),
                         origin=qualified)
        if qualified in sem.FRESH_FUNCTIONS:
            name = qualified.split(".")[-1]
            if name in ("max", "min") and (other := self._elementwise_other(node, local)) is not None:
                return fresh(contiguous=None, device=elementwise_device([first_value, other]))  # `torch.min(a, b)`
            if name in ("topk", "sort", "max", "min", "kthvalue", "median", "mode") and (
                    name in ("topk", "sort") or self._has_dim_argument(node)):
                values = fresh(device=input_device)
                return Value(kind=Kind.TENSOR_SEQUENCE, elements=(values,), origin=qualified)
            if name in ("unique", "unique_consecutive") and (unique := self._unique_tuple(node, qualified, input_device)):
                return unique
            index_like = name in ("argsort", "argmax", "argmin") and (name == "argsort" or self._has_dim_argument(node))
            reduced = name in sem.REDUCTIONS and not self._has_dim_argument(node)
            # An elementwise op keeps its inputs' layout: contiguous where every tensor input is (`F.gelu(x)`).
            laid_out = qualified in sem.ELEMENTWISE_FUNCTIONS and bool(inputs) and every_input_known \
                and all(v.contiguous for v in inputs)
            if name == "dropout" and first_value.is_tensor:
                # Its input itself in eval mode, a new tensor while training (as `nn.Dropout` gives).
                made = fresh(contiguous=True if laid_out else None, device=input_device, **shape_of(first_value))
                return dropped_out(first_value, made)
            return fresh(contiguous=True if laid_out else None, index_like=index_like, device=input_device, permutation=name == "argsort",
                         bool_mask=qualified in sem.BOOL_RESULT_FUNCTIONS or (name in ("any", "all") and self._has_dim_argument(node)),
                         # `torch.diff` takes and gives at least one dimension.
                         zero_dim=True if reduced else (False if index_like or name == "diff" else None), reduced=reduced)
        if qualified.startswith(sem.TENSOR_NAMESPACES) or sem.generic_torch_op(qualified):
            # Some other `torch.<op>(...)`: a new tensor (`torch.repeat_interleave(x, 2)` views the copy it made).
            return fresh(contiguous=None, device=input_device,
                         has_base=None if qualified.rsplit(".", 1)[-1] in sem.BASE_SETTING_OPS else False)
        if sem.nn_module_class(qualified):
            return Value(kind=Kind.HOST, wrapper=qualified)  # `nn.Linear(4, 8)`: a module, whose calls give tensors
        if qualified.startswith("torch.distributions.") and qualified.split(".")[-1][:1].isupper():
            # `Beta(0.4, 0.4)`: a distribution; its samples live where its parameters do (Python numbers: the CPU).
            parameters = [self.evaluate(a.value, local) for a in node.args]
            tensors = [v for v in parameters if v.is_tensor]
            device = elementwise_device(tensors) if tensors else (
                Device.CPU if all(v.kind in (Kind.INT, Kind.HOST) or v.device is Device.CPU or isinstance(a.value, (cst.Integer, cst.Float))
                                  for v, a in zip(parameters, node.args)) else Device.UNKNOWN)
            return Value(kind=Kind.HOST, wrapper=qualified, device=device)
        if qualified in sem.TENSOR_WRAPPING_CLASSES:
            # `nn.Parameter(torch.ones(n))`: the same storage, as a module's parameter.
            data = first_value if first_value.is_tensor else UNKNOWN_TENSOR
            # Where it lives is where its module is moved (`model.cuda()`), not where its data was made.
            return data.with_(is_parameter=True, device=Device.UNKNOWN, guessed_cpu=False,
                              why=data.why or f"`{qualified.split('.')[-1]}(…)`")
        return UNKNOWN  # `sem.torch_call_gives_tensor` (the prefilter's test) is false exactly here

    def _tensor_inputs(self, node: cst.Call, local: Locals) -> tuple[list[Value], bool]:
        """The positional arguments of a torch function known to be tensors (the items of a list or tuple of them:
        `torch.cat([a, b])`), and whether every item was one: `torch.cat(weights)` where `weights` holds what an
        unknown helper returned and one appended `new_zeros(...)` may hold a channels_last tensor."""
        values: list[Value] = []
        every = True
        for arg in node.args:
            if arg.keyword is None and arg.star in ("", "*"):  # `torch.meshgrid(*[torch.linspace(...) for s in sizes])`
                value = self.evaluate(arg.value, local)
                if arg.star and not (value.kind is Kind.TENSOR_SEQUENCE or value.kind is Kind.WRAPPER and value.wrapper in ("list", "tuple")):
                    every = False
                    continue
                name = dotted_name(arg.value) or ""
                if not value.is_tensor and sem.looks_cpu_name(name):
                    # `torch.cumsum(meta.extend_seq_lens_cpu, 0)`
                    value = UNKNOWN_TENSOR.with_(device=Device.CPU, guessed_cpu=not sem.named_host_side(name))
                nested = value.kind is Kind.TENSOR_SEQUENCE or (value.kind is Kind.WRAPPER and value.wrapper in ("list", "tuple"))
                items = value.elements if nested else (value,)
                if nested and not items:
                    every = False  # a list of which nothing is known
                for item in items:
                    if item.is_tensor:
                        values.append(item)
                    else:
                        every = False
        return values, every

    @staticmethod
    def _has_dim_argument(node: cst.Call, method: bool = False) -> bool:
        """Whether a reduction is given a dimension: `torch.sum(x, 1)`, `x.sum(1)`, `dim=`/`axis=`."""
        positional = [a for a in node.args if a.keyword is None and not a.star]
        return len(positional) >= (1 if method else 2) or any(a.keyword is not None and a.keyword.value in ("dim", "axis") for a in node.args)

    def _elementwise_other(self, node: cst.Call, local: Locals, method: bool = False) -> Optional[Value]:
        """For `torch.max(a, b)`/`a.min(b)`: the tensor `b` when the argument after the input is one (an
        elementwise maximum, not a reduction along a dimension); None otherwise."""
        positional = [a for a in node.args if a.keyword is None and not a.star]
        other = positional[0 if method else 1] if len(positional) > (0 if method else 1) else self.keyword(node, "other")
        if other is None:
            return None
        value = self.evaluate(other.value, local)
        return value if value.is_tensor else None

    def _unique_tuple(self, node: cst.Call, op: str, device: Device) -> Optional[Value]:
        """`torch.unique(ids, return_inverse=True)`: a tuple (the values, then the inverse indices and the counts, each
        where asked for), each at least 1-D; None where only the values come back."""
        asked = [flag for flag in ("return_inverse", "return_counts")
                 if (arg := self.keyword(node, flag)) is not None and not (isinstance(arg.value, cst.Name) and arg.value.value == "False")]
        if not asked:
            return None
        return Value(kind=Kind.TENSOR_SEQUENCE, elements=(fresh(device=device, zero_dim=False),),
                     origin=op + ("(inverse)" if "return_inverse" in asked else ""))

    @staticmethod
    def first_arg(node: cst.Call) -> Optional[cst.BaseExpression]:
        for arg in node.args:
            if arg.keyword is None and arg.star == "":
                return arg.value
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in ("input", "self", "tensor", "x"):
                return arg.value
        return None

    def split_across(self, node: cst.Call, position: int) -> bool:
        """A split, chunk or unbind along a dimension after the first (`dim=1`, the `position`-th positional argument):
        its pieces are strided, so their `.contiguous()` copies (`torch.chunk(w, n, dim=1)[rank]`)."""
        dim = self.keyword(node, "dim")
        positional = [a for a in node.args if a.keyword is None and not a.star]
        value = dim.value if dim is not None else positional[position].value if len(positional) > position else None
        return isinstance(value, cst.Integer) and int(value.value) >= 1


def is_host_data(expression: cst.BaseExpression, value: Value) -> bool:
    """What a constructor reads on the host: a number, a list, a tuple, a comprehension or a NumPy array, written out
    or known so (`torch.as_tensor(lengths)` builds on the CPU; VL405's uploads copy it to the device). A Python list
    or tuple is read on the host whatever its items are (`[n_draft] * bs`; 0-dim device tensors in it are each read
    back first)."""
    if value.kind is Kind.WRAPPER and value.wrapper in ("list", "tuple"):
        return True
    return value.kind in (Kind.INT, Kind.INT_LIST, Kind.HOST, Kind.ARRAY) or isinstance(
        expression, (cst.List, cst.Tuple, cst.ListComp, cst.Integer, cst.Float))
