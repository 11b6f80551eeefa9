"""The expression evaluator: what an expression's value is, from the evidence the code gives.

`Evaluator.value_of(node)` reads a libcst expression in an environment (the names bound at
that point, the module index, the module's function summaries) and returns a `Value`. It
knows PyTorch's semantics through `semantics`: which ops make views, which may copy, which
gather, which results are index tensors or masks. It does not walk statements; the flow
(`viewlint.analysis.facts`) binds names as the walker reaches assignments.

Evidence it uses, besides torch calls and tensor-only methods: annotations in all their
spellings (`Optional[torch.Tensor]`, `Tensor | None`, `torch.LongTensor`, `np.ndarray`,
`Sequence[int]`, `"torch.Tensor"`), docstrings that give a parameter's type, how a name is
used in its function (`mask.any()`, `idx.long()`), the parameters and buffers of modules
(`layer.weight`, `model.parameters()`), and, through `summaries`, what functions of the
same module return and what their callers pass.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional, Protocol

import libcst as cst

from viewlint.analysis import stack
from viewlint.analysis import semantics as sem
from viewlint.analysis.callgraph import FunctionKey
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.tree import code_for_node, descendants, dotted_name, short_text
from viewlint.analysis.values import (
    ADVANCED_INDEX,
    EMPTY,
    FACTORY,
    HOST,
    MAX_ELEMENTS,
    INT,
    UNKNOWN,
    UNKNOWN_TENSOR,
    Device,
    IndexKind,
    Kind,
    Provenance,
    Value,
    device_of,
    fresh,
    function_reference,
    join,
    join_all,
    referenced_function,
    INTERFACE,
)

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


# Annotation names (last part) that mean a torch tensor; and what each says about its contents.
_TENSOR_ANNOTATIONS = {
    "Tensor": {}, "Parameter": {"is_parameter": True}, "FloatTensor": {}, "HalfTensor": {}, "DoubleTensor": {},
    "BFloat16Tensor": {}, "LongTensor": {"index_like": True, "zero_dim": False}, "IntTensor": {"index_like": True, "zero_dim": False},
    "BoolTensor": {"bool_mask": True, "zero_dim": False}, "ByteTensor": {"bool_mask": True, "zero_dim": False},
    "Buffer": {}, "DTensor": {},
}
# Host values `.to()` reads as a dtype or as a device.
_DTYPE_VALUE = Value(kind=Kind.HOST, host_type="dtype")
_DEVICE_VALUE = Value(kind=Kind.HOST, host_type="device")
_ARRAY_ANNOTATIONS = frozenset({"ndarray", "NDArray", "ArrayLike"})
_SEQUENCE_ANNOTATIONS = frozenset({"list", "List", "Sequence", "MutableSequence", "tuple", "Tuple", "Iterable", "Iterator", "Collection", "set", "Set", "frozenset", "deque"})
_MAPPING_ANNOTATIONS = frozenset({"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "defaultdict"})
_OPTIONAL_ANNOTATIONS = frozenset({"Optional", "Union", "Annotated", "Final", "ClassVar"})
_HOST_ANNOTATIONS = frozenset({"str", "float", "bool", "bytes", "complex", "None", "dtype", "device", "Size"})

# The origin of what a module or another callable returns when applied to tensors (a tensor or a tuple of them).
MODULE_OUTPUT = "module output"
# The wrapper name of a `self.<container>` read before what it holds is known (see `Evaluator.contents`).
ATTRIBUTE_CONTAINER = "self container"
# Names that are boolean masks by convention when nothing else is known of them (as an index).
_DOC_PARAM = r"(?:^|\n)\s*[*`]*{name}[*`]*\s*(?:\(([^)\n]*)\)|:\s*([^\n]*))"
_DOC_TENSOR = re.compile(r"\b(?:torch\.)?(Long|Bool|Byte|Float|Int|Half)?Tensor\b|\btensor\b")
_DOC_ARRAY = re.compile(r"\b(?:np|numpy)\.ndarray\b|\bndarray\b")


def _says_nothing(annotation: cst.BaseExpression) -> bool:
    """`Any` or `object`: a union with it admits every value."""
    return (dotted_name(annotation) or "").split(".")[-1] in ("Any", "object")


def annotation_value(annotation: cst.BaseExpression, index: ModuleIndex, depth: int = 0) -> Value:
    """What a parameter annotated with `annotation` may hold, in any of its spellings."""
    if depth > 4:
        return UNKNOWN
    if isinstance(annotation, cst.SimpleString):
        text = annotation.evaluated_value if isinstance(annotation.evaluated_value, str) else ""
        try:
            parsed = cst.parse_expression(text)
        except Exception:  # a string annotation that is not an expression
            return UNKNOWN
        return annotation_value(parsed, index, depth + 1)
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        return _union_value([annotation.left, annotation.right], index, depth)
    if isinstance(annotation, cst.Subscript):
        container = (dotted_name(annotation.value) or "").split(".")[-1]
        items = [e.slice.value for e in annotation.slice if isinstance(e.slice, cst.Index)]
        if container in _OPTIONAL_ANNOTATIONS:
            if container == "Union":
                return _union_value(items, index, depth)
            values = [annotation_value(i, index, depth + 1) for i in (items[:1] if container == "Annotated" else items)]
            result = UNKNOWN
            for value in values:
                result = _annotation_join(result, value)
            return result
        if container in ("tuple", "Tuple") and len(items) > 1 and not any(isinstance(i, cst.Ellipsis) for i in items):
            # `tuple[Tensor, Tensor, list[int]]`: each position its own.
            return Value(kind=Kind.WRAPPER, wrapper="tuple", why=f"annotated `{_text(annotation)}`",
                         elements=tuple(annotation_value(i, index, depth + 1) for i in items))
        if container in _SEQUENCE_ANNOTATIONS:
            element = annotation_value(items[0], index, depth + 1) if items else UNKNOWN
            if element.kind is Kind.INT:
                return Value(kind=Kind.INT_LIST, why=f"annotated `{_text(annotation)}`")
            if element.is_tensor:
                return Value(kind=Kind.WRAPPER, elements=(element,), wrapper="list", why=f"annotated `{_text(annotation)}`")
            return Value(kind=Kind.WRAPPER, wrapper="list") if container in ("list", "List") else UNKNOWN
        if container in _MAPPING_ANNOTATIONS:
            element = annotation_value(items[-1], index, depth + 1) if items else UNKNOWN
            return Value(kind=Kind.WRAPPER, elements=(element,) if element.is_tensor else (), wrapper="dict")
        if container in _ARRAY_ANNOTATIONS:
            return Value(kind=Kind.ARRAY, why=f"annotated `{_text(annotation)}`")
        return UNKNOWN
    name = dotted_name(annotation)
    if name is None:
        return UNKNOWN
    qualified = index.qualify(annotation) or name
    last = qualified.split(".")[-1]
    torch_name = qualified.startswith("torch.") or name in ("Tensor", "Parameter") or (
        last in _TENSOR_ANNOTATIONS and last.endswith("Tensor") and "." not in name)
    if last in _TENSOR_ANNOTATIONS and torch_name:
        return Value(kind=Kind.TENSOR, why=f"annotated `{name}`", **_TENSOR_ANNOTATIONS[last])  # type: ignore[arg-type]
    if last in _ARRAY_ANNOTATIONS:
        return Value(kind=Kind.ARRAY, why=f"annotated `{name}`")
    if last == "int":
        return INT
    if last in ("device", "dtype") and (qualified.startswith("torch.") or name == last):
        return _DEVICE_VALUE if last == "device" else _DTYPE_VALUE  # `device: torch.device`
    if last in _HOST_ANNOTATIONS:
        return HOST
    if last in ("list", "List"):
        return Value(kind=Kind.WRAPPER, wrapper="list")
    if last in ("dict", "Dict"):
        return Value(kind=Kind.WRAPPER, wrapper="dict")
    if sem.nn_module_class(qualified) or (qualified.startswith("torch.optim.") and last[:1].isupper()):
        return Value(kind=Kind.HOST, wrapper=qualified, why=f"annotated `{name}`")  # `encoder: nn.Module`
    if last[:1].isupper() and last not in ("Any", "Callable", "Iterable", "Iterator", "Sequence", "Mapping", "Union",
                                          "Optional", "Type", "TypeVar", "Protocol", "Generic") \
            and not qualified.startswith(("torch.", "numpy.", "np.", "jax.")):
        # An object of another class: not a tensor. Its class is kept (`m: Extractor`): calls of its methods run them.
        return Value(kind=Kind.HOST, wrapper=last, why=f"annotated `{name}`")
    return UNKNOWN


def optimizer_attribute(attr: str) -> Optional[Value]:
    """What `torch.optim.Optimizer` keeps in `attr`: `param_groups`, a list of dicts whose "params" are the
    model's parameters; `state`, a dict keyed by parameter (`state[p]["exp_avg"]`: no tensor indexing)."""
    if attr == "param_groups":
        parameter = UNKNOWN_TENSOR.with_(is_parameter=True, why="a parameter of `param_groups`")
        group = Value(kind=Kind.WRAPPER, wrapper="dict", elements=(_container((parameter,), "list"),), fields=("params",))
        return _container((group,), "list")
    if attr == "state":
        return Value(kind=Kind.WRAPPER, wrapper="defaultdict")
    return None


def _union_value(sides: list[cst.BaseExpression], index: Optional[ModuleIndex], depth: int) -> Value:
    """`Tensor | None` is a tensor (a join: either side's evidence counts); `int | Tensor` may be a plain number and
    `Tensor | Any` may be anything (nothing known). `list[int] | Tensor` stays a maybe-tensor: such grids are device
    tensors in the models that pass them."""
    if any(_says_nothing(side) for side in sides):
        return UNKNOWN
    values = [annotation_value(side, index, depth + 1) for side in sides
              if not (isinstance(side, cst.Name) and side.value == "None")]
    if any(v.is_tensor for v in values) and any(v.kind in (Kind.INT, Kind.HOST) for v in values):
        return UNKNOWN
    result = UNKNOWN
    for value in values:
        result = _annotation_join(result, value)
    return result


def _annotation_join(a: Value, b: Value) -> Value:
    """`Optional[X]`: None adds nothing; an unknown alternative does not hide a tensor one."""
    if a.kind is Kind.UNKNOWN or (a.kind is Kind.HOST and b.kind is not Kind.UNKNOWN):
        return b
    if b.kind is Kind.UNKNOWN or b.kind is Kind.HOST:
        return a
    return join(a, b)


_PRINTER = cst.Module(body=[])


def _text(node: cst.CSTNode) -> str:
    return code_for_node(_PRINTER, node)


def docstring_value(docstring: Optional[str], name: str) -> Value:
    """A parameter's type as its function's docstring gives it (Google, NumPy or Sphinx style, or
    `name: LongTensor of ...` prose)."""
    if not docstring or name not in docstring:
        return UNKNOWN
    texts = []
    for match in re.finditer(_DOC_PARAM.format(name=re.escape(name)), docstring):
        texts.append(match.group(1) or match.group(2) or "")
    for match in re.finditer(rf":type\s+{re.escape(name)}\s*:\s*([^\n]*)", docstring):
        texts.append(match.group(1))
    for match in re.finditer(rf":param\s+[\w.\[\], ]*?\b{re.escape(name)}\s*:\s*([^\n]*)", docstring):
        texts.append(match.group(1))
    for text in texts:
        head = text[:80]
        found = _DOC_TENSOR.search(head)
        if found:
            kind = (found.group(1) or "") if found.group(0) != "tensor" else ""
            facts = _TENSOR_ANNOTATIONS.get(f"{kind}Tensor", {}) if kind else {}
            if re.search(r"\bmask\b", head, re.I):
                facts = {**facts, "bool_mask": True, "zero_dim": False}
            return Value(kind=Kind.TENSOR, why=f"docstring says `{name}` is a tensor", **facts)  # type: ignore[arg-type]
        if _DOC_ARRAY.search(head):
            return Value(kind=Kind.ARRAY, why=f"docstring says `{name}` is an array")
    return UNKNOWN


def collect_usage(function: cst.CSTNode) -> dict[str, frozenset[str]]:
    """For each plain name in a function, the attributes and methods read off it (`mask.any()` -> {"any"})."""
    found: dict[str, set[str]] = {}
    for node in descendants(function):
        if type(node) is cst.Attribute and type(node.value) is cst.Name:  # type: ignore[attr-defined]
            found.setdefault(node.value.value, set()).add(node.attr.value)  # type: ignore[attr-defined]
    return {name: frozenset(attrs) for name, attrs in found.items()}


looks_like_mask_name = sem.looks_like_mask_name


class Evaluator:
    """Expression -> Value in an environment. One per flow (function walk)."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.index = env.index
        self._cpu_names: frozenset[str] = frozenset()
        # Values already computed during the current outermost `evaluate` (the environment does not change
        # inside one): a receiver is read both to resolve a call and to type the method, and a chain of
        # calls would otherwise be evaluated 2**depth times. Keyed by node and locals identity; the entry
        # keeps both alive so their ids cannot be reused.
        self._memo: Optional[dict[tuple[int, int], tuple[Value, cst.CSTNode, Locals]]] = None
        # The same values kept from one outermost `evaluate` to the next while the flow stands still (see
        # `keep_values`): rules ask for each link of a chain in turn, and each would evaluate the links below.
        self._kept: Optional[dict[tuple[int, int], tuple[Value, cst.CSTNode, Locals]]] = None
        self._long_prefixes: dict[tuple[int, int], tuple[cst.CSTNode, str]] = {}  # for `short_source`

    def configure(self, cpu_names: frozenset[str]) -> None:
        self._cpu_names = cpu_names

    def keep_values(self) -> None:
        """Keep computed values across evaluations until `forget_values`: the walker calls this while rules
        read the expressions of one statement, where nothing is bound and no context changes."""
        if self._kept is None:
            self._kept = {}

    def forget_values(self) -> None:
        """The flow is about to change (a binding, a statement, a context): values kept so far may be stale."""
        self._kept = None

    # ------------------------------------------------------------------ names and text
    def qualify(self, node: cst.BaseExpression) -> Optional[str]:
        return self.index.qualify(node)

    @staticmethod
    def source(node: cst.CSTNode) -> str:
        name = dotted_name(node) if isinstance(node, cst.BaseExpression) else None
        return name if name is not None else _text(node)

    def short_source(self, node: cst.CSTNode, limit: int = 60) -> str:
        return short_text(node, self.source, limit, self._long_prefixes)

    # ------------------------------------------------------------------ entry points
    def value_of(self, node: cst.BaseExpression) -> Value:
        try:
            return self.evaluate(node, {})
        except RecursionError:
            stack.ran_out()
            return UNKNOWN

    def evaluate(self, node: cst.BaseExpression, local: Locals) -> Value:
        memo = self._memo
        if memo is None:
            self._memo = self._kept if self._kept is not None else {}
            try:
                return self.evaluate(node, local)
            finally:
                self._memo = None
        # Every empty scope is the same scope: callers pass a fresh `{}` (`local or {}`), and keying those
        # apart re-evaluated a receiver once per caller, 2**depth times down a chain of subscripts.
        key = (id(node), id(local) if local else 0)
        hit = memo.get(key)
        if hit is not None:
            return hit[0]
        value = self._evaluate(node, local)
        memo[key] = (value, node, local)
        return value

    def _evaluate(self, node: cst.BaseExpression, local: Locals) -> Value:
        kind = type(node)
        if kind is cst.Name:
            name = node.value  # type: ignore[attr-defined]
            if name in local:
                return local[name]
            if name in ("True", "False", "None"):
                return HOST
            found = self.env.lookup(name)
            if found.kind is Kind.UNKNOWN and found.device is Device.UNKNOWN and self._module_function(name):
                return function_reference(None, name)  # `fn = eager_forward`: the function itself
            return found
        if kind is cst.Integer:
            return INT
        if kind is cst.SimpleString and node.value.lstrip("rbRB").strip("'\"").startswith(sem.DEVICE_STRING_PREFIXES):  # type: ignore[attr-defined]
            return _DEVICE_VALUE  # `"cuda:0"`: what `.to()` reads as a device
        if kind in (cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Ellipsis):
            return HOST
        if kind is cst.UnaryOperation:
            return self._unary(node, local)  # type: ignore[arg-type]
        if kind is cst.BinaryOperation:
            return self._binary(node, local)  # type: ignore[arg-type]
        if kind is cst.Comparison:
            return self._comparison(node, local)  # type: ignore[arg-type]
        if kind is cst.BooleanOperation:
            # `a or b` is one of its operands (`mask or default`): either may be what flows on. In `a and b`,
            # `b` runs only where `a` held (`isinstance(w, float) and w == 0.0`).
            left = self.evaluate(node.left, local)  # type: ignore[attr-defined]
            inner = local
            narrowed = self.narrowings(node.left, isinstance(node.operator, cst.And), local)  # type: ignore[attr-defined]
            if narrowed:
                inner = {**local, **dict(narrowed)}
            right = self.evaluate(node.right, inner)  # type: ignore[attr-defined]
            return join(left, right) if left.is_tensor or right.is_tensor else UNKNOWN
        if kind is cst.IfExp:
            return join(self.evaluate(node.body, local), self.evaluate(node.orelse, local))  # type: ignore[attr-defined]
        if kind is cst.Attribute:
            return self._attribute(node, local)  # type: ignore[arg-type]
        if kind is cst.Subscript:
            return self._subscript(node, local)  # type: ignore[arg-type]
        if kind is cst.Call:
            return self._call(node, local)  # type: ignore[arg-type]
        if kind in (cst.List, cst.Tuple, cst.Set):
            elements = tuple(self.evaluate(e.value, local) for e in node.elements if isinstance(e, cst.Element))  # type: ignore[attr-defined]
            if kind is cst.List and elements and all(e.kind is Kind.INT for e in elements):
                return Value(kind=Kind.INT_LIST)
            return _container(elements, kind.__name__.lower())
        if kind is cst.Dict:
            items = [e for e in node.elements if isinstance(e, cst.DictElement)]  # type: ignore[attr-defined]
            elements = tuple(self.evaluate(e.value, local) for e in items)
            container = _container(elements, "dict")
            keys = tuple(str(e.key.evaluated_value) if isinstance(e.key, cst.SimpleString) else None for e in items)
            return container.with_(fields=keys) if len(container.elements) == len(keys) and any(keys) else container
        if kind in (cst.ListComp, cst.GeneratorExp, cst.SetComp):
            inner = self._comprehension_locals(node.for_in, local)  # type: ignore[attr-defined]
            element = self.evaluate(node.elt, inner)  # type: ignore[attr-defined]
            if kind is cst.ListComp and element.kind is Kind.INT:
                return Value(kind=Kind.INT_LIST)
            return _container((element,), "list")
        if kind is cst.DictComp:
            inner = self._comprehension_locals(node.for_in, local)  # type: ignore[attr-defined]
            return _container((self.evaluate(node.value, inner),), "dict")  # type: ignore[attr-defined]
        if kind is cst.NamedExpr:
            return self.evaluate(node.value, local)  # type: ignore[attr-defined]
        return UNKNOWN

    def _comprehension_locals(self, comp: cst.CompFor, local: Locals) -> Locals:
        inner = dict(local)
        current: Optional[cst.CompFor] = comp
        while current is not None:
            self.bind_target_into(current.target, self.iterate(current.iter, inner), inner)
            current = current.inner_for_in
        return inner

    # ------------------------------------------------------------------ operators
    def _unary(self, node: cst.UnaryOperation, local: Locals) -> Value:
        if isinstance(node.operator, cst.Not):
            return HOST  # `not t` is a Python bool (it calls `bool(t)`)
        operand = self.evaluate(node.expression, local)
        if operand.kind is Kind.INT:
            return INT
        if operand.is_tensor:
            mask = isinstance(node.operator, cst.BitInvert) and operand.bool_mask
            return fresh(contiguous=operand.contiguous, device=operand.device, bool_mask=mask,
                         zero_dim=operand.zero_dim, reduced=operand.reduced, why=operand.why)
        if operand.device is Device.CPU:
            return UNKNOWN.with_(device=Device.CPU, guessed_cpu=operand.guessed_cpu)  # `-x` of host metadata
        return UNKNOWN

    def _binary(self, node: cst.BinaryOperation, local: Locals) -> Value:
        left = self.evaluate(node.left, local)
        right = self.evaluate(node.right, local)
        return binary_result(node.operator, left, right)

    def _comparison(self, node: cst.Comparison, local: Locals) -> Value:
        if any(isinstance(c.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) for c in node.comparisons):
            return HOST
        if any(isinstance(c.comparator, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)) for c in node.comparisons) \
                or isinstance(node.left, (cst.SimpleString, cst.ConcatenatedString)):
            return HOST  # a tensor is never compared with a string: whatever this is, the result is a Python bool
        operands = [self.evaluate(node.left, local)] + [self.evaluate(c.comparator, local) for c in node.comparisons]
        tensors = [v for v in operands if v.is_tensor]
        if tensors:
            # Compared with a number, a tensor stays where it is (a Python float or int is no device).
            return fresh(contiguous=None, device=_elementwise_device(tensors), bool_mask=True,
                         zero_dim=True if all(v.zero_dim for v in tensors) else (False if any(v.zero_dim is False for v in tensors) else None),
                         reduced=all(v.reduced or v.zero_dim for v in tensors), why=tensors[0].why)
        if any(v.kind is Kind.ARRAY for v in operands):
            return Value(kind=Kind.ARRAY)
        if any(v.device is Device.CPU for v in operands) and all(
                v.device is Device.CPU or v.kind in (Kind.INT, Kind.HOST) for v in operands):
            return UNKNOWN.with_(device=Device.CPU)  # `query_lens_cpu == 1`: whatever it is, it is on the host
        return UNKNOWN

    # ------------------------------------------------------------------ attributes
    def _attribute(self, node: cst.Attribute, local: Locals) -> Value:
        name = dotted_name(node)
        attr = node.attr.value
        if name is not None:
            if name in local:
                return local[name]
            head = name.split(".")[0]
            bound = self.env.lookup(name) if head == "self" else UNKNOWN
            if bound is not UNKNOWN:
                return bound
            if head == "self" and self._moved_to_cpu_in_class(name[5:]):
                return UNKNOWN_TENSOR.with_(device=Device.CPU)  # every method sets it to `x.to("cpu")`
            if attr in self._cpu_names:
                return UNKNOWN_TENSOR.with_(device=Device.CPU)  # `batch.seq_lens_cpu` with `cpu-names = ["seq_lens_cpu"]`
            if sem.named_host_side(attr) and head != "self":
                # `cm.query_start_loc_cpu`: named for the host (the same convention `lookup` reads for names).
                return UNKNOWN.with_(device=Device.CPU)
        if sem.canonical_dtype(self.qualify(node)) is not None:
            return _DTYPE_VALUE  # `torch.float16`
        receiver = self.evaluate(node.value, local)
        if attr in ("dtype", "device"):
            return _DTYPE_VALUE if attr == "dtype" else _DEVICE_VALUE
        if attr in ("shape", "ndim", "is_cuda", "requires_grad", "grad_fn", "layout", "is_meta"):
            return HOST
        if attr in sem.VIEW_ATTRIBUTES and (receiver.is_tensor or attr in ("T", "mT", "mH")):
            return self.view_of(node.value, receiver, "." + attr)
        if attr == "data" and (receiver.is_tensor or receiver.kind is Kind.UNKNOWN and self._tensor_receiver_by_name(node.value)):
            return self.view_of(node.value, receiver if receiver.is_tensor else UNKNOWN_TENSOR.with_(is_parameter=True), ".data")
        if attr == "grad" and (receiver.is_tensor or receiver.kind is Kind.UNKNOWN):
            if receiver.is_tensor or isinstance(node.value, cst.Name) and "param" in node.value.value.lower():
                return Value(kind=Kind.TENSOR, device=receiver.device, why="a `.grad`")
        if receiver.kind is Kind.TENSOR_SEQUENCE and attr in ("indices", "values"):
            # `x.topk(k).indices`, `torch.sort(x).values`: the named fields of a (values, indices) result.
            element = receiver.element()
            return element.with_(index_like=attr == "indices", zero_dim=False if attr == "indices" else element.zero_dim)
        if receiver.kind is Kind.WRAPPER and receiver.fields:
            # A field of a dataclass or namedtuple built here (`Entry(embedding=piece).embedding`).
            return receiver.field(attr)
        if receiver.kind is Kind.HOST and (receiver.wrapper or "").startswith("torch.optim."):
            known = optimizer_attribute(attr)  # `loaded.state` of `loaded: torch.optim.Optimizer`
            if known is not None:
                return known
        if name is not None and name.startswith("self.") and name.count(".") == 1:
            return self._self_attribute(attr)
        if receiver.kind is Kind.UNKNOWN or (receiver.kind is Kind.HOST and receiver.wrapper is not None):
            typed = self._field_value(node.value, attr)
            if typed is not None:
                return typed  # `cm.is_prefilling` of `cm: CommonAttentionMetadata` (a dataclass field `Optional[Tensor]`)
        if attr in sem.PARAMETER_ATTRIBUTE_NAMES and (receiver.kind is Kind.UNKNOWN or self._is_module_object(receiver)) \
                and not name == f"self.{attr}":
            # `layer.weight`, `self.q_proj.weight`, `m.bias`: a module's parameter.
            return UNKNOWN_TENSOR.with_(is_parameter=True, why=f"a module's `.{attr}`")
        return UNKNOWN

    def _field_value(self, receiver: cst.BaseExpression, attr: str) -> Optional[Value]:
        """What a class annotates its field `attr` as, for a receiver whose class the code names."""
        finder = getattr(self.env, "receiver_class", None)
        info = finder(receiver) if finder is not None else None
        if info is None or attr not in info.field_annotations or self.index.classes.get(info.name) is not info:
            # A class of this module only: the prefilter reads the same fields. Reading those of classes in other
            # modules too found 42 more syncs on sglang (`forward_batch.seq_lens.cpu()`), but for the prefilter to
            # see them it must read those modules for every file: 50% slower (issue 26's speed budget).
            return None
        value = self._annotated(info.field_annotations[attr])
        return value if value.kind is not Kind.UNKNOWN else None

    def _tensor_receiver_by_name(self, node: cst.BaseExpression) -> bool:
        """`x.weight.data`, `param.data`: `.data` of what is named like a parameter or read off a module."""
        name = dotted_name(node) or ""
        last = name.split(".")[-1]
        return last in sem.PARAMETER_ATTRIBUTE_NAMES or last in ("param", "p", "parameter", "tensor", "t")

    def _moved_to_cpu_in_class(self, path: str) -> bool:
        info = self.index.classes.get(self.env.class_name or "")
        return info is not None and path in info.cpu_paths

    def _module_function(self, name: str) -> bool:
        """`name` is a function defined at the module's top level (and so the summaries can run it)."""
        summaries = self.env.summaries
        return summaries is not None and summaries.functions.get(FunctionKey(None, name)) is not None

    def _self_attribute(self, attr: str) -> Value:
        info = self.index.classes.get(self.env.class_name or "")
        if info is not None:
            if attr in info.methods and attr not in info.assigned_attributes and self.env.summaries is not None:
                owner = self.env.summaries.callgraph.defining_class(info.name, attr)
                if owner is not None:
                    return function_reference(owner, attr)  # `fn = self.default_rope`: the method itself
            if attr in info.tensor_attributes:
                return UNKNOWN_TENSOR.with_(is_parameter=True, label=f"self.{attr}")  # nn.Parameter(...) or register_buffer
            if attr in info.module_list_classes:
                # `self.layers = nn.ModuleList([Layer(...) for ...])`: a list of modules whose calls run `Layer.forward`.
                return _container((Value(kind=Kind.HOST, wrapper=info.module_list_classes[attr]),), "list")
            if attr in info.submodule_attributes:
                return UNKNOWN  # `self.q_proj = nn.Linear(...)`
            if attr in info.host_attributes:
                # `self.mim_weight = config.mim_weight`: host data; if it ever is a tensor, a CPU one.
                return Value(device=Device.CPU)
            if attr in info.container_attributes:
                # What it holds is asked of the summaries only when an item is read (`self.queue.get()`).
                return Value(kind=Kind.WRAPPER, wrapper=ATTRIBUTE_CONTAINER, base=f"{info.name}.{attr}")
        if info is not None and info.is_optimizer and attr not in info.assigned_attributes:
            known = optimizer_attribute(attr)
            if known is not None:
                return known
        # (`self.use_bias`, `self.has_bias`, `self.disable_merger_proj`: flags by their prefix, not tensors.)
        if (attr in ("weight", "bias") or attr.endswith(("_weight", "_bias", "_proj"))) and not attr.startswith(sem.FLAG_PREFIXES):
            return UNKNOWN_TENSOR.with_(is_parameter=True, label=f"self.{attr}")
        return UNKNOWN

    def contents(self, value: Value) -> Value:
        """A container attribute of `self` (as `_self_attribute` gives it) with what its class puts in it."""
        if value.wrapper != ATTRIBUTE_CONTAINER or value.base is None:
            return value
        summaries = self.env.summaries
        if summaries is None or getattr(self.env, "shallow", False):
            return UNKNOWN
        owner, _, attr = value.base.partition(".")
        found = summaries.attribute_value(owner, attr)
        return found if found is not None else UNKNOWN

    # ------------------------------------------------------------------ isinstance
    def narrowings(self, test: cst.BaseExpression, holds: bool, local: Optional[Locals] = None) -> list[tuple[str, Value]]:
        """What names are where `test` holds (or does not): `isinstance(x, int)`, `not isinstance(x, torch.Tensor)`,
        `x.is_contiguous()`, and `a and b` conjunctions of them."""
        local = local or {}
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self.narrowings(test.expression, not holds, local)
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and holds:
            return self.narrowings(test.left, True, local) + self.narrowings(test.right, True, local)
        on_cpu = _cpu_test(test)
        if on_cpu is not None:
            # `if t.is_cuda:` ... `else:`, `if t.device.type != "cpu": return None`: the tensor is on the
            # device in one branch, on the host in the other.
            # Only `is_cuda` says "on the device": the branch of `if t.device.type != "cpu": t = t.cpu()`
            # normalises what a caller might pass and most often never runs, so it is not a finding.
            tensor, says_cpu = on_cpu
            subject = dotted_name(tensor)
            current = self.evaluate(tensor, local)
            if subject is None or not current.is_tensor:
                return []
            if says_cpu == holds:
                return [(subject, current.with_(device=Device.CPU))]
            is_cuda = isinstance(test, cst.Attribute) and test.attr.value == "is_cuda"
            return [(subject, current.with_(device=Device.ACCELERATOR))] if is_cuda else []
        if isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and test.func.attr.value == "is_contiguous" \
                and not test.args and holds:
            # `if x.is_contiguous():` / `assert x.is_contiguous()`: reshapes of `x` there are views.
            subject = dotted_name(test.func.value)
            current = self.evaluate(test.func.value, local)
            return [(subject, current.with_(contiguous=True))] if subject is not None and current.is_tensor else []
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
                and len(test.args) == 2):
            return []
        subject = dotted_name(test.args[0].value)
        if subject is None or ("." in subject and not subject.startswith("self.") and holds is False):
            return []
        kinds = test.args[1].value
        types = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
        current = self.evaluate(test.args[0].value, local)
        if not holds:
            # `else` of `isinstance(gate, torch.Tensor)`: whatever `gate` is there, it is not a tensor.
            tensor_types = [t for t in types if (self.qualify(t) or dotted_name(t) or "").split(".")[-1] in ("Tensor", "Parameter")]
            return [(subject, UNKNOWN)] if tensor_types and len(tensor_types) == len(types) and current.is_tensor else []
        values = [self._isinstance_value(t, current) for t in types]
        if any(v is None for v in values):
            return []
        result = values[0]
        for value in values[1:]:
            result = join(result, value)  # type: ignore[arg-type]
        return [(subject, result)]  # type: ignore[list-item]

    def _isinstance_value(self, kind: cst.BaseExpression, current: Value) -> Optional[Value]:
        """What `isinstance(x, kind)` says `x` is (None: it says nothing the analysis uses)."""
        name = self.qualify(kind) or dotted_name(kind) or ""
        last = name.split(".")[-1]
        if last == "int":
            return INT
        if last in ("float", "bool", "str", "bytes", "complex"):
            return HOST
        if last in ("Tensor", "Parameter") and (name.startswith("torch") or last == name):
            if current.kind is Kind.HOST or (current.kind is Kind.UNKNOWN and current.cpu):
                # A value the code builds from literals or config reads is on the host, if a tensor at all
                # (`idx = self.fullatt_block_indexes; if isinstance(idx, torch.Tensor): idx = idx.tolist()`).
                return UNKNOWN_TENSOR.with_(device=Device.CPU)
            return current if current.is_tensor else UNKNOWN_TENSOR.with_(device=current.device)
        if last in ("list", "tuple", "List", "Tuple", "Sequence"):
            return current if current.kind in (Kind.WRAPPER, Kind.TENSOR_SEQUENCE, Kind.INT_LIST) else Value(kind=Kind.WRAPPER, wrapper="list")
        if last in ("dict", "Dict", "Mapping"):
            return current if current.kind is Kind.WRAPPER else Value(kind=Kind.WRAPPER, wrapper="dict")
        return None

    # ------------------------------------------------------------------ views
    def view_of(self, base_node: cst.BaseExpression, base: Value, origin: str, partial: Optional[bool] = None) -> Value:
        if base.is_view or base.is_maybe_view_of_view:
            root = base.base
            inherited = base.partial
            made = base.base_made
        else:
            root = base.label or self.short_source(base_node)
            inherited = False
            made = base.origin if base.is_fresh else None
        # A view of a part (of a view) is a part: `x[:2].t()` still pins all of `x`.
        part = inherited or (sem.is_partial_view_op(origin) if partial is None else partial)
        # A view of a part keeps the op that made the part (`narrow`, not the `.detach()` after it) for messages.
        shown = base.origin if inherited and base.is_view and base.origin else origin
        return Value(kind=Kind.TENSOR, provenance=Provenance.VIEW, base=root, origin=shown,
                     contiguous=None, device=base.device, is_parameter=base.is_parameter, partial=part,
                     zero_dim=_view_zero_dim(origin, base.zero_dim), why=base.why,
                     copy_of=base.copy_of, copy_op=base.copy_op, base_made=made, guessed_cpu=base.guessed_cpu,
                     dtype=None if origin in (".view(dtype)", ".real", ".imag") else base.dtype,
                     grad_leaf=base.grad_leaf and origin not in (".data", ".detach()"))  # a view of a leaf refuses writes too

    # ------------------------------------------------------------------ subscripts
    def index_kind(self, node: cst.Subscript, local: Optional[Locals] = None) -> IndexKind:
        """Basic (the result is a view) or advanced (a gathered copy), or unknown (also when what is
        indexed is known not to be a tensor: a dict, a list, a string)."""
        local = local or {}
        if self._keyed_by_string(node):
            return IndexKind.UNKNOWN
        receiver = _as_indexed(node, self.evaluate(node.value, local))
        if receiver.kind in (Kind.WRAPPER, Kind.TENSOR_SEQUENCE, Kind.HOST, Kind.INT_LIST):
            return IndexKind.UNKNOWN
        kinds = [self._element_index_kind(e, node, local) for e in node.slice]
        if IndexKind.ADVANCED in kinds:
            return IndexKind.ADVANCED
        if IndexKind.UNKNOWN in kinds:
            return IndexKind.UNKNOWN
        return IndexKind.BASIC

    def _element_index_kind(self, element: cst.SubscriptElement, subscript: cst.Subscript, local: Locals) -> IndexKind:
        index = element.slice
        if isinstance(index, cst.Slice):
            return IndexKind.BASIC
        return self._expression_index_kind(index.value, subscript, local)

    def _expression_index_kind(self, expr: cst.BaseExpression, subscript: cst.Subscript, local: Locals) -> IndexKind:
        if isinstance(expr, (cst.Integer, cst.Ellipsis)):
            return IndexKind.BASIC
        if isinstance(expr, cst.Name) and expr.value in ("None", "True", "False"):
            return IndexKind.BASIC
        if isinstance(expr, (cst.List, cst.ListComp)):
            return IndexKind.ADVANCED
        if isinstance(expr, cst.Tuple):
            kinds = [self._expression_index_kind(e.value, subscript, local) for e in expr.elements]
            if IndexKind.ADVANCED in kinds:
                return IndexKind.ADVANCED
            return IndexKind.UNKNOWN if IndexKind.UNKNOWN in kinds else IndexKind.BASIC
        if isinstance(expr, cst.Comparison):
            # `x[x > 0]`: a comparison that involves a tensor (or the indexed value itself) is a mask.
            value = self.evaluate(expr, local)
            if value.bool_mask and not value.zero_dim:
                return IndexKind.ADVANCED
            operands = [expr.left] + [c.comparator for c in expr.comparisons]
            if any(o.deep_equals(subscript.value) for o in operands):
                return IndexKind.ADVANCED
            return IndexKind.UNKNOWN
        value = self.evaluate(expr, local)
        kind = value_index_kind(value)
        if kind is not IndexKind.UNKNOWN or value.kind is not Kind.UNKNOWN:
            return kind
        # Nothing known of the value: how the name is used, and what it is called.
        name = dotted_name(expr)
        if name is None:
            return IndexKind.UNKNOWN
        if "." not in name and self.env.usage_of(name) & sem.ARRAY_METHODS:
            return IndexKind.ADVANCED  # `mask.any()` elsewhere in the function: an array
        if sem.looks_like_index_name(name):
            return IndexKind.ADVANCED
        return IndexKind.UNKNOWN

    def _subscript(self, node: cst.Subscript, local: Locals) -> Value:
        receiver = self.contents(self.evaluate(node.value, local))
        receiver = _as_indexed(node, receiver)
        single = len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
        if receiver.kind in (Kind.TENSOR_SEQUENCE, Kind.WRAPPER):
            if receiver.kind is Kind.TENSOR_SEQUENCE and not single:
                return receiver.with_(whole_partition=False)  # a slice of a split result: views of part of it
            if single:
                key = node.slice[0].slice.value  # type: ignore[attr-defined]
                if isinstance(key, cst.SimpleString) and receiver.fields:
                    return receiver.field(str(key.evaluated_value))  # `d["key"]` of a dict literal
                if isinstance(key, cst.Integer) and receiver.kind is Kind.WRAPPER and receiver.wrapper == "tuple" \
                        and int(key.evaluated_value) < len(receiver.elements):
                    return receiver.elements[int(key.evaluated_value)]
                return receiver.element()
            return receiver if receiver.kind is Kind.WRAPPER and receiver.wrapper in ("list", "tuple") else UNKNOWN
        if receiver.kind is Kind.INT_LIST:
            return INT if single else receiver
        if receiver.kind is Kind.HOST and isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
            return INT if single else HOST  # `x.shape[-1]`: a Python int
        if receiver.kind is Kind.HOST or self._keyed_by_string(node):
            return UNKNOWN  # `d["key"]`: tensors are not indexed by strings
        kind = self.index_kind(node, local)
        # `arr[:, 0]` on a known host value (a NumPy array from `.numpy()`) is not tensor indexing; `x[idx]` with a
        # tensor index is (only tensors and arrays take one).
        tensor_like = receiver.is_tensor or (receiver.kind is Kind.UNKNOWN and (
            self._tensor_style_index(node) or self._indexed_by_tensor(node, local)))
        if not tensor_like:
            # `lens_cpu[1:]` of a value known only to be on the host: whatever it is, it stays there.
            return UNKNOWN.with_(device=Device.CPU) if receiver.kind is Kind.UNKNOWN and receiver.device is Device.CPU else UNKNOWN
        if kind is IndexKind.BASIC:
            view = self.view_of(node.value, receiver, "[" + self.short_source(node, 200).split("[", 1)[-1],
                                partial=not self._whole_index(node))
            if self._selects_last_dim(node, local):
                view = view.with_(contiguous=False)
            if self._drops_a_dimension(node, local):
                view = view.with_(reduced=True)  # `t[i]` of a 1-D `t` is 0-dim
            if any(isinstance(element.slice, cst.Slice) for element in node.slice):
                view = view.with_(zero_dim=False)  # `t[:n]` keeps the dimension it slices
            return view
        if kind is IndexKind.ADVANCED:
            # A gathered copy: it owns its storage; `origin`/`base` say where it was gathered from. It is
            # row-major when the input is (advanced indexing keeps a transposed input's layout).
            contiguous = True if receiver.contiguous else None
            return fresh(contiguous=contiguous, device=receiver.device, origin=ADVANCED_INDEX,
                         base=self.short_source(node.value), zero_dim=False, why=receiver.why)
        return Value(kind=Kind.TENSOR, device=receiver.device, why=receiver.why)

    def _selects_last_dim(self, node: cst.Subscript, local: Locals) -> bool:
        """`x[..., 0]`: an integer index on the last dimension leaves every stride a multiple of its
        size, so the view is not contiguous (unless that size is 1, or one element is left)."""
        if len(node.slice) != 2:
            return False
        first, last = node.slice[0].slice, node.slice[1].slice
        if not (isinstance(first, cst.Index) and isinstance(first.value, cst.Ellipsis)):
            return False
        return isinstance(last, cst.Index) and self.evaluate(last.value, local).kind is Kind.INT

    def _drops_a_dimension(self, node: cst.Subscript, local: Locals) -> bool:
        """Some index is an integer (or a 0-dim tensor): the result has fewer dimensions."""
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index) and not isinstance(index.value, cst.Ellipsis) and not (
                    isinstance(index.value, cst.Name) and index.value.value == "None"):
                if self.evaluate(index.value, local).kind is Kind.INT or isinstance(index.value, cst.Integer):
                    return True
        return False

    def _indexed_by_tensor(self, node: cst.Subscript, local: Locals) -> bool:
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index):
                value = self.evaluate(index.value, local)
                if value.is_tensor and not value.reduced and not value.zero_dim:
                    return True
        return False

    @staticmethod
    def _keyed_by_string(node: cst.Subscript) -> bool:
        index = node.slice[0].slice if len(node.slice) == 1 else None
        return isinstance(index, cst.Index) and isinstance(index.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))

    @staticmethod
    def _whole_index(node: cst.Subscript) -> bool:
        """`x[:]`, `x[...]`, `x[None]`, `x[:, None]`: a view of all of `x`, not of a part."""
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Slice):
                if index.lower is not None or index.upper is not None or index.step is not None:
                    return False
            elif not (isinstance(index.value, cst.Ellipsis) or (isinstance(index.value, cst.Name) and index.value.value == "None")):
                return False
        return True

    @staticmethod
    def _tensor_style_index(node: cst.Subscript) -> bool:
        """`x[:, 0]`, `x[..., None]`: multi-dimensional indexing that lists and dicts do not accept."""
        if len(node.slice) < 2:
            element = node.slice[0].slice if node.slice else None
            return isinstance(element, cst.Index) and isinstance(element.value, cst.Ellipsis)
        return any(
            isinstance(e.slice, cst.Slice)
            or (isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.Ellipsis,)))
            or (isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Name) and e.slice.value.value == "None")
            for e in node.slice
        )

    # ------------------------------------------------------------------ calls
    def _call(self, node: cst.Call, local: Locals) -> Value:
        func = node.func
        qualified = self.qualify(func)
        if (qualified or dotted_name(func)) in sem.PARAMETER_CONSTRUCTORS:
            # `nn.Parameter(t)`: a leaf that requires grad (unless `requires_grad=False`), t's storage.
            data = self.evaluate(node.args[0].value, local) if node.args else UNKNOWN
            off = self.keyword(node, "requires_grad")
            leaf = off is None or not (isinstance(off.value, cst.Name) and off.value.value == "False")
            return UNKNOWN_TENSOR.with_(device=data.device, dtype=data.dtype, grad_leaf=leaf, why="an `nn.Parameter`")
        if qualified is not None and (qualified.startswith("torch.") or qualified.startswith("numpy.")):
            return self._torch_function(node, qualified, local)
        if (qualified or dotted_name(func) or "").split(".")[-1] in sem.CONTAINER_CLASS_NAMES:
            return Value(kind=Kind.WRAPPER, wrapper=(qualified or dotted_name(func) or "").split(".")[-1].lower())
        if sem.named_host_side(dotted_name(func) or ""):
            # `self._mask_cpu()`, `compute_lens_cpu(...)`: a function named for the CPU returns host tensors.
            result = self._call_result(node, func, qualified, local)
            return result.with_(device=Device.CPU) if result.kind in (Kind.TENSOR, Kind.UNKNOWN) else result
        return self._call_result(node, func, qualified, local)

    def _call_result(self, node: cst.Call, func: cst.BaseExpression, qualified: Optional[str], local: Locals) -> Value:
        summaries = self.env.summaries
        if summaries is not None:
            result = summaries.call_value(node, self, local)
            if result is not None:
                return result
        if isinstance(func, cst.Attribute):
            held = self._torch_module_attribute(func)
            if held is not None:
                return self._object_call(node, held, local)  # `self.proj(x)`, `self.proj = nn.Linear(...)`
            result = self._method(node, func, local)
            if result.kind is Kind.UNKNOWN and self._calls_a_module(func, local) \
                    and not func.attr.value.startswith(sem.PREDICATE_PREFIXES):
                return self._module_output(node, local, f"`{self.short_source(func)}(…)`")
            return result
        if isinstance(func, cst.Name):
            held = local[func.value] if func.value in local else self.env.lookup(func.value)
            if held.kind is Kind.HOST and held.wrapper is not None:
                return self._object_call(node, held.wrapper, local)
            result = self._builtin_or_constructor(node, func.value, qualified, local)
            if result.kind is Kind.UNKNOWN and func.value not in self.index.aliases and func.value not in sem.BUILTIN_NAMES \
                    and not func.value.startswith(sem.PREDICATE_PREFIXES) \
                    and (func.value in local or self.env.lookup(func.value) is not UNKNOWN or self._is_parameter_name(func.value)):
                return self._module_output(node, local, f"`{func.value}(…)`")  # a callable passed in: `f(x)`, `model(x)`
            return result
        return UNKNOWN

    def _is_module_object(self, value: Value) -> bool:
        """An instance of a module class (`torch.nn.Linear(...)`, a module class of this file)."""
        if value.kind is not Kind.HOST or value.wrapper is None:
            return False
        info = self.index.classes.get(value.wrapper)
        return sem.nn_module_class(value.wrapper) or (info is not None and info.is_module)

    def _torch_module_attribute(self, func: cst.Attribute) -> Optional[str]:
        """The `torch.nn` class of `self.<attr>` when the class assigns it one (`self.proj = nn.Linear(...)`)."""
        if not (isinstance(func.value, cst.Name) and func.value.value == "self"):
            return None
        info = self.index.classes.get(self.env.class_name or "")
        return info.torch_module_attributes.get(func.attr.value) if info is not None else None

    def _calls_a_module(self, func: cst.Attribute, local: Locals) -> bool:
        """`self.proj(x)`, `self.layers[i](x)`-like calls of something a module holds (not a method of its class)."""
        receiver = dotted_name(func.value)
        if receiver != "self":
            return False
        class_name = self.env.class_name
        summaries = self.env.summaries
        if summaries is not None and summaries.callgraph.defining_class(class_name, func.attr.value) is not None:
            return False
        info = self.index.classes.get(class_name or "")
        attr = func.attr.value
        if info is None or attr in info.host_attributes:
            return False
        # Held in an attribute the class assigns (`self.vae = vae`, `self.proj = nn.Linear(...)`); a name the
        # class never assigns is a method inherited from elsewhere, which may return anything.
        return attr in info.submodule_attributes or attr in info.assigned_attributes

    def _is_parameter_name(self, name: str) -> bool:
        checker = getattr(self.env, "is_parameter", None)
        return bool(checker and checker(name))

    def _annotated(self, source: str) -> Value:
        """What an annotation written as `source` says a value is."""
        try:
            return annotation_value(cst.parse_expression(source), self.index)
        except Exception:  # noqa: BLE001 - an annotation libcst cannot read back
            return UNKNOWN

    def _module_output(self, node: cst.Call, local: Locals, what: str) -> Value:
        """What a module (or another callable) applied to tensors returns: a new tensor (or a tuple of
        them) on their device. Called without a tensor, nothing is known."""
        inputs = [self.evaluate(a.value, local) for a in node.args if a.keyword is None and not a.star]
        tensors = [v for v in inputs if v.is_tensor]
        if not tensors:
            return UNKNOWN
        return fresh(contiguous=None, device=_elementwise_device(tensors), origin=MODULE_OUTPUT, why=f"returned by {what}")

    def _object_call(self, node: cst.Call, class_name: str, local: Locals) -> Value:
        """A call of an object whose class is known but whose `forward` this module does not define: a
        `torch.nn` layer gives a new tensor on its input's device (a tuple for recurrent layers and attention,
        its input itself for `Identity`/`Dropout`); a module of unknown kind gives a tensor or a tuple of them."""
        module = self.index.classes.get(class_name)
        torch_layer = sem.nn_module_class(class_name)
        if module is None and not torch_layer and self.env.summaries is not None:
            module = self.env.summaries.class_named(class_name)  # a class imported from another module of the project
        if not torch_layer and not (module is not None and module.is_module):
            return UNKNOWN  # an object of another class: its `__call__` is its own business
        inputs = [self.evaluate(a.value, local) for a in node.args if a.keyword is None and not a.star]
        tensors = [v for v in inputs if v.is_tensor]
        device = _elementwise_device(tensors) if tensors else Device.UNKNOWN
        last = class_name.split(".")[-1]
        why = f"returned by `{last}` module"
        output = fresh(contiguous=None, device=device, origin=MODULE_OUTPUT, why=why)
        if module is not None and module.call_returns is not None and self._annotated(module.call_returns).is_tensor:
            return output  # its `forward` (imported, or too long to summarise) is annotated to return a tensor
        if not torch_layer or last in ("Module", "Sequential"):
            return join(output, Value(kind=Kind.WRAPPER, wrapper="tuple", elements=(output,))).with_(origin=MODULE_OUTPUT)
        if last in sem.NN_TUPLE_MODULES:
            return Value(kind=Kind.WRAPPER, wrapper="tuple", elements=(output,))
        if last in sem.NN_IDENTITY_MODULES:
            return inputs[0] if inputs and inputs[0].is_tensor else UNKNOWN_TENSOR.with_(why=why)
        return output

    def _builtin_or_constructor(self, node: cst.Call, name: str, qualified: Optional[str], local: Locals) -> Value:
        if name in ("max", "min", "sum", "abs", "round"):
            # Over tensors (`max(grid[1], grid[2])`) the result is a 0-dim tensor; over ints an int.
            args = [self.evaluate(a.value, local) for a in node.args if a.keyword is None and not a.star]
            tensors = [a for a in args if a.is_tensor]
            if tensors and name != "round":
                return fresh(zero_dim=True, reduced=True, device=_elementwise_device(tensors), why=tensors[0].why)
            return INT
        if name in ("len", "int", "range", "ord", "hash"):
            return INT if name != "range" else HOST
        if name in ("float", "bool", "str", "repr", "isinstance", "print", "id", "callable", "hasattr"):
            return HOST
        if name in ("list", "tuple", "dict", "set", "OrderedDict", "deque", "sorted", "reversed"):
            elements = tuple(self.evaluate(a.value, local) for a in node.args if a.keyword is None)
            if name in ("list", "tuple", "sorted", "reversed", "deque") and len(elements) == 1 and elements[0].kind in (
                    Kind.TENSOR_SEQUENCE, Kind.WRAPPER, Kind.INT_LIST):
                return elements[0]
            if name in ("list", "tuple") and len(elements) == 1 and elements[0].is_tensor:
                return _container((self.iterate(node.args[0].value, local),), name)  # `list(t)`: its rows
            return _container(elements, name)
        if name in ("zip", "enumerate") and node.args and all(a.keyword is None and not a.star for a in node.args):
            return _container((self.iterate(node, local),), "iterator")  # `list(zip(a, b))`: pairs of their items
        if name == "next" and node.args:
            return self.iterate(node.args[0].value, local)
        if name == "iter" and node.args:
            return _container((self.iterate(node.args[0].value, local),), "iterator")
        if name == "getattr" and len(node.args) >= 2:
            return UNKNOWN
        if name == "replace" or qualified in ("dataclasses.replace", "copy.copy"):
            return self._wrapper(node, name, local)
        cls = self.index.classes.get(name)
        if cls is not None and cls.is_module:
            return Value(kind=Kind.HOST, wrapper=name)  # a module of this file: an object whose calls run `forward`
        if (cls is not None and not cls.is_module) or (cls is None and name[:1].isupper() and name not in self.index.aliases):
            return self._wrapper(node, name, local)
        if cls is None and name[:1].isupper():
            target = self.index.aliases.get(name, "")
            if not target.startswith("torch"):
                return self._wrapper(node, name, local)
        return UNKNOWN

    def _wrapper(self, node: cst.Call, name: str, local: Locals) -> Value:
        """An object built from values (`Entry(embedding=piece)`): it holds them, by field name where known."""
        info = self.index.classes.get(name)
        order = info.fields if info is not None else []
        elements = tuple(self.evaluate(a.value, local) for a in node.args)
        fields: list[Optional[str]] = []
        position = 0
        for arg in node.args:
            if arg.keyword is not None:
                fields.append(arg.keyword.value)
            elif not arg.star and position < len(order):
                fields.append(order[position])
                position += 1
            else:
                fields.append(None)
        named = tuple(fields) if any(f is not None for f in fields) else ()
        return Value(kind=Kind.WRAPPER, elements=elements, wrapper=name, fields=named)

    @staticmethod
    def first_arg(node: cst.Call) -> Optional[cst.BaseExpression]:
        for arg in node.args:
            if arg.keyword is None and arg.star == "":
                return arg.value
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in ("input", "self", "tensor", "x"):
                return arg.value
        return None

    @staticmethod
    def keyword(node: cst.Call, name: str) -> Optional[cst.Arg]:
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == name:
                return arg
        return None

    def _torch_function(self, node: cst.Call, qualified: str, local: Locals) -> Value:
        if qualified.startswith("numpy."):
            # NumPy computes on the host: `np.broadcast_to(...)`, `np.arange(n) + offsets`. Its arrays index
            # like lists (they gather).
            return Value(kind=Kind.ARRAY)
        if qualified == "torch.device":
            return _DEVICE_VALUE
        first = self.first_arg(node)
        first_value = self.evaluate(first, local) if first is not None else UNKNOWN
        has_device = self.keyword(node, "device") is not None
        if qualified in sem.SEQUENCE_VIEW_FUNCTIONS and first is not None:
            element = self.view_of(first, first_value if first_value.is_tensor else UNKNOWN_TENSOR, qualified)
            return Value(kind=Kind.TENSOR_SEQUENCE, elements=(element,), origin=qualified, whole_partition=True)
        if qualified in sem.VIEW_FUNCTIONS and first is not None:
            return self.view_of(first, first_value if first_value.is_tensor else UNKNOWN_TENSOR, qualified)
        device = self._device_argument(node, local)
        if qualified in sem.MAYBE_VIEW_FUNCTIONS and first is not None:
            # `torch.as_tensor(list)` builds on the CPU unless told otherwise; a tensor keeps its device.
            host_data = first_value.kind in (Kind.INT, Kind.INT_LIST, Kind.HOST, Kind.ARRAY) or isinstance(first, (cst.List, cst.Tuple, cst.ListComp))
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
            if device is None:
                device = first_value.device if qualified == "torch.tensor" and first_value.is_tensor else Device.CPU
            mask = self._dtype_is_bool(node)
            requires_grad = self.keyword(node, "requires_grad")
            return fresh(contiguous=contiguous, device=device, zero_dim=False if mask and zero_dim is None else zero_dim,
                         index_like=index_like, bool_mask=mask, origin=EMPTY if qualified in sem.EMPTY_FACTORIES else FACTORY,
                         dtype=self._factory_dtype(node, qualified),
                         grad_leaf=requires_grad is not None and not (isinstance(requires_grad.value, cst.Name)
                                                                       and requires_grad.value.value in ("False", "None")))
        if qualified in sem.LIKE_FACTORY_FUNCTIONS:
            return fresh(contiguous=first_value.contiguous if not has_device else None,
                         origin=EMPTY if qualified == "torch.empty_like" else FACTORY,
                         device=device if device is not None else first_value.device,
                         bool_mask=self._dtype_is_bool(node) or (first_value.bool_mask and self.keyword(node, "dtype") is None))
        inputs, every_input_known = self._tensor_inputs(node, local)
        input_device = _elementwise_device(inputs) if inputs else Device.UNKNOWN
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
                         base=self.short_source(first) if qualified in sem.GATHER_FUNCTIONS and first is not None else None)
        if qualified in sem.FRESH_FUNCTIONS:
            name = qualified.split(".")[-1]
            if name in ("max", "min") and (other := self._elementwise_other(node, local)) is not None:
                return fresh(contiguous=None, device=_elementwise_device([first_value, other]))  # `torch.min(a, b)`
            if name in ("topk", "sort", "max", "min", "kthvalue", "median", "mode") and (
                    name in ("topk", "sort") or self._has_dim_argument(node)):
                values = fresh(device=input_device)
                return Value(kind=Kind.TENSOR_SEQUENCE, elements=(values,), origin=qualified)
            index_like = name in ("argsort", "argmax", "argmin") and (name == "argsort" or self._has_dim_argument(node))
            reduced = name in sem.REDUCTIONS and not self._has_dim_argument(node)
            return fresh(contiguous=None, index_like=index_like, device=input_device,
                         bool_mask=qualified in sem.BOOL_RESULT_FUNCTIONS or (name in ("any", "all") and self._has_dim_argument(node)),
                         # `torch.diff` takes and gives at least one dimension.
                         zero_dim=True if reduced else (False if index_like or name == "diff" else None), reduced=reduced)
        if qualified.startswith(sem.TENSOR_NAMESPACES) or sem.generic_torch_op(qualified):
            return fresh(contiguous=None, device=input_device)  # some other `torch.<op>(...)`: a new tensor
        if sem.nn_module_class(qualified):
            return Value(kind=Kind.HOST, wrapper=qualified)  # `nn.Linear(4, 8)`: a module, whose calls give tensors
        if qualified.startswith("torch.distributions.") and qualified.split(".")[-1][:1].isupper():
            # `Beta(0.4, 0.4)`: a distribution; its samples live where its parameters do (Python numbers: the CPU).
            parameters = [self.evaluate(a.value, local) for a in node.args]
            tensors = [v for v in parameters if v.is_tensor]
            device = _elementwise_device(tensors) if tensors else (
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

    def maybe_view(self, receiver: Value, op: str, device: Device, source: Optional[cst.BaseExpression] = None) -> Value:
        """The result of a conversion that returns its input when it can (`reshape`, `contiguous`, `to`,
        casts); `source` is the converted expression (a name: writes into a copy never reach it)."""
        result = self._maybe_view(receiver, op, device)
        if result.kind is Kind.TENSOR and receiver.copy_of is None and source is not None and self._may_copy(receiver, op, device):
            name = dotted_name(source)
            if name is not None:
                result = result.with_(copy_of=receiver.label or name, copy_op=op)
        elif receiver.copy_of is not None and result.kind is Kind.TENSOR:
            result = result.with_(copy_of=receiver.copy_of, copy_op=receiver.copy_op)
        return result

    @staticmethod
    def _may_copy(receiver: Value, op: str, device: Device) -> bool:
        """Whether `op` may return a copy of `receiver` (a reshape of contiguous memory never does)."""
        name = op.rsplit(".", 1)[-1].removesuffix("()")
        if name in sem.LAYOUT_ONLY_COPY_METHODS:
            return not receiver.contiguous
        if name == "cpu":
            return not receiver.cpu
        return name in sem.MAYBE_COPY_METHODS

    def _maybe_view(self, receiver: Value, op: str, device: Device) -> Value:
        if receiver.is_view or receiver.is_maybe_view_of_view:
            name = op.rsplit(".", 1)[-1].removesuffix("()")
            if receiver.contiguous is False and name == "contiguous":
                # `.contiguous()` of a known non-contiguous view always copies: the result owns its storage.
                return fresh(contiguous=True, device=device)
            # A cast that returned its input is the same non-contiguous view; one that copied owns its
            # storage: either way a later `.contiguous()` gives an owned tensor.
            converts = name in sem.DTYPE_CAST_METHODS | sem.DEVICE_MOVE_METHODS | {"to", "type", "type_as"}
            still_strided = receiver.contiguous is False and converts
            return Value(kind=Kind.TENSOR, provenance=Provenance.MAYBE_VIEW, base=receiver.base, base_made=receiver.base_made,
                         origin=receiver.origin, ownership_op=receiver.ownership_op or op, device=device,
                         zero_dim=receiver.zero_dim if converts or name == "contiguous" else None,
                         is_parameter=receiver.is_parameter, partial=receiver.partial, why=receiver.why,
                         contiguous=True if "contiguous" in op else (False if still_strided else None))
        if receiver.is_fresh:
            # On a tensor that owns its storage, "maybe the same storage" still owns it.
            return fresh(contiguous=True if "contiguous" in op else receiver.contiguous, device=device,
                         zero_dim=receiver.zero_dim, bool_mask=receiver.bool_mask, index_like=receiver.index_like,
                         reduced=receiver.reduced, why=receiver.why, origin=receiver.origin)
        return Value(kind=Kind.TENSOR, provenance=Provenance.UNKNOWN, device=device,
                     contiguous=True if "contiguous" in op else None, is_parameter=receiver.is_parameter,
                     zero_dim=receiver.zero_dim, reduced=receiver.reduced, bool_mask=receiver.bool_mask,
                     index_like=receiver.index_like, why=receiver.why)

    def _method(self, node: cst.Call, func: cst.Attribute, local: Locals) -> Value:
        method = func.attr.value
        receiver_node = func.value
        if method in ("get", "get_interface") and len(node.args) == 2:
            # `ATTENTION_FUNCTIONS.get_interface(kind, eager_forward)`: a registry's function, or the module's
            # own default, one implementation of what the registry holds.
            default = self.evaluate(node.args[1].value, local)
            if referenced_function(default) is not None:
                return default.with_(host_type=INTERFACE)
        # Calls on module names (`np.foo`, `os.path.join`) are not tensor methods.
        receiver = self.evaluate(receiver_node, local)
        if receiver.kind is Kind.ARRAY:
            # `arr.reshape(...)`, `arr.max()`: NumPy, on the host (`.tolist()`/`.item()` give Python values).
            return HOST if method in ("tolist", "item") else Value(kind=Kind.ARRAY)
        if isinstance(receiver_node, cst.Name) and receiver_node.value in self.index.aliases and not receiver.is_tensor:
            return UNKNOWN
        if receiver.kind is Kind.WRAPPER:
            return self._container_method(node, method, receiver, local)
        if receiver.kind is Kind.HOST and (receiver.wrapper or "").startswith("torch.distributions.") \
                and method in ("sample", "rsample", "sample_n", "log_prob", "entropy", "cdf", "icdf"):
            return fresh(device=receiver.device)  # a distribution's sample, where its parameters live
        if receiver.kind is Kind.TENSOR_SEQUENCE and method in ("index", "count"):
            return INT
        tensor = receiver.is_tensor
        module = receiver.kind is Kind.UNKNOWN or self._is_module_object(receiver)
        if not tensor and module and method in ("parameters", "buffers"):
            # `model.parameters()`: the module's parameters.
            return _container((UNKNOWN_TENSOR.with_(is_parameter=True, why=f"from `.{method}()`"),), "iterator")
        if not tensor and module and method in ("named_parameters", "named_buffers"):
            item = _container((HOST, UNKNOWN_TENSOR.with_(is_parameter=True, why=f"from `.{method}()`")), "tuple")
            return _container((item,), "iterator")
        if method in sem.SEQUENCE_VIEW_METHODS:
            if tensor or method not in sem.AMBIGUOUS_SEQUENCE_METHODS or self._tensor_split_arguments(node):
                element = self.view_of(receiver_node, receiver if tensor else UNKNOWN_TENSOR, "." + method + "()")
                return Value(kind=Kind.TENSOR_SEQUENCE, elements=(element,), origin="." + method, whole_partition=True)
            return UNKNOWN
        if method in sem.VIEW_METHODS:
            if method == "view" and node.args and self.is_dtype_argument(node.args[0].value):
                return self.view_of(receiver_node, receiver, ".view(dtype)")
            if tensor or method not in sem.AMBIGUOUS_VIEW_METHODS:
                if method == "t" and node.args:
                    return UNKNOWN
                view = self.view_of(receiver_node, receiver if tensor else UNKNOWN_TENSOR, "." + method + "()")
                if method == "detach" and receiver.is_fresh:
                    # `.detach()` shares storage, but of a tensor that owns it: keep what is known of it.
                    return receiver.with_(provenance=Provenance.FRESH)
                return view
            return UNKNOWN
        if method in sem.MAYBE_VIEW_METHODS:
            # `.to(torch.int32)`, `.to(device=...)`: only tensors take a torch dtype or a device.
            takes_tensor_arguments = method in ("to", "type") and any(
                self.is_dtype_argument(a.value) or (a.keyword is not None and a.keyword.value in ("dtype", "device"))
                for a in node.args)
            if tensor or method not in sem.MAYBE_VIEW_METHODS_NEED_TENSOR or takes_tensor_arguments \
                    or self.env.usage_of(dotted_name(receiver_node) or "") & sem.TENSOR_ONLY_METHODS:
                device = self._moved_device(node, method, receiver, local)
                result = self.maybe_view(receiver if tensor else UNKNOWN_TENSOR, "." + method + "()", device, receiver_node)
                if result.ownership_op == ".to()" and any(self.is_dtype_argument(a.value) for a in node.args
                                                         if a.keyword is None or a.keyword.value == "dtype"):
                    result = result.with_(ownership_op=".to(dtype)")  # a cast: code casts what has another dtype
                if method in ("bool",) or (method in ("to", "type") and any(self._is_bool_dtype(a.value) for a in node.args)):
                    result = result.with_(bool_mask=True)
                if method in ("long", "int") and receiver.bool_mask:
                    result = result.with_(bool_mask=False, index_like=True)
                if not self.default_memory_format(node):  # `.to(memory_format=torch.channels_last)`
                    result = result.with_(contiguous=self.memory_format_layout(node))
                if result.is_tensor:
                    result = result.with_(dtype=self._converted_dtype(node, method, receiver, local),
                                          grad_leaf=receiver.grad_leaf or method == "requires_grad_")
                return result
            if method in ("to", "cuda", "cpu") and node.args or method in ("cuda", "cpu"):
                # `grid_thw.to(x.device)` of something unknown (a tensor, a module, a batch): whatever it is,
                # it is where it was moved, which beats a guess from its name.
                return UNKNOWN.with_(device=self._moved_device(node, method, receiver, local))
            return UNKNOWN
        if method == "numpy" and (tensor or receiver.kind is Kind.UNKNOWN):
            return Value(kind=Kind.ARRAY)  # a NumPy array: host memory, not a tensor
        if method in sem.HOST_VALUE_METHODS:
            if method == "tolist":
                return Value(kind=Kind.INT_LIST) if tensor and receiver.index_like else HOST
            return INT if method in ("item", "numel", "dim", "ndimension", "element_size", "nelement", "storage_offset", "get_device") or (method == "size" and node.args) else HOST
        if method == "clone":
            memory_format = self.keyword(node, "memory_format")
            contiguous = True if memory_format is not None and "contiguous_format" in self.source(memory_format.value) else receiver.contiguous
            if not tensor and receiver.kind is not Kind.UNKNOWN:
                return UNKNOWN
            return fresh(contiguous=contiguous, device=receiver.device, zero_dim=receiver.zero_dim, bool_mask=receiver.bool_mask,
                         index_like=receiver.index_like, reduced=receiver.reduced, origin=".clone()", why=receiver.why)
        if method in sem.FRESH_METHODS and (tensor or (receiver.kind is Kind.UNKNOWN and method in sem.TENSOR_ONLY_METHODS)):
            return self._fresh_method(node, method, receiver, local)
        if tensor and sem.is_inplace_method(method):
            if method in sem.RESTRIDING_INPLACE_METHODS:
                return receiver.with_(contiguous=None)  # `x.t_()` returns x with new strides
            return receiver  # in-place methods return self
        if method in ("nonzero", "argsort") and not tensor and receiver.kind is Kind.UNKNOWN:
            return Value(kind=Kind.TENSOR, provenance=Provenance.FRESH, index_like=True, zero_dim=False, contiguous=None)
        if method == "get" and receiver.kind is Kind.UNKNOWN:
            return UNKNOWN
        return UNKNOWN

    def _fresh_method(self, node: cst.Call, method: str, receiver: Value, local: Locals) -> Value:
        contiguous = True if method in sem.FRESH_CONTIGUOUS_METHODS else None
        if method in ("max", "min") and (other := self._elementwise_other(node, local, method=True)) is not None:
            return fresh(contiguous=None, device=_elementwise_device([receiver, other]))  # `a.max(b)`: elementwise
        with_dim = self._has_dim_argument(node, method=True)
        if method in ("topk", "sort") or (method in ("max", "min", "median", "mode", "kthvalue") and with_dim):
            return Value(kind=Kind.TENSOR_SEQUENCE, elements=(fresh(device=receiver.device),), origin="." + method)
        index_like = method in sem.INDEX_TENSOR_METHODS or (method in ("argmax", "argmin") and with_dim)
        bool_mask = method in sem.BOOL_RESULT_METHODS or (method in ("any", "all") and with_dim) or (
            method in ("masked_fill", "clone", "logical_not") and receiver.bool_mask)
        if method == "nonzero" and self.keyword(node, "as_tuple") is not None:
            return Value(kind=Kind.TENSOR_SEQUENCE, elements=(fresh(contiguous=True, index_like=True, zero_dim=False, device=receiver.device),))
        reduced = method in sem.REDUCTIONS and not with_dim
        if method in sem.BOOL_RESULT_METHODS or method in sem.ELEMENTWISE_METHODS:
            zero_dim, reduced = receiver.zero_dim, receiver.reduced
        else:
            zero_dim = True if reduced else (False if index_like else None)
        return fresh(contiguous=contiguous, device=receiver.device, index_like=index_like, bool_mask=bool_mask,
                     zero_dim=zero_dim, reduced=reduced, why=receiver.why,
                     origin=ADVANCED_INDEX if method in sem.GATHER_METHODS else EMPTY if method == "new_empty" else None,
                     base=self.short_source(node.func.value) if method in sem.GATHER_METHODS else None)  # type: ignore[attr-defined]

    def _container_method(self, node: cst.Call, method: str, receiver: Value, local: Locals) -> Value:
        """`d.get(k)`, `d.values()`, `d.items()`, `q.get()`, `l.pop()` on a container the analysis knows."""
        if method in ("get", "pop", "popleft", "get_nowait", "setdefault", "__getitem__", "values", "copy", "items"):
            receiver = self.contents(receiver)
        if method in ("get", "pop", "popleft", "get_nowait", "setdefault", "__getitem__"):
            return receiver.element()
        if method in ("values", "copy"):
            return receiver if method == "copy" else _container(receiver.elements, "list")
        if method == "items":
            return _container((_container((HOST, receiver.element()), "tuple"),), "list")
        if method == "keys":
            return HOST
        return UNKNOWN

    def _moved_device(self, node: cst.Call, method: str, receiver: Value, local: Locals) -> Device:
        if method in ("cpu", "pin_memory"):
            return Device.CPU
        if method in ("cuda", "xpu", "mps", "npu"):
            return Device.ACCELERATOR
        if method == "to":
            return self._to_device(node, receiver, local)
        return receiver.device

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
            # `device=ext.device` of a value known to be on the host (even if not known to be a tensor).
            return receiver.device if receiver.is_tensor or receiver.device is Device.CPU else Device.UNKNOWN
        name = dotted_name(node) or ""
        if "cpu" in name.split(".")[-1].lower():
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
    def _tensor_split_arguments(node: cst.Call) -> bool:
        """`.split(100)`, `.split([3, 4], dim=0)`, `.split(sizes, dim=-1)`: a tensor split, not `str.split`."""
        positional = [a for a in node.args if a.keyword is None]
        if positional and isinstance(positional[0].value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return False  # `item.split("-", 1)`: a string split on a separator
        if any(a.keyword is not None and a.keyword.value in ("dim", "split_size", "split_size_or_sections") for a in node.args):
            return True
        if positional and isinstance(positional[0].value, (cst.Integer, cst.List)):
            if isinstance(positional[0].value, cst.List):
                return all(isinstance(e.value, (cst.Integer, cst.Name)) for e in positional[0].value.elements)
            return True
        if len(positional) == 2 and isinstance(positional[1].value, (cst.Integer, cst.UnaryOperation)):
            return True  # .split(size, dim)
        return False

    # ------------------------------------------------------------------ iteration and binding
    def iterate(self, node: cst.BaseExpression, local: Locals) -> Value:
        """The value of each item when iterating over `node`."""
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            name = node.func.value
            if name == "range":
                return INT
            if name == "enumerate" and node.args:
                return Value(kind=Kind.WRAPPER, elements=(INT, self.iterate(node.args[0].value, local)), wrapper="tuple")
            if name == "zip":
                return Value(kind=Kind.WRAPPER, elements=tuple(self.iterate(a.value, local) for a in node.args), wrapper="tuple")
            if name in ("reversed", "sorted", "list", "tuple", "iter") and node.args:
                return self.iterate(node.args[0].value, local)
        value = self.contents(self.evaluate(node, local))
        if value.kind in (Kind.TENSOR_SEQUENCE, Kind.WRAPPER):
            if value.kind is Kind.WRAPPER and value.wrapper in ("dict", "ordereddict", "defaultdict", "counter"):
                return HOST  # iterating a dict gives its keys
            if value.kind is Kind.WRAPPER and value.wrapper not in ("list", "tuple", "set", "iterator", "deque", None) \
                    and not (value.wrapper or "")[:1].islower():
                return UNKNOWN  # an object of a class: what it yields is its own business
            return value.element()
        if value.kind is Kind.INT_LIST:
            return INT
        if value.is_tensor:
            # Iterating a tensor yields views of its rows (0-dim ones for a 1-D tensor).
            return self.view_of(node, value, "iteration").with_(reduced=True)
        return _on_the_host_if(value)

    def bind_target_into(self, target: cst.BaseExpression, value: Value, scope: Locals) -> None:
        if isinstance(target, cst.Name):
            scope[target.value] = labelled(value, target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = list(target.elements)
            for i, element in enumerate(elements):
                if isinstance(element, cst.StarredElement):
                    item = value if value.kind is Kind.TENSOR_SEQUENCE else UNKNOWN
                    self.bind_target_into(element.value, item, scope)
                    continue
                if value.kind is Kind.TENSOR_SEQUENCE:
                    item = value.elements[0] if len(value.elements) == 1 else value.element()
                elif value.kind is Kind.WRAPPER and value.wrapper in ("tuple", "list") and len(value.elements) == len(elements):
                    item = value.elements[i]
                elif value.kind is Kind.WRAPPER and value.wrapper in ("list", "iterator") and value.elements:
                    item = value.element()
                elif value.is_tensor and value.origin == MODULE_OUTPUT:
                    # `out, weights = self.attn(x)`: the first item is the module's output; the others may be
                    # anything (attention weights or None, a count, a cache).
                    item = value.with_(label=None) if i == 0 else UNKNOWN
                elif value.is_tensor:
                    item = self.view_of(element.value, value, "iteration").with_(reduced=True)  # unpacking a tensor iterates it
                else:
                    item = _on_the_host_if(value)
                self.bind_target_into(element.value, item, scope)
        elif isinstance(target, cst.Attribute):
            name = dotted_name(target)
            if name is not None and name.startswith("self."):
                scope[name] = value


def _on_the_host_if(value: Value) -> Value:
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
    return value


def _container(elements: tuple[Value, ...], wrapper: str) -> Value:
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
    if value.kind is Kind.WRAPPER and value.wrapper in ("list",) and any(e.is_tensor or e.kind is Kind.INT for e in value.elements):
        return IndexKind.ADVANCED
    return IndexKind.UNKNOWN


def _cpu_test(test: cst.BaseExpression) -> Optional[tuple[cst.BaseExpression, bool]]:
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
    if isinstance(right, cst.Attribute) and isinstance(left, cst.SimpleString):
        left, right = right, left  # `"cpu" == t.device.type`
    if not (isinstance(left, cst.Attribute) and left.attr.value == "type" and isinstance(left.value, cst.Attribute)
            and left.value.attr.value == "device" and isinstance(right, cst.SimpleString)):
        return None
    kind = right.evaluated_value
    if kind not in ("cpu", "cuda"):
        return None
    equal = isinstance(target.operator, (cst.Equal, cst.Is))
    return left.value.value, (kind == "cpu") == equal


def _as_indexed(node: cst.Subscript, receiver: Value) -> Value:
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


def _view_zero_dim(origin: str, base_zero_dim: Optional[bool]) -> Optional[bool]:
    """Whether a view made by `origin` of a base whose `zero_dim` is given has no dimension."""
    if origin in _DIMENSIONED_VIEWS:
        return False
    if origin in _DIMENSION_KEEPING_VIEWS:
        return base_zero_dim
    if origin in _BROADCAST_VIEWS and base_zero_dim is False:
        return False
    return None


def _elementwise_device(values: list[Value]) -> Device:
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
        device = _elementwise_device([left, right])
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
        return fresh(contiguous=contiguous, device=device, bool_mask=mask, zero_dim=zero_dim,
                     reduced=all(v.reduced or v.zero_dim for v in operands) and scalars_ok, index_like=index,
                     why=operands[0].why, guessed_cpu=guessed)
    if left.kind is Kind.ARRAY or right.kind is Kind.ARRAY:
        return Value(kind=Kind.ARRAY)
    if left.kind in (Kind.INT, Kind.HOST) and right.kind in (Kind.INT, Kind.HOST):
        return HOST
    if all(v.device is Device.CPU or v.kind in (Kind.INT, Kind.HOST) for v in (left, right)):
        return UNKNOWN.with_(device=Device.CPU)  # `grid_t * grid_h` of a row of CPU grid metadata
    return UNKNOWN
