"""How many dimensions a tensor has (`Value.rank`), and the one fact a rank decides.

A rank is read from the evidence code gives, in one place, as the evaluator finishes each expression:
- sizes written out: a factory's (`torch.zeros(b, n, d)`, `torch.full((b, n), 0)`), a reshape's
  (`x.view(*shape, -1, d)` with `shape = x.shape[:-1]`), an expansion's;
- ops that keep, add or drop dimensions: casts, elementwise ops of known ranks, `transpose`/`permute`,
  `unsqueeze`, `flatten(2)`, `x[:, 0]`, `x[..., None]`, a sum over one dimension, `torch.cat`/`torch.stack`,
  `matmul` and the pieces of a split;
- `torch.nn` layers: `Linear`, norms, activations, dropout and convolutions keep their input's rank, `Embedding`
  adds one;
- unpacking a shape: `b, s, _ = x.shape` says `x` is 3-D, and so does `b, s = shape` where `shape = x.shape[:-1]`
  (`unpacked_ranks`, which the flow applies).
What is not known stays None. Shapes themselves (`x.shape`, `x.size()`, a tuple of sizes) carry their length in the
same field, so `x.view(*x.shape[:-1], h, d)` is known to be one dimension more than `x`; and, where only a least rank
is known (`Value.min_rank`), their least length, so `x.reshape(*x.shape[:-1], -1)` of an at least 3-D `x` is at
least 3-D too.

The fact: `F.linear` (and `nn.Linear`) with a bias, on a contiguous input of three or more dimensions (or one),
computes a 2-D product and returns a view of it: its `_base` is set, though it owns all the storage it reaches
(`Value.has_base`). On a 2-D input, without a bias, or on a non-contiguous input, it returns the product itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

from viewlint.analysis import semantics as sem
from viewlint.analysis.tree import children, descendants, dotted_name
from viewlint.analysis.values import HOST, Kind, Value, rank_floor

if TYPE_CHECKING:
    from viewlint.analysis.evaluator import Evaluator
    from viewlint.analysis.value_ops import Locals

RANKED_NODES = frozenset({cst.Call, cst.Subscript, cst.BinaryOperation, cst.UnaryOperation, cst.Attribute, cst.Tuple,
                          cst.List})
SHAPE = "shape"

# Methods (and `torch.<name>` functions taking the tensor first) whose result has the receiver's rank.
_SAME_RANK = frozenset({
    "contiguous", "clone", "detach", "to", "type", "type_as", "float", "half", "bfloat16", "double", "int", "long",
    "short", "bool", "byte", "char", "cpu", "cuda", "pin_memory", "requires_grad_", "transpose", "swapaxes", "swapdims",
    "movedim", "moveaxis", "narrow", "roll", "flip", "masked_fill", "masked_fill_", "softmax", "log_softmax", "cumsum",
    "cumprod", "tril", "triu", "expand_as", "index_select", "gather", "scatter", "index_fill", "clamp_min", "clamp_max",
    "fill_", "zero_", "copy_", "add_", "sub_", "mul_", "div_", "clamp_", "masked_scatter", "conj", "resolve_conj",
    "resolve_neg", "t", "silu", "gelu", "relu", "sigmoid", "tanh", "dropout", "layer_norm", "rms_norm", "group_norm",
    "normalize", "pad", "interpolate", "scaled_dot_product_attention", "leaky_relu", "elu", "mish", "hardswish",
    "softplus", "logsigmoid", "glu", "batch_norm", "instance_norm", "local_response_norm", "embedding_bag",
}) | sem.ELEMENTWISE_METHODS | sem.BOOL_RESULT_METHODS - {"isin"}
# Factories whose positional arguments (or one tuple of them) are the sizes.
_SIZED_FACTORIES = frozenset({"zeros", "ones", "empty", "randn", "rand", "new_zeros", "new_ones", "new_empty", "view",
                              "reshape", "expand", "repeat", "tile", "broadcast_to"})
# Layers of `torch.nn` whose output has their input's rank.
_SAME_RANK_LAYERS = frozenset({
    "Linear", "LayerNorm", "RMSNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d",
    "InstanceNorm2d", "InstanceNorm3d", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Identity",
    "GELU", "SiLU", "ReLU", "ReLU6", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "LeakyReLU", "Mish", "Hardswish",
    "Hardsigmoid", "ELU", "SELU", "Softplus", "PReLU", "GLU", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d", "Upsample", "AvgPool1d", "AvgPool2d", "AvgPool3d", "MaxPool1d", "MaxPool2d",
    "MaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "ZeroPad2d", "ConstantPad1d",
    "ConstantPad2d", "PixelNorm", "LocalResponseNorm",
})
_REDUCTIONS = frozenset({"sum", "mean", "amax", "amin", "prod", "norm", "std", "var", "logsumexp", "any", "all", "argmax",
                         "argmin", "nansum", "nanmean", "count_nonzero"})


def ranked(ev: "Evaluator", node: cst.BaseExpression, value: Value, local: "Locals") -> Value:
    """`value` (what `node` evaluated to) with its rank, where the code shows it."""
    if value.rank is not None:
        return value
    kind = value.kind
    if kind is Kind.TENSOR:
        rank = _tensor_rank(ev, node, local, _exact)
        if rank is not None:
            value = value.with_(rank=rank)
        else:
            # The same reading of the operands' lower bounds (a tensor of unknown rank counts as at least 0-D).
            floor = _tensor_rank(ev, node, local, _floor_of) or 0
            if floor > value.min_rank:
                value = value.with_(min_rank=floor)
        return _linear_view(ev, node, value, local) if type(node) is cst.Call else value
    if kind is Kind.TENSOR_SEQUENCE and type(node) is cst.Call and isinstance(node.func, cst.Attribute):  # type: ignore[attr-defined]
        return _pieces(ev, node, value, local)  # type: ignore[arg-type]
    if kind in (Kind.HOST, Kind.WRAPPER, Kind.INT_LIST, Kind.UNKNOWN):
        length = _shape_length_of(ev, node, local, _exact)
        if length is not None:
            if kind is Kind.WRAPPER or kind is Kind.INT_LIST:
                return value.with_(rank=length)
            return HOST.with_(host_type=SHAPE, rank=length)
        # At least so many sizes (`x.shape[:-1]` of an at least 3-D `x` holds two or more).
        floor = _shape_length_of(ev, node, local, _floor_of)
        if floor and floor > value.min_rank:
            if kind is Kind.WRAPPER or kind is Kind.INT_LIST:
                return value.with_(min_rank=floor)
            return HOST.with_(host_type=SHAPE, min_rank=floor)
    return value


def unpacked_ranks(target: cst.BaseExpression, value_node: cst.BaseExpression,
                   scope: Optional[cst.CSTNode] = None) -> list[tuple[str, int]]:
    """`b, s, _ = x.shape` (or `x.size()`, `x.shape[:-1]`): [(`x`, 3)], the names whose rank unpacking a shape shows.

    A name that holds a shape (`input_shape = input_ids.size()`, or `inputs_embeds.size()[:-1]` on another path, then
    `batch_size, seq_length = input_shape`) shows the rank of the tensor each of its bindings in `scope` measured."""
    if not isinstance(target, (cst.Tuple, cst.List)) or not target.elements \
            or any(isinstance(e, cst.StarredElement) for e in target.elements):
        return []
    length = len(target.elements)
    owner = _shape_owner(value_node)
    if owner is not None:
        return [(owner[0], length + owner[1])]
    if not isinstance(value_node, cst.Name) or scope is None:
        return []
    shown: list[tuple[str, int]] = []
    for bound in _bindings_of(scope, value_node.value):
        owner = _shape_owner(bound) if bound is not None else None
        if owner is None:
            return []  # bound to something else too: which tensor this shape measured is not known
        shown.append((owner[0], length + owner[1]))
    return shown


def _shape_owner(node: cst.BaseExpression) -> Optional[tuple[str, int]]:
    """`x.shape`, `x.size()`: (`x`, 0); `x.shape[:-1]`, `x.size()[1:]`: (`x`, 1), the name and how many sizes the
    shape leaves out (its rank is the shape's length and those)."""
    dropped = 0
    if isinstance(node, cst.Subscript):
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Slice) or node.slice[0].slice.step is not None:
            return None
        sliced = node.slice[0].slice
        lower = _literal_int(sliced.lower, 0)
        upper = _literal_int(sliced.upper, 0)
        if lower is None or upper is None or lower < 0 or upper > 0:
            return None  # `[:2]`, `[-2:]`: as many sizes whatever the rank past them
        dropped, node = lower - upper, node.value
    if isinstance(node, cst.Attribute) and node.attr.value == "shape":
        owner = node.value
    elif isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) and node.func.attr.value == "size":
        owner = node.func.value
    else:
        return None
    name = dotted_name(owner)
    return (name, dropped) if name is not None else None


def _bindings_of(scope: cst.CSTNode, name: str) -> list[Optional[cst.BaseExpression]]:
    """What `name = ...` statements of one function (not of functions or classes nested in it) bind it to; None for a
    binding of another form (a tuple target, a loop, `with ... as`)."""
    found: list[Optional[cst.BaseExpression]] = []
    stack = list(children(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    found.append(node.value)
                elif any(isinstance(n, cst.Name) and n.value == name for n in descendants(target.target)):
                    found.append(None)
        elif isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name) and node.target.value == name:
            found.append(node.value)
        elif isinstance(node, (cst.AugAssign, cst.For, cst.AsName, cst.NamedExpr)):
            bound = node.target if not isinstance(node, cst.AsName) else node.name
            if any(isinstance(n, cst.Name) and n.value == name for n in descendants(bound)):
                found.append(None)
        stack.extend(children(node))
    return found


# ---------------------------------------------------------------------------------------------------- tensors
def _tensor_rank(ev: "Evaluator", node: cst.BaseExpression, local: "Locals", measure: Measure) -> Optional[int]:
    """The rank of the tensor `node` makes, read from its operands as `measure` gives theirs: exactly, or at least
    (every op here gives a rank that grows with its operands', so their lower bounds give one of its own)."""
    kind = type(node)
    if kind is cst.Call:
        return _call_rank(ev, node, local, measure)  # type: ignore[arg-type]
    if kind is cst.Subscript:
        return _index_rank(ev, node, local, measure)  # type: ignore[arg-type]
    if kind is cst.BinaryOperation:
        return _broadcast([ev.evaluate(node.left, local), ev.evaluate(node.right, local)], measure)  # type: ignore[attr-defined]
    if kind is cst.UnaryOperation:
        return measure(ev.evaluate(node.expression, local))  # type: ignore[attr-defined]
    if kind is cst.Attribute and node.attr.value in ("T", "mT", "mH", "H", "data", "real", "imag", "grad"):  # type: ignore[attr-defined]
        return measure(ev.evaluate(node.value, local))  # type: ignore[attr-defined]
    return None


# How a reading measures an operand: its exact rank (None: not known), or a lower bound (0: nothing known).
Measure = Callable[[Value], Optional[int]]


def _exact(value: Value) -> Optional[int]:
    return value.rank


def _floor_of(value: Value) -> int:
    return rank_floor(value) if value.is_tensor else 0


def _call_rank(ev: "Evaluator", node: cst.Call, local: "Locals", measure: Measure) -> Optional[int]:
    func = node.func
    qualified = ev.qualify(func) or ""
    if qualified.startswith("torch."):
        return _function_rank(ev, node, qualified, local, measure)
    if not isinstance(func, cst.Attribute):
        return None
    layer = _layer_class(ev, func, local)
    if layer is not None:
        given = _positional(node)
        source = measure(ev.evaluate(given[0], local)) if given else None
        short = layer.rsplit(".", 1)[-1]
        if source is None:
            return None
        return source + 1 if short == "Embedding" else source if short in _SAME_RANK_LAYERS else None
    receiver = ev.evaluate(func.value, local)
    if not receiver.is_tensor:
        return None
    return _method_rank(ev, node, func.attr.value, measure(receiver), local, measure)


def _method_rank(ev: "Evaluator", node: cst.Call, method: str, rank: Optional[int], local: "Locals", measure: Measure,
                 skip: int = 0) -> Optional[int]:
    """The rank of `x.<method>(...)` for `x` of rank `rank`; `skip` positional arguments are not the method's own
    (`torch.flatten(x, 1)` passes `x` first)."""
    args = _positional(node)[skip:]
    if method in _SAME_RANK:
        return rank
    if method in ("view", "reshape") and args and len(args) == 1 and ev.is_dtype_argument(args[0]):
        return rank  # `x.view(torch.int8)`
    if method in _SIZED_FACTORIES:
        return _sizes_length(ev, node, local, skip, measure)
    if method in ("view_as", "reshape_as", "expand_as"):
        return measure(ev.evaluate(args[0], local)) if args else None
    if method == "permute":
        return _sizes_length(ev, node, local, skip, measure) if args else rank
    if rank is None:
        return None
    if method == "unsqueeze":
        return rank + 1
    if method in ("select", "unbind", "diagonal"):
        return rank - 1 if rank > 0 else None
    if method == "unflatten" and len(args) == 2:
        sizes = _shape_length(ev, args[1], local, measure)
        return rank + sizes - 1 if sizes is not None else None
    if method in ("flatten", "ravel"):
        return _flattened(args, rank) if method == "flatten" else 1
    if method in _REDUCTIONS:
        return _reduced(ev, node, args, rank)
    if method in ("matmul", "mm", "bmm", "__matmul__"):
        other = measure(ev.evaluate(args[0], local)) if args else None
        return _matmul(rank, other)
    return None


def _reduced(ev: "Evaluator", node: cst.Call, args: list[cst.BaseExpression], rank: int) -> Optional[int]:
    """`x.sum()` is 0-dim; `x.sum(-1)` one dimension less; `x.sum(-1, keepdim=True)` the same rank."""
    dim_arg = ev.keyword(node, "dim")
    dim = args[0] if args else dim_arg.value if dim_arg is not None else None
    if dim is None:
        return 0
    keep_arg = ev.keyword(node, "keepdim")
    keep = keep_arg.value if keep_arg is not None else args[1] if len(args) > 1 else None
    if keep is not None:
        return rank if _is_true(keep) else rank - 1 if _is_false(keep) and _literal_int(dim, 0) is not None else None
    return rank - 1 if _literal_int(dim, 0) is not None and rank > 0 else None


def _function_rank(ev: "Evaluator", node: cst.Call, qualified: str, local: "Locals", measure: Measure) -> Optional[int]:
    name = qualified.rsplit(".", 1)[-1]
    args = _positional(node)
    first = ev.evaluate(args[0], local) if args else None
    if name in ("arange", "linspace", "logspace", "randperm", "bincount", "nonzero_static"):
        return 1
    if name in ("zeros", "ones", "empty", "randn", "rand"):
        return _sizes_length(ev, node, local, 0, measure)
    if name in ("full", "empty_strided"):
        return _shape_length(ev, args[0], local, measure) if args else None
    if name == "randint":
        size = ev.keyword(node, "size")
        given = size.value if size is not None else args[-1] if args else None
        return _shape_length(ev, given, local, measure) if given is not None else None
    if name.endswith("_like") and first is not None:
        return measure(first)
    if name == "tensor" and args:
        return _literal_depth(args[0])
    if name in ("cat", "concat", "concatenate", "stack") and first is not None:
        # Every piece has the rank of the others: the one known (or the largest lower bound) is theirs.
        ranks = [r for e in first.elements if e.is_tensor and (r := measure(e)) is not None] if first.is_container else []
        return None if not ranks else max(ranks) + 1 if name == "stack" else max(ranks)
    if name in ("where", "lerp", "maximum", "minimum", "add", "mul", "sub", "div") and len(args) >= 2:
        return _broadcast([ev.evaluate(a, local) for a in args], measure)
    given = measure(first) if first is not None else None
    if name == "linear":
        return given
    if name == "embedding" and given is not None:
        return given + 1
    if name in ("matmul", "mm", "bmm") and len(args) == 2:
        return _matmul(given, measure(ev.evaluate(args[1], local)))
    if first is not None and first.is_tensor and name != "view":
        return _method_rank(ev, node, name, given, local, measure, skip=1)  # `torch.transpose(x, 1, 2)`, `F.gelu(x)`
    return None


def _layer_class(ev: "Evaluator", func: cst.Attribute, local: "Locals") -> Optional[str]:
    """The `torch.nn` class of a layer called as `self.<attr>(...)` (one class only)."""
    held = ev._torch_module_attribute(func)  # noqa: SLF001 - the evaluator's own reading of the class
    return held if held is not None and "|" not in held else None


def _linear_view(ev: "Evaluator", node: cst.Call, value: Value, local: "Locals") -> Value:
    """`self.proj(x)` of an `nn.Linear`, or `F.linear(x, w, b)`: a view of the product it computed where `x` is a
    contiguous input of one or of three or more dimensions and a bias is added (see the module's docstring)."""
    if not value.is_fresh:
        return value
    func = node.func
    qualified = ev.qualify(func) or ""
    args = _positional(node)
    if qualified in ("torch.nn.functional.linear", "torch._C._nn.linear"):
        bias_node = args[2] if len(args) > 2 else (ev.keyword(node, "bias").value if ev.keyword(node, "bias") else None)  # type: ignore[union-attr]
        bias: Optional[bool] = None
        if bias_node is None or (isinstance(bias_node, cst.Name) and bias_node.value == "None"):
            bias = False
        elif ev.evaluate(bias_node, local).is_tensor:
            bias = True
    elif isinstance(func, cst.Attribute) and _layer_class(ev, func, local) == "torch.nn.Linear":
        info = ev.index.classes.get(ev.env.class_name or "")
        bias = info.linear_bias.get(func.attr.value) if info is not None else None
    elif isinstance(func, cst.Attribute) and ev.evaluate(func, local).wrapper == "torch.nn.Linear":
        # `attn.to_q(x)` of an `nn.Linear` another object holds: its bias is how that object was built.
        holder = ev.index.classes.get(ev.evaluate(func.value, local).wrapper or "")
        bias = holder.linear_bias.get(func.attr.value) if holder is not None else None
    else:
        return value
    given = ev.evaluate(args[0], local) if args else None
    if given is None or not given.is_tensor:
        return value
    if bias is False or given.rank == 2:
        return value.with_(has_base=False, contiguous=True)
    if bias is True and (given.rank == 1 or rank_floor(given) >= 3) and given.contiguous is True:
        return value.with_(has_base=True, contiguous=True)
    return value.with_(has_base=None, contiguous=True)


def _pieces(ev: "Evaluator", node: cst.Call, value: Value, local: "Locals") -> Value:
    """The pieces of `x.split(...)`/`x.chunk(...)` have `x`'s rank; `x.unbind(d)`'s one less."""
    method = node.func.attr.value  # type: ignore[attr-defined]
    receiver = ev.evaluate(node.func.value, local)  # type: ignore[attr-defined]
    if receiver.rank is None or method not in sem.SEQUENCE_VIEW_METHODS or not value.elements:
        return value
    rank = receiver.rank - 1 if method == "unbind" else receiver.rank
    return value.with_(elements=tuple(e.with_(rank=rank) if e.is_tensor else e for e in value.elements))


def _index_rank(ev: "Evaluator", node: cst.Subscript, local: "Locals", measure: Measure) -> Optional[int]:
    """`x[:, 0]`, `x[..., None]`, `x[1:]`: the receiver's rank less its integer indices, plus its `None`s. Advanced
    indices (tensors, lists, masks) are not counted."""
    receiver = ev.evaluate(node.value, local)
    rank = measure(receiver) if receiver.is_tensor else None
    if rank is None:
        return None
    for element in node.slice:
        index = element.slice
        if isinstance(index, cst.Slice):
            continue
        expr = index.value  # type: ignore[attr-defined]
        if isinstance(expr, cst.Ellipsis):
            continue
        if isinstance(expr, cst.Name) and expr.value == "None":
            rank += 1
            continue
        given = ev.evaluate(expr, local)
        if given.kind is Kind.INT or isinstance(expr, cst.Integer):
            rank -= 1
            continue
        return None
    return rank if rank >= 0 else None


# ---------------------------------------------------------------------------------------------------- shapes
def _shape_length_of(ev: "Evaluator", node: cst.BaseExpression, local: "Locals", measure: Measure) -> Optional[int]:
    """The length of a shape: `x.shape`, `x.size()`, `x.shape[:-1]`, `(b, -1, d)`, `(*shape, d)`, `shape + (d,)`;
    exactly or at least, as `measure` reads tensors' ranks (a lower bound's slices and sums are lower bounds too:
    each length here grows with the lengths it is made of)."""
    kind = type(node)
    if kind is cst.Attribute and node.attr.value == "shape":  # type: ignore[attr-defined]
        owner = ev.evaluate(node.value, local)  # type: ignore[attr-defined]
        return measure(owner) if owner.is_tensor else None
    if kind is cst.Call and isinstance(node.func, cst.Attribute) and node.func.attr.value == "size" \
            and not node.args:  # type: ignore[attr-defined]
        receiver = ev.evaluate(node.func.value, local)  # type: ignore[attr-defined]
        return measure(receiver) if receiver.is_tensor else None
    if kind is cst.Subscript:
        return _sliced_shape(ev, node, local, measure)  # type: ignore[arg-type]
    if kind in (cst.Tuple, cst.List):
        return _display_length(ev, node, local, measure)  # type: ignore[arg-type]
    if kind is cst.BinaryOperation and isinstance(node.operator, cst.Add):  # type: ignore[attr-defined]
        left = _shape_length(ev, node.left, local, measure)  # type: ignore[attr-defined]
        right = _shape_length(ev, node.right, local, measure) if left is not None else None  # type: ignore[attr-defined]
        return left + right if left is not None and right is not None else None
    return None


def _shape_length(ev: "Evaluator", node: cst.BaseExpression, local: "Locals", measure: Measure = _exact) -> Optional[int]:
    """The length of what `node` holds, where it is a shape (or a tuple or list of sizes) of known length (or, as
    `measure` asks, of a known least length)."""
    if type(node) in (cst.Tuple, cst.List):
        return _display_length(ev, node, local, measure)  # type: ignore[arg-type]
    value = ev.evaluate(node, local)
    if (value.kind is Kind.HOST and value.host_type == SHAPE) or value.kind in (Kind.WRAPPER, Kind.INT_LIST):
        return value.rank if measure is _exact else rank_floor(value) or None
    return None


def _display_length(ev: "Evaluator", node: cst.Tuple | cst.List, local: "Locals", measure: Measure) -> Optional[int]:
    length = 0
    for element in node.elements:
        if isinstance(element, cst.StarredElement):
            inner = _shape_length(ev, element.value, local, measure)
            if inner is None:
                return None
            length += inner
        else:
            item = ev.evaluate(element.value, local)
            if item.kind not in (Kind.INT, Kind.UNKNOWN, Kind.HOST) or item.is_container:
                return None  # a tuple of tensors, not of sizes
            length += 1
    return length


def _sliced_shape(ev: "Evaluator", node: cst.Subscript, local: "Locals", measure: Measure) -> Optional[int]:
    """`x.shape[:-1]`, `x.shape[2:]`, `x.size()[1:3]`: the length of a slice of a shape of known length."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Slice):
        return None
    length = _shape_length(ev, node.value, local, measure)
    sliced = node.slice[0].slice
    if length is None or sliced.step is not None:
        return None
    lower = _literal_int(sliced.lower, 0)
    upper = _literal_int(sliced.upper, length)
    if lower is None or upper is None:
        return None
    lower = max(0, lower + length if lower < 0 else min(lower, length))
    upper = max(0, upper + length if upper < 0 else min(upper, length))
    return max(0, upper - lower)


def _sizes_length(ev: "Evaluator", node: cst.Call, local: "Locals", skip: int, measure: Measure) -> Optional[int]:
    """How many sizes a call passes: `(b, n, d)`, `((b, n, d))`, `(shape)`, `(*shape, -1, d)`."""
    args = [a for a in node.args if a.keyword is None][skip:]
    if not args:
        size = ev.keyword(node, "size")
        return _shape_length(ev, size.value, local, measure) if size is not None else None
    if len(args) == 1 and not args[0].star:
        given = ev.evaluate(args[0].value, local)
        if given.kind is Kind.INT or isinstance(args[0].value, cst.Integer):
            return 1
        return _shape_length(ev, args[0].value, local, measure)
    length = 0
    for arg in args:
        if arg.star == "*":
            inner = _shape_length(ev, arg.value, local, measure)
            if inner is None:
                return None
            length += inner
        elif arg.star:
            return None
        else:
            length += 1
    return length


# ---------------------------------------------------------------------------------------------------- helpers
def _positional(node: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in node.args if a.keyword is None and not a.star]


def _broadcast(values: list[Value], measure: Measure) -> Optional[int]:
    """The rank of an elementwise result: the largest of its operands' (a Python number counts as 0-dim; for a lower
    bound, so does anything not known to be a tensor)."""
    ranks = []
    for value in values:
        rank = measure(value) if value.is_tensor else 0 if measure is _floor_of or (
            value.kind in (Kind.INT, Kind.HOST) and value.host_type is None and value.wrapper is None) else None
        if rank is None:
            return None
        ranks.append(rank)
    return max(ranks) if ranks and any(v.is_tensor for v in values) else None


def _matmul(left: Optional[int], right: Optional[int]) -> Optional[int]:
    if left is None or right is None or left == 0 or right == 0:
        return None
    if left == 1 or right == 1:
        return max(left, right) - 1
    return max(left, right)


def _flattened(args: list[cst.BaseExpression], rank: int) -> Optional[int]:
    """`x.flatten()`, `x.flatten(2)`, `x.flatten(1, 2)` of a tensor of rank `rank` (0-dim gives 1-D)."""
    if rank == 0:
        return 1
    start = _literal_int(args[0] if args else None, 0)
    end = _literal_int(args[1] if len(args) > 1 else None, -1)
    if start is None or end is None:
        return None
    start = start + rank if start < 0 else start
    end = end + rank if end < 0 else end
    return rank - (end - start) if 0 <= start <= end < rank else None


def _literal_int(node: Optional[cst.BaseExpression], default: int) -> Optional[int]:
    if node is None:
        return default
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value, 0)
    return None


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _is_false(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


def _literal_depth(node: cst.BaseExpression) -> Optional[int]:
    """The nesting depth of a literal (`[[1, 2], [3, 4]]` is 2-D, `3.0` 0-dim)."""
    if isinstance(node, (cst.Integer, cst.Float)) or (isinstance(node, cst.Name) and node.value in ("True", "False")):
        return 0
    if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
        inner = {_literal_depth(e.value) for e in node.elements if isinstance(e, cst.Element)}
        if len(inner) == 1 and None not in inner and len(node.elements) == sum(1 for e in node.elements if isinstance(e, cst.Element)):
            return 1 + inner.pop()  # type: ignore[operator]
    return None
