"""The evaluator's vocabulary: the environment it reads, and how values combine.

What an operator, an elementwise op, a view or an index gives, and the containers and labels values
get as they are built; `Evaluator` (`viewlint.analysis.evaluator`) and its call rules
(`viewlint.analysis.calls`) share these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Protocol

import libcst as cst

from viewlint.analysis import semantics as sem
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.tree import dotted_name
from viewlint.analysis.values import (ATTRIBUTE_CONTAINER, HOST, INT, MAX_ELEMENTS, UNKNOWN, UNKNOWN_TENSOR, Device, IndexKind, Kind, Provenance,
                                      Value, fresh, join)

if TYPE_CHECKING:
    from viewlint.analysis.summaries import ModuleSummaries


Locals = dict[str, Value]


class Environment(Protocol):
    """What the evaluator reads from the flow: names bound so far and where it is."""

    index: ModuleIndex
    summaries: Optional["ModuleSummaries"]

    def lookup(self, name: str) -> Value: ...

    @property
    def class_name(self) -> Optional[str]: ...

    def usage_of(self, name: str) -> frozenset[str]: ...

    def field_value(self, name: str) -> Optional[Value]: ...

    def fields_of(self, head: str) -> dict[str, Value]: ...


def fields_mark(head: str) -> str:
    """The scope key that says fields of the object `head` were set in this function (`item.embeddings = v`)."""
    return f"{head}.*"


def local_call_key(name: str) -> str:
    """The scope key of what calling `name`, a function defined in the function being walked, returns (a field of
    the name: binding the name again forgets it)."""
    return f"{name}.()"


def local_parameters_key(name: str) -> str:
    """The scope key of the parameters of `name`, a function with parameters defined in the function being walked
    (a `WRAPPER` "parameters" whose fields are their names): its calls read what it returns as `as_called` reads a
    module function's result."""
    return f"{name}.(parameters)"


def forget_fields(scope: Locals, head: str) -> None:
    """`head` is bound again: the fields set on the object it held are not the new one's."""
    prefix = f"{head}."
    for key in [k for k in scope if k.startswith(prefix)]:
        del scope[key]


# The origin of what a module or another callable returns when applied to tensors (a tensor or a tuple of them).
MODULE_OUTPUT = "module output"


def optimizer_attribute(attr: str) -> Optional[Value]:
    """What `torch.optim.Optimizer` keeps in `attr`: `param_groups`, a list of dicts whose "params" are the
    model's parameters; `state`, a dict keyed by parameter (`state[p]["exp_avg"]`: no tensor indexing)."""
    if attr == "param_groups":
        parameter = UNKNOWN_TENSOR.with_(is_parameter=True, why="a parameter of `param_groups`")
        group = Value(kind=Kind.WRAPPER, wrapper="dict", elements=(container_value((parameter,), "list"),), fields=("params",))
        return container_value((group,), "list")
    if attr == "state":
        return Value(kind=Kind.WRAPPER, wrapper="defaultdict")
    return None


def on_the_host_if(value: Value) -> Value:
    """What an item of `value` is when nothing is known of it but where it is: what a thing on the
    CPU holds (rows of `grid_thw`, a CPU tensor or list) is on the CPU too."""
    return UNKNOWN.with_(device=Device.CPU) if value.kind is Kind.UNKNOWN and value.device is Device.CPU else UNKNOWN


def labelled(value: Value, name: str) -> Value:
    """A tensor bound to `name` for the first time keeps that name (for view bases and messages).
    `x = x.contiguous()`: the converted tensor replaces `x`, so writes into it are writes into `x`."""
    if value.kind is Kind.TENSOR and value.copy_of == name:
        value = value.with_(copy_of=None, copy_op=None)
    if value.kind is Kind.TENSOR and value.label is None and value.provenance is not Provenance.VIEW:
        return value.with_(label=name)
    if value.kind is Kind.WRAPPER and value.origin == MODULE_OUTPUT and value.label is None:
        return value.with_(label=name)  # `out = model(batch)`, a tensor or a tuple of them: a view of it is of `out`
    return value


def conditional_key(test: str, name: Optional[str] = None) -> str:
    """The scope key under which the flow keeps what `name = a if test else b` gave on each arm (`name` given), or
    the names so bound under `test` (none given)."""
    return f"?{test}:{name}" if name is not None else f"?{test}"


def container_value(elements: tuple[Value, ...], wrapper: str) -> Value:
    """A container holding `elements` (in their positions, so that tuples unpack element by element)."""
    if len(elements) <= MAX_ELEMENTS:
        return Value(kind=Kind.WRAPPER, wrapper=wrapper, elements=elements)
    result = Value(kind=Kind.WRAPPER, wrapper=wrapper)
    for element in elements:
        result = result.with_element(element)
    return result


def value_index_kind(value: Value) -> IndexKind:
    """The index kind of an index whose value is known."""
    if value.kind in (Kind.INT, Kind.HOST):
        return IndexKind.BASIC
    if value.kind in (Kind.INT_LIST, Kind.ARRAY, Kind.TENSOR_SEQUENCE):
        return IndexKind.ADVANCED  # a list of ints, a NumPy array, `torch.where(c)`/`nonzero(as_tuple=True)`
    if value.is_tensor:
        if value.zero_dim:
            return IndexKind.BASIC  # a 0-dim tensor index is a select, not a gather
        if value.zero_dim is False or value.bool_mask or value.index_like:
            return IndexKind.ADVANCED
        # A tensor of unknown rank: 0-dim ones are the rare case, unless it came out of a tensor
        # (`t[i]`, a loop over a tensor, a reduction), where it may well be one.
        return IndexKind.UNKNOWN if value.reduced else IndexKind.ADVANCED
    if value.kind is Kind.WRAPPER and value.wrapper == "list" and not any(e.kind is Kind.HOST for e in value.elements):
        # A list indexes a tensor by its items, whatever they are (ints, tensors, what a lookup gives); only a list
        # of slices (NumPy's legacy reading of it as a tuple) would not.
        return IndexKind.ADVANCED
    return IndexKind.UNKNOWN


def cpu_test(test: cst.BaseExpression) -> Optional[tuple[cst.BaseExpression, bool]]:
    """The tensor a device test is about, and whether the test holding says it is on the CPU:
    `t.is_cuda`, `t.is_cpu`, `t.device.type == "cpu"`, `t.device.type != "cuda"`."""
    if isinstance(test, cst.Attribute) and test.attr.value in ("is_cuda", "is_cpu"):
        return test.value, test.attr.value == "is_cpu"
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    target, left = test.comparisons[0], test.left
    if not isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)):
        return None
    right = target.comparator
    if isinstance(right, cst.Attribute) and isinstance(left, (cst.SimpleString, cst.Call)):
        left, right = right, left  # `"cpu" == t.device.type`
    if isinstance(right, cst.Call) and len(right.args) == 1 and (dotted_name(right.func) or "").endswith("device"):
        right = right.args[0].value  # `t.device == torch.device("cpu")`: the device the string names
    if isinstance(left, cst.Attribute) and left.attr.value == "device" and isinstance(right, cst.SimpleString):
        tensor = left.value  # `t.device == "cpu"`, `t.device == torch.device("cpu")`
    elif isinstance(left, cst.Attribute) and left.attr.value == "type" and isinstance(left.value, cst.Attribute) \
            and left.value.attr.value == "device" and isinstance(right, cst.SimpleString):
        tensor = left.value.value
    else:
        return None
    kind = right.evaluated_value
    if kind not in ("cpu", "cuda"):
        return None
    equal = isinstance(target.operator, (cst.Equal, cst.Is))
    return tensor, (kind == "cpu") == equal


def storage_test(test: cst.BaseExpression) -> Optional[tuple[cst.BaseExpression, bool]]:
    """The tensor a test of its storage's size against its payload is about, and whether the test holding says the
    storage is larger (a view of part of it): `t.untyped_storage().nbytes() > t.numel() * t.element_size()`,
    `t.untyped_storage().nbytes() != ...`, `... < t.storage().nbytes()`, `... == ...` (the reverse)."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    operator, left, right = test.comparisons[0].operator, test.left, test.comparisons[0].comparator
    tensor, storage_left = _storage_size_of(left), True
    if tensor is None:
        tensor, storage_left = _storage_size_of(right), False
    if tensor is None:
        return None
    if isinstance(operator, cst.NotEqual):
        return tensor, True
    if isinstance(operator, cst.Equal):
        return tensor, False
    if isinstance(operator, (cst.GreaterThan, cst.LessThan)):
        return tensor, isinstance(operator, cst.GreaterThan) == storage_left
    return None


def _storage_size_of(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`t` of `t.untyped_storage().nbytes()` or `t.storage().nbytes()`."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "nbytes" \
            and isinstance(node.func.value, cst.Call) and isinstance(node.func.value.func, cst.Attribute) \
            and node.func.value.func.attr.value in ("untyped_storage", "storage"):
        return node.func.value.func.value
    return None


def as_indexed(node: cst.Subscript, receiver: Value) -> Value:
    """What `node` indexes: for `model(x)[:, 0]` of a module that gives a tensor or a tuple of tensors,
    the tensor (a tuple takes no index of several dimensions); otherwise `receiver` itself."""
    if len(node.slice) > 1 and receiver.kind is Kind.WRAPPER and receiver.origin == MODULE_OUTPUT:
        element = receiver.element()
        if element.is_tensor:
            return element
    return receiver


# Views with the dimensions of their base, reordered or broadcast (`.t()`, `.expand(...)`), and views that
# always have one or more (`.unsqueeze(0)`, `.flatten()`). `.view(...)`/`.reshape(...)` may make a 0-dim one.
_DIMENSION_KEEPING_VIEWS = frozenset({".data", ".detach()", ".t()", ".transpose()", ".permute()", ".narrow()",
                                      ".swapaxes()", ".swapdims()", ".movedim()", ".mT", ".T"})
_DIMENSIONED_VIEWS = frozenset({".unsqueeze()", ".flatten()", ".unfold()"})
_BROADCAST_VIEWS = frozenset({".expand()", ".expand_as()"})  # a 0-dim base broadcast gains dimensions


def view_zero_dim(origin: str, base_zero_dim: Optional[bool]) -> Optional[bool]:
    """Whether a view made by `origin` of a base whose `zero_dim` is given has no dimension."""
    if origin in _DIMENSIONED_VIEWS:
        return False
    if origin in _DIMENSION_KEEPING_VIEWS:
        return base_zero_dim
    if origin in _BROADCAST_VIEWS and base_zero_dim is False:
        return False
    return None


def dropped_out(given: Value, made: Value) -> Value:
    """What a dropout (`nn.Dropout`, `F.dropout`) of the tensor `given` returns: `given` itself in eval mode, `made`
    (a new tensor) while training. The rules, which must hold in both modes, see either. Whether it has a `_base` is
    read as in eval mode, the mode inference and `generate()` run in: the input's own (`F.linear`'s 3-D output keeps
    the view of its product; a new tensor made while training has none, and no rule reads it)."""
    joined = join(given.with_(is_parameter=False, optional=False), made)
    if given.provenance is Provenance.FRESH and joined.provenance is Provenance.FRESH:
        return joined.with_(has_base=given.has_base)
    return joined


def elementwise_device(values: list[Value]) -> Device:
    tensors = [v for v in values if v.is_tensor]
    if any(v.device is Device.ACCELERATOR for v in tensors):
        return Device.ACCELERATOR
    if any(v.cpu and v.zero_dim is False and not v.guessed_cpu for v in tensors):
        # A CPU tensor of one or more dimensions mixes only with CPU tensors and 0-dim ones (a device
        # operand raises), so the result is on the CPU whatever the other operand is.
        return Device.CPU
    if tensors and all(v.cpu for v in tensors) and all(v.is_tensor or v.kind in (Kind.INT, Kind.HOST) or v.device is Device.CPU
                                                       for v in values):
        # A CPU tensor with numbers stays on the CPU. With an operand nothing is known of, it may not: a
        # 0-dim CPU tensor times a device tensor is a device tensor, and grid metadata the name calls CPU
        # (`image_grid_thw.prod(-1) // merge ** 2`) is on the device in models that move their inputs.
        return Device.CPU
    return Device.UNKNOWN


def binary_result(operator: cst.BaseBinaryOp, left: Value, right: Value) -> Value:
    """The value of `left <op> right`."""
    if left.kind is Kind.INT and right.kind is Kind.INT:
        return INT
    if left.is_tensor or right.is_tensor:
        operands = [v for v in (left, right) if v.is_tensor]
        device = elementwise_device([left, right])
        if isinstance(operator, cst.MatrixMultiply):
            return fresh(contiguous=True, device=device, why=operands[0].why)
        scalars_ok = all(v.is_tensor or v.kind in (Kind.INT, Kind.HOST) for v in (left, right))
        # Elementwise results follow the inputs' strides: contiguous only when every tensor input is.
        contiguous = True if scalars_ok and all(v.contiguous for v in operands) else None
        mask = isinstance(operator, (cst.BitAnd, cst.BitOr, cst.BitXor)) and all(v.bool_mask for v in operands)
        zero_dim = True if all(v.zero_dim for v in operands) and scalars_ok else (
            False if any(v.zero_dim is False for v in operands) else None)
        index = any(v.index_like for v in operands) and not isinstance(operator, (cst.Divide,))
        # On the CPU only because grid metadata is guessed to be: so is the result.
        guessed = device is Device.CPU and all(v.guessed_cpu for v in operands if v.cpu)
        result = fresh(contiguous=contiguous, device=device, bool_mask=mask, zero_dim=zero_dim,
                       reduced=all(v.reduced or v.zero_dim for v in operands) and scalars_ok, index_like=index,
                       why=operands[0].why, guessed_cpu=guessed)
        # A tensor on some paths only, with a number: on the other paths the result is a number too.
        return result.with_(optional=True) if all(v.optional for v in operands) else result
    if left.kind is Kind.ARRAY or right.kind is Kind.ARRAY:
        return Value(kind=Kind.ARRAY)
    if left.kind in (Kind.INT, Kind.HOST) and right.kind in (Kind.INT, Kind.HOST):
        return HOST
    if all(v.device is Device.CPU or v.kind in (Kind.INT, Kind.HOST) for v in (left, right)):
        return UNKNOWN.with_(device=Device.CPU)  # `grid_t * grid_h` of a row of CPU grid metadata
    return UNKNOWN


def never_eager(test: cst.BaseExpression) -> bool:
    """A test that holds only while the code is traced, scripted or exported (`torch.jit.is_scripting()`,
    `a() or b()` of such calls), never in an eager run."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return never_eager(test.left) and never_eager(test.right)
    if isinstance(test, cst.BooleanOperation):
        return never_eager(test.left) or never_eager(test.right)
    if isinstance(test, cst.Call) and not test.args:
        name = dotted_name(test.func) or ""
        return name.rsplit(".", 1)[-1].lstrip("_") in sem.NEVER_EAGER_CALLS
    return False
