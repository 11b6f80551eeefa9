"""What annotations, docstrings and uses say a name holds, read off libcst nodes.

Real code spells a tensor many ways (`Optional[torch.Tensor]`, `Tensor | None`, `torch.LongTensor`,
`"torch.Tensor"`, `np.ndarray`, a docstring's `x (LongTensor): ...`); the evaluator and the flow read
parameters, fields and annotated locals through these.
"""

from __future__ import annotations

import ast
import re
from typing import Optional

import libcst as cst

from viewlint.analysis import semantics as sem
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.tensor_types import TENSOR_TYPE_NAMES, array_type, tensor_type
from viewlint.analysis.tree import code_for_node, dotted_name
from viewlint.analysis.values import HOST, INT, UNKNOWN, Kind, Value, join


# Host values `.to()` reads as a dtype or as a device.
DTYPE_VALUE = Value(kind=Kind.HOST, host_type="dtype")
DEVICE_VALUE = Value(kind=Kind.HOST, host_type="device")
STR_VALUE = Value(kind=Kind.HOST, host_type="str")  # a string: what indexes it is no tensor (a dict, a namespace)
_SEQUENCE_ANNOTATIONS = frozenset({"list", "List", "Sequence", "MutableSequence", "tuple", "Tuple", "Iterable", "Iterator", "Collection", "set", "Set", "frozenset", "deque"})
_MAPPING_ANNOTATIONS = frozenset({"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "defaultdict"})
# Bare container annotations (`per: dict`): what holds the values, nothing of what they are (callers say that).
BARE_CONTAINERS = {"list": "list", "List": "list", "dict": "dict", "Dict": "dict"}
# Those and the abstract ones an annotation reads as nothing known (`Mapping`, `Sequence`): what callers pass tells.
UNTYPED_CONTAINERS = frozenset({*BARE_CONTAINERS, "Mapping", "MutableMapping", "Sequence"})
_OPTIONAL_ANNOTATIONS = frozenset({"Optional", "Union", "Annotated", "Final", "ClassVar"})
_HOST_ANNOTATIONS = frozenset({"str", "float", "bool", "bytes", "complex", "None", "dtype", "device", "Size"})


_DOC_PARAM = r"(?:^|\n)\s*[*`]*{name}[*`]*\s*(?:\(([^)\n]*)\)|:\s*([^\n]*))"
_DOC_TENSOR = re.compile(r"\b(?:torch\.)?(Long|Bool|Byte|Float|Int|Half)?Tensor\b|\btensor\b")
# A parameter's entry: the line that starts with its name, and the next line where it is indented more (the sentence
# goes on there).
_DOC_ENTRY = r"(?:^|\n)([ \t]*)[*`]*{name}[*`]*[ \t]*[(:]([^\n]*(?:\n\1[ \t]+[^\n]*)?)"
_DOC_SHAPE = re.compile(r"\b(?:shape|size)\s*`?\(([^()`\n]*)\)")
_DOC_ARRAY = re.compile(r"\b(?:np|numpy)\.ndarray\b|\bndarray\b")
# A type with a non-tensor alternative, `torch.Tensor or list`, `float | Tensor`: the value may be a plain number or a
# list, so it is a tensor on some paths only (`Optional`/`or None` adds nothing).
_NON_TENSOR = r"(?:an?\s+)?`?(?:list|tuple|sequence|iterable|float|int|integer|number|scalar|str|string|bool)\b"
_DOC_ALTERNATIVE = re.compile(rf"(?:\bor\b|\|)\s*{_NON_TENSOR}|{_NON_TENSOR}`?\s*(?:\bor\b|\|)", re.I)
_DTYPE_WORD = r"(?:bool|boolean|float|int|integer|long|half)"
_DOC_DTYPES = re.compile(rf"\b{_DTYPE_WORD}(?:\s*(?:\bor\b|/|,)\s*{_DTYPE_WORD})*\s+tensors?\b", re.I)  # `bool or float mask tensor`


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
        return _union_value(_union_sides(annotation), index, depth)
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
            return Value(kind=Kind.WRAPPER, wrapper="tuple", why=f"annotated `{node_text(annotation)}`",
                         elements=tuple(annotation_value(i, index, depth + 1) for i in items))
        if container in _SEQUENCE_ANNOTATIONS:
            element = annotation_value(items[0], index, depth + 1) if items else UNKNOWN
            if element.kind is Kind.INT:
                return Value(kind=Kind.INT_LIST, why=f"annotated `{node_text(annotation)}`")
            if element.is_tensor or (element.kind is Kind.HOST and element.wrapper is not None):
                # Tensors, or objects of known classes (`layers: list[CacheLayer | LinearLayer]`): its items.
                return Value(kind=Kind.WRAPPER, elements=(element,), wrapper="list", why=f"annotated `{node_text(annotation)}`")
            return Value(kind=Kind.WRAPPER, wrapper="list") if container in ("list", "List") else UNKNOWN
        if container in _MAPPING_ANNOTATIONS:
            element = annotation_value(items[-1], index, depth + 1) if items else UNKNOWN
            # (Items that are dicts or lists of ints themselves are kept too: `Dict[int, Dict[int, Batch]]`'s items are
            # dicts, `Dict[Tuple[int, int], List[int]]`'s indices that gather.)
            kept = element.is_tensor or element.kind is Kind.INT_LIST or (element.kind is Kind.WRAPPER and element.wrapper == "dict")
            return Value(kind=Kind.WRAPPER, elements=(element,) if kept else (), wrapper="dict")
        if array_type(container):
            return Value(kind=Kind.ARRAY, why=f"annotated `{node_text(annotation)}`")
        return UNKNOWN
    name = dotted_name(annotation)
    if name is None:
        return UNKNOWN
    aliased = index.type_aliases.get(name) if index is not None and "." not in name else None
    if aliased is not None:  # `activations: Activations`, with `Activations = Dict[int, Dict[int, Batch]]`
        return annotation_value(cst.parse_expression(ast.unparse(aliased)), index, depth + 1)
    qualified = index.qualify(annotation) or name
    last = qualified.split(".")[-1]
    facts = tensor_type(name, qualified)
    if facts is not None:
        return Value(kind=Kind.TENSOR, why=f"annotated `{name}`", **facts)
    if array_type(last):
        return Value(kind=Kind.ARRAY, why=f"annotated `{name}`")
    if last == "int":
        return INT
    if last in ("device", "dtype") and (qualified.startswith("torch.") or name == last):
        return DEVICE_VALUE if last == "device" else DTYPE_VALUE  # `device: torch.device`
    if last == "str":
        return STR_VALUE
    if last in _HOST_ANNOTATIONS:
        return HOST
    if last in BARE_CONTAINERS:
        return Value(kind=Kind.WRAPPER, wrapper=BARE_CONTAINERS[last])
    if sem.nn_module_class(qualified) or (qualified.startswith("torch.optim.") and last[:1].isupper()):
        return Value(kind=Kind.HOST, wrapper=qualified, why=f"annotated `{name}`")  # `encoder: nn.Module`
    if last[:1].isupper() and last not in ("Any", "Callable", "Iterable", "Iterator", "Sequence", "Mapping", "Union",
                                          "Optional", "Type", "TypeVar", "Protocol", "Generic") \
            and not qualified.startswith(("torch.", "numpy.", "np.", "jax.")):
        # An object of another class: not a tensor. Its class is kept (`m: Extractor`): calls of its methods run them.
        return Value(kind=Kind.HOST, wrapper=last, why=f"annotated `{name}`")
    return UNKNOWN


def _union_sides(annotation: cst.BaseExpression) -> list[cst.BaseExpression]:
    """`Tensor | float | int` as its three alternatives (the operator nests: `(Tensor | float) | int`)."""
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        return _union_sides(annotation.left) + _union_sides(annotation.right)
    return [annotation]


def admits_none(annotation: cst.BaseExpression) -> bool:
    """`X | None`, `Optional[X]`, `Union[X, None]` (and a string of one)."""
    if isinstance(annotation, cst.SimpleString):
        text = annotation.evaluated_value if isinstance(annotation.evaluated_value, str) else ""
        return "None" in text or "Optional[" in text
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        return any(isinstance(side, cst.Name) and side.value == "None" for side in _union_sides(annotation))
    if isinstance(annotation, cst.Subscript):
        container = (dotted_name(annotation.value) or "").split(".")[-1]
        items = [e.slice.value for e in annotation.slice if isinstance(e.slice, cst.Index)]
        return container == "Optional" or (container == "Union" and any(isinstance(i, cst.Name) and i.value == "None"
                                                                        for i in items))
    return False


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
    if any(v.kind in (Kind.WRAPPER, Kind.INT_LIST) for v in values) \
            and any(v.kind is Kind.INT or v.kind is Kind.HOST and v.wrapper is None for v in values):
        return UNKNOWN  # `backend: list[str] | str`: one name or several (what it indexes is keyed, not gathered)
    result = UNKNOWN
    for value in values:
        result = _annotation_join(result, value)
    return result


def _annotation_join(a: Value, b: Value) -> Value:
    """`Optional[X]`: None adds nothing; an unknown alternative does not hide a tensor one."""
    if a.kind is Kind.HOST and b.kind is Kind.HOST and a.wrapper and b.wrapper:
        return join(a, b)  # `CacheLayer | LinearLayer`: an object of one of the classes
    if a.kind is Kind.UNKNOWN or (a.kind is Kind.HOST and b.kind is not Kind.UNKNOWN):
        return b
    if b.kind is Kind.UNKNOWN or b.kind is Kind.HOST:
        return a
    return join(a, b)


_PRINTER = cst.Module(body=[])


def node_text(node: cst.CSTNode) -> str:
    return code_for_node(_PRINTER, node)


def docstring_rank(docstring: Optional[str], name: str) -> Optional[int]:
    """How many dimensions a function's docstring says a parameter has: `hidden_states (`torch.Tensor` of shape
    `(batch, seq_len, embed_dim)`)` or `...: input of shape `(batch, seq_len, embed_dim)``: 3. None where it gives no
    shape, or several, or one of any length (`(batch_size, ...)`, `(*, hidden_size)`)."""
    if not docstring or name not in docstring:
        return None
    found: set[int] = set()
    for match in re.finditer(_DOC_ENTRY.format(name=re.escape(name)), docstring):
        for shape in _DOC_SHAPE.finditer(match.group(2)):
            sizes = [part.strip() for part in shape.group(1).split(",")]
            if sizes and sizes[-1] == "":
                sizes.pop()
            if not sizes or any(not part or "..." in part or "*" in part or "…" in part for part in sizes):
                return None
            found.add(len(sizes))
    return found.pop() if len(found) == 1 else None


_PREPOSITIONS = frozenset({"of", "in", "from", "on", "for", "to", "with", "per", "by", "at", "into", "along", "over"})


def _prose_names_its_type(text: str) -> bool:
    """`x: LongTensor of shape (b, s)`, `mask: the attention mask tensor`: prose that opens with the value's type; not
    `n_cols: Number of columns in the tensor`, where the tensor is another one the sentence speaks of."""
    found = _DOC_TENSOR.search(text[:80]) or _DOC_ARRAY.search(text[:80])
    if found is None:
        return True  # nothing said of a tensor or an array: nothing to misread
    before = re.findall(r"[A-Za-z_]+", text[:found.start()])
    return len(before) <= 4 and not any(word.lower() in _PREPOSITIONS for word in before)


def docstring_value(docstring: Optional[str], name: str) -> Value:
    """A parameter's type as its function's docstring gives it (Google, NumPy or Sphinx style, or
    `name: LongTensor of ...` prose)."""
    if not docstring or name not in docstring:
        return UNKNOWN
    texts = []
    for match in re.finditer(_DOC_PARAM.format(name=re.escape(name)), docstring):
        if match.group(1) is not None:
            texts.append(match.group(1))
        elif _prose_names_its_type(match.group(2) or ""):
            texts.append(match.group(2))
    for match in re.finditer(rf":type\s+{re.escape(name)}\s*:\s*([^\n]*)", docstring):
        texts.append(match.group(1))
    for match in re.finditer(rf":param\s+[\w.\[\], ]*?\b{re.escape(name)}\s*:\s*([^\n]*)", docstring):
        texts.append(match.group(1))
    for text in texts:
        head = text[:80]
        found = _DOC_TENSOR.search(head)
        if found and _DOC_ALTERNATIVE.search(_DOC_DTYPES.sub("tensor", head)):
            # `timestep (int or torch.Tensor)`, `:type quantiles: torch.Tensor or list`: a tensor on some calls only.
            return Value(kind=Kind.TENSOR, optional=True, why=f"docstring says `{name}` may be a tensor")
        if found:
            kind = (found.group(1) or "") if found.group(0) != "tensor" else ""
            facts = TENSOR_TYPE_NAMES.get(f"{kind}Tensor", {}) if kind else {}
            if re.search(r"\bmask\b", head, re.I):
                facts = {**facts, "bool_mask": True, "zero_dim": False}
            return Value(kind=Kind.TENSOR, why=f"docstring says `{name}` is a tensor", **facts)  # type: ignore[arg-type]
        if _DOC_ARRAY.search(head):
            return Value(kind=Kind.ARRAY, why=f"docstring says `{name}` is an array")
    return UNKNOWN

