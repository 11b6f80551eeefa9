"""Whether an expression may be a tensor the walker knows about, a view of part of one, or a contiguous one.

The prefilter's flags that need more than names (`device-truth-test`, `contiguous-of-contiguous`,
`retains-view`, ...) hold only where the walker could know a tensor: these judgments read a segment's
bindings (`viewlint.analysis.bindings`) and the module's facts (`TensorContext`), and stay supersets
of what the walker concludes, so skipping a segment they reject never loses a finding.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterable, Optional

from viewlint.analysis import semantics
from viewlint.analysis.bindings import (COUNTER, PARAMETER, PASSED_PARAMETER, PLAIN_PARAMETER, Bindings, Element, Held, callee_bindings,
                                        outer_bindings)
from viewlint.analysis.callgraph import MAX_CALLER_LINES, MAX_TUPLE_SUMMARY_LINES, callgraph_of
from viewlint.analysis.returns import may_return_tensor
from viewlint.analysis.nodes import callee_name, dotted, preorder
from viewlint.analysis.project import Project


# Calls whose result may be part of their input's storage (with subscripts and iteration: `partial-view`).
PARTIAL_VIEW_CALLS = semantics.PARTIAL_VIEW_OPS | semantics.SEQUENCE_VIEW_METHODS


# Attributes that are plain Python values on a tensor (the walker's host attributes).
HOST_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "grad_fn", "layout"})
# Methods of `str` that answer a yes/no question: no tensor has them.
_STRING_PREDICATES = frozenset({
    "startswith", "endswith", "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper", "isidentifier",
    "isnumeric", "isdecimal", "isascii", "istitle"})
# Attributes named as flags (`is_primary`, `use_cache`): a field of an object not known to hold tensors.
_FLAG_ATTRIBUTE_PREFIXES = ("is_", "has_", "use_", "enable_", "disable_", "should_", "need_")
# Calls whose result is a host value whatever they are given (`len(x)`, `x.item()`, `x.size(0)`).
HOST_RESULT_CALLS = semantics.HOST_SCALAR_METHODS | semantics.HOST_SCALAR_BUILTINS | {
    "len", "str", "repr", "isinstance", "range", "size", "dim", "numel", "nelement", "element_size", "stride",
    "data_ptr", "is_contiguous", "storage_offset"}
# Calls that return a new tensor of their own, whatever they are given.
FRESH_RESULT_CALLS = frozenset({"clone", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "empty_like",
                                 "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "randint_like"})
# torch functions whose result has storage of its own (factories, `cat`, `stack`): never a view.
_NEW_TENSOR_FUNCTIONS = frozenset(name.rsplit(".", 1)[1] for name in (
    semantics.FACTORY_FUNCTIONS | semantics.LIKE_FACTORY_FUNCTIONS | semantics.FRESH_CONTIGUOUS_FUNCTIONS))
ITERATING_BUILTINS = frozenset({"zip", "enumerate", "reversed", "sorted", "list", "tuple", "iter", "next", "filter", "map"})
_VIEWING_ATTRIBUTES = semantics.VIEW_ATTRIBUTES | semantics.AMBIGUOUS_VIEW_ATTRIBUTES | {"grad"}
# Methods that give a tensor (or tensors) even when the walker does not know the receiver is one.
TENSOR_MAKING_METHODS = (semantics.SEQUENCE_VIEW_METHODS | semantics.VIEW_METHODS | semantics.MAYBE_VIEW_METHODS
                          | {"clone", "nonzero", "argsort"})
_TENSOR_MODULES = ("torch", "numpy", "np")
_WRAPPING_CALLS = frozenset({"list", "tuple", "dict", "set", "OrderedDict", "replace", "copy"})
# Methods that read what a container holds (`queue.get()`, `d.values()`).
_CONTAINER_READS = frozenset({"get", "pop", "popleft", "get_nowait", "values", "items", "setdefault", "copy"})


class TensorContext:
    """The module facts that decide whether an expression may be a tensor the walker knows about:
    the names bound outside functions (module and class level), the attributes classes hold
    tensors or containers in, the imports of torch and NumPy, the configured CPU names, and,
    from the module's call graph, the functions whose callers here pass their parameters
    (`called`) and the names of the functions and methods here that return a value."""

    __slots__ = ("index", "project", "module_instances", "outer", "tensor_attributes", "tensor_fields", "container_attributes", "aliases", "cpu_names", "called",
                 "returning", "forwards", "held_callables", "torch_modules", "_returners", "_segments", "_returns", "_bindings")

    def __init__(self, index: object, cpu_names: Iterable[str] = (), project: Optional[Project] = None) -> None:
        self.index = index
        self.project = project  # the other modules of the package, for what their functions return
        self.outer = outer_bindings(index)
        classes = getattr(index, "classes", {}).values()
        # `self.<attr>`s that hold a parameter or buffer, or a tensor every assignment of which makes (a factory's).
        self.tensor_attributes = {a for info in classes for a in (*info.tensor_attributes, *info.made_tensors)}
        # Fields a class of this module annotates as tensors (`is_prefilling: Optional[torch.Tensor]`).
        self.tensor_fields = {name for info in classes for name, text in info.field_annotations.items()
                              if "Tensor" in text or "ndarray" in text}
        self.container_attributes = {a for info in classes for a in info.container_attributes}
        # `self.<attr>`s a class assigns: called on tensors, the walker reads what they give as a module's output.
        self.held_callables = {a for info in classes for a in (*info.submodule_attributes, *info.assigned_attributes)}
        # `self.<attr>`s assigned an instance of a module class of this module: calling one runs its `forward`.
        module_classes = {info.name for info in classes if info.is_module}
        self.module_instances = {a for info in classes for a, cls in info.attribute_classes.items() if cls in module_classes} \
            | {a for info in classes for a, choices in info.attribute_class_choices.items() if module_classes.intersection(choices)}
        # `self.<attr>`s assigned a `torch.nn` module: the walker reads their calls as tensors whatever they are given.
        self.torch_modules = {a for info in classes for a in info.torch_module_attributes}
        self.aliases: dict[str, str] = dict(getattr(index, "aliases", {}))
        self.cpu_names = frozenset(cpu_names)
        graph = callgraph_of(index) if getattr(index, "tree", None) is not None else None  # type: ignore[arg-type]
        # Functions this module calls -> the parameters their callers fill (a method's `self`/`cls` is not one).
        self.called: dict[int, frozenset[str]] = {}
        # The functions and methods here that may return a tensor: those the walker may summarise (not longer than
        # a summary walk reads, not recursive) whose returns are not all plain Python values.
        self.returning: set[str] = set()
        self.forwards: set[int] = set()  # `forward`/`__call__` methods of module classes: their inputs are tensors
        self._returners: dict[str, list[object]] = {}  # name -> the functions of `returning` that have it
        self._segments: dict[int, list[ast.AST]] = getattr(index, "segment_nodes", {})
        self._returns: dict[tuple[object, ...], bool] = {}  # (predicate, name[, slot]) -> what `may_return(_at)` said
        self._bindings: dict[int, Bindings] = {}  # id(function node) -> its bindings, as a callee
        if graph is not None:
            for key, info in graph.functions.items():
                owner = getattr(index, "classes", {}).get(key.owner) if key.owner else None
                if owner is not None and owner.is_module and key.name in ("forward", "__call__", "_forward"):
                    self.forwards.add(id(info.node))
            self.called = {id(info.node): frozenset((*info.positional, *info.keyword_only))
                           for key, info in graph.functions.items() if graph.callers.get(key)}
            longest = max(MAX_CALLER_LINES, MAX_TUPLE_SUMMARY_LINES)  # the longest function a summary walk reads
            segments = self._segments
            for key, info in graph.functions.items():
                if info.lines <= longest and key not in graph.recursive and may_return_tensor(info, segments.get(id(info.node)) or list(ast.walk(info.node))):
                    self._returners.setdefault(key.name, []).append(info)
            self.returning = set(self._returners)

    def may_return(self, name: Optional[str], judge: "Callable[[ast.AST, Bindings, TensorContext, Optional[set[str]]], bool]") -> bool:
        """Whether a call of a function or method of this module named `name` may give a value `judge`
        holds for (`tensor_may_be`, `partial_may_be`, `contiguous_may_be`): the walker reads such a call
        through its summary, the value the callee's walk finds in its `return`s (and `yield`s), whatever
        the arguments are. So `judge` is asked of each returned expression, with the callee's parameters
        bound to anything. A function met again while it is being judged (recursion) may."""
        if name is None or name not in self._returners:
            return False
        key = (judge, name)
        found = self._returns.get(key)
        if found is None:
            self._returns[key] = True  # while it is judged: calls of itself may give anything
            found = self._returns[key] = any(self._gives(info, judge) for info in self._returners[name])
        return found

    def may_call_return(self, func: ast.AST, judge: "Callable[[ast.AST, Bindings, TensorContext, Optional[set[str]]], bool]") -> bool:
        """`may_return` for a call of `func`: a function or method of this module of its name, or, for
        `self.<attr>(...)` holding an instance of a module class of this module, a `forward` or `__call__`
        (the walker runs that class's `forward`)."""
        if self.may_return(callee_name(func), judge):
            return True
        return type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id == "self" \
            and func.attr in self.module_instances \
            and (self.may_return("forward", judge) or self.may_return("__call__", judge))  # type: ignore[attr-defined]

    def imported_tensor(self, func: ast.AST) -> bool:
        """Whether calling `func`, a function imported from another module of the project (`keep_last`,
        `utils.keep_last`), gives a tensor or tensors as its return annotation says: the walker's own reading
        (`Project.imported_return`)."""
        if self.project is None:
            return False
        if type(func) is ast.Name:
            reference = func.id  # type: ignore[attr-defined]
        elif type(func) is ast.Attribute and type(func.value) is ast.Name:  # type: ignore[attr-defined]
            reference = f"{func.value.id}.{func.attr}"  # type: ignore[attr-defined]
        else:
            return False
        value = self.project.imported_return(self.index, reference)  # type: ignore[arg-type]
        return value is not None and value.holds_tensor()

    def may_return_at(self, name: Optional[str], slot: tuple[int, int],
                      judge: "Callable[[ast.AST, Bindings, TensorContext, Optional[set[str]]], bool]") -> Optional[bool]:
        """`may_return` for item `slot[0]` of an unpacking of `slot[1]` names, when every function of that name
        returns only tuple displays of that length (or `None`): the walker joins such returns item by item and
        unpacks them item by item. None when that does not hold (then `may_return` says)."""
        if name is None or name not in self._returners:
            return None
        key = (judge, name, slot)
        if key in self._returns:
            return self._returns[key]
        position, length = slot
        items: list[tuple[Bindings, ast.AST]] = []
        for info in self._returners[name]:
            node = info.node  # type: ignore[attr-defined]
            nodes = self._segments.get(id(node)) or preorder(node)
            for child in nodes:
                kind = type(child)
                if kind is ast.Yield or kind is ast.YieldFrom:
                    return None
                if kind is ast.Return and child.value is not None:  # type: ignore[attr-defined]
                    value = child.value  # type: ignore[attr-defined]
                    if type(value) is ast.Constant and value.value is None:
                        continue
                    if type(value) is not ast.Tuple or len(value.elts) != length \
                            or any(type(e) is ast.Starred for e in value.elts):
                        return None
                    items.append((self._callee_bound(info, nodes), value.elts[position]))
        self._returns[key] = True  # while it is judged: calls of itself may give anything
        found = self._returns[key] = any(judge(item, bound, self, None) for bound, item in items)
        return found

    def _gives(self, info: object, judge: "Callable[[ast.AST, Bindings, TensorContext, Optional[set[str]]], bool]") -> bool:
        node = info.node  # type: ignore[attr-defined]
        nodes = self._segments.get(id(node)) or preorder(node)
        returned = []
        for child in nodes:
            kind = type(child)
            if kind is ast.Yield or kind is ast.YieldFrom:
                return True  # a generator: what the walker makes of it is not read here
            if kind is ast.Return and child.value is not None:  # type: ignore[attr-defined]
                returned.append(child.value)  # type: ignore[attr-defined]
        if not returned:
            return False
        bound = self._callee_bound(info, nodes)
        return any(judge(value, bound, self, None) for value in returned)

    def _callee_bound(self, info: object, nodes: list[ast.AST]) -> Bindings:
        """`callee_bindings` of a function, once per function."""
        node = info.node  # type: ignore[attr-defined]
        bound = self._bindings.get(id(node))
        if bound is None:
            bound = self._bindings[id(node)] = callee_bindings(info, nodes)
        return bound

    def tensor_module(self, head: str) -> bool:
        target = self.aliases.get(head, head)
        return target.split(".")[0] in _TENSOR_MODULES

    def torch_module(self, node: ast.AST) -> bool:
        """`node`'s dotted name starts at the `torch` package (under any alias: `dist.`, `F.`)."""
        name = dotted(node)
        return name is not None and self.aliases.get(name.split(".")[0], name.split(".")[0]).split(".")[0] == "torch"

    def torch_call(self, func: ast.AST) -> bool:
        """A call of a `torch` or NumPy function (`torch.zeros`, `F.pad`, `np.stack`)."""
        name = dotted(func)
        return name is not None and self.tensor_module(name.split(".")[0])

    def torch_result(self, func: ast.AST) -> Optional[bool]:
        """For a call of a `torch` or NumPy function, whether the walker may know it to give a tensor (or an
        array); None for any other call. A `torch` function imported here gives one exactly when
        `semantics.torch_call_gives_tensor` says so: `torch.cuda.get_device_capability()`, `dist.get_rank()` and
        `torch.is_tensor(x)` give nothing known. NumPy's functions give arrays (`np.is_busday` too)."""
        name = dotted(func)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = self.aliases.get(head)
        if target is None:  # `torch.zeros(...)` without the import: not the walker's torch, but read as it was
            return None if head not in _TENSOR_MODULES else not (head == "torch" and name.rpartition(".")[2].startswith("is_"))
        if target.split(".")[0] not in _TENSOR_MODULES:
            return None
        qualified = f"{target}.{rest}" if rest else target
        return not qualified.startswith("torch.") or semantics.torch_call_gives_tensor(qualified)


# View ops after which the walker may know a tensor contiguous (those that keep a contiguous receiver contiguous).
_LAYOUT_FOLLOWING_VIEW_OPS = semantics.CONTIGUITY_KEEPING_VIEW_OPS | semantics.LAYOUT_KEEPING_VIEW_OPS


def _wrapping_call(func: ast.AST) -> bool:
    """A call the walker reads as a container or object holding its arguments: `list(...)`,
    `dict(...)`, `replace(...)`, or a capitalised name (a class: `Entry(piece)`)."""
    name = dotted(func) or ""
    return name in _WRAPPING_CALLS or name[:1].isupper()


def tensor_may_be(node: ast.AST, bound: Bindings, context: TensorContext, seen: Optional[set[str]] = None) -> bool:
    """A superset of the expressions the walker can know to be a tensor, or a container of
    tensors (`Facts.value_of`): a name bound (in the segment or outside functions) to such a
    value, or unknowably (a loop target, a parameter annotated as a tensor); what `torch`/NumPy
    functions and tensor-making methods return; views, subscripts, arithmetic and comparisons
    of such values; `self.<attr>` held as a tensor by a class. A plain parameter, an unknown
    attribute or call, a constant: no."""
    kind = type(node)
    if kind is ast.Name:
        name = node.id  # type: ignore[attr-defined]
        return name in context.cpu_names or _bound_to_tensor(name, bound, context, seen)
    if kind is ast.Attribute:
        attr = node.attr  # type: ignore[attr-defined]
        name = dotted(node)
        if attr in context.cpu_names or (name is not None and (name in context.cpu_names or _bound_to_tensor(name, bound, context, seen))):
            return True
        if attr in HOST_ATTRIBUTES:
            return False
        if attr in _VIEWING_ATTRIBUTES:
            return True  # `.data`, `.grad`, `.T`: of a tensor, or of a module's parameter
        if attr in semantics.PARAMETER_ATTRIBUTE_NAMES and name != f"self.{attr}":
            return True  # `layer.weight`: a module's parameter
        if name is not None and context.tensor_module(name.split(".", 1)[0]):
            return False  # `torch.bfloat16`, `torch.version.hip`, `np.float32`: a dtype, a string, a constant
        if attr in context.tensor_fields:
            return True  # a tensor field of a class of this module
        if name is not None and name.startswith("self."):
            dots = name.count(".")
            if dots == 1:
                named = (attr in ("weight", "bias") or attr.endswith(("_weight", "_bias", "_proj"))) \
                    and not attr.startswith(semantics.FLAG_PREFIXES)  # `self.use_bias` is a flag
                return attr in context.tensor_attributes or attr in context.container_attributes or named
        if attr.startswith(_FLAG_ATTRIBUTE_PREFIXES):
            return False  # `c.decl.is_primary`, `batch.use_cache`: a flag of some object, not a tensor
        if _tensor_parameter(node.value, bound, context):  # type: ignore[attr-defined]
            return False  # `mP.element_type` of a tensor parameter: no field the walker knows
        # A field of an object built from tensors (`entry.embedding`, `Entry(piece).embedding`).
        return tensor_may_be(node.value, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.Call:
        return _call_tensor_may_be(node, bound, context, seen)
    return _value_tensor_may_be(node, bound, context, seen)


def _call_tensor_may_be(node: ast.AST, bound: Bindings, context: TensorContext, seen: Optional[set[str]],
                        summarised: bool = True) -> bool:
    """`tensor_may_be` of a call; `summarised=False`: without what the functions of this module of its name
    may return (already judged by the caller)."""
    func = node.func  # type: ignore[attr-defined]
    if summarised and context.may_call_return(func, tensor_may_be):
        return True  # a function of this module that may return a tensor
    if context.imported_tensor(func):
        return True  # a function of another module of the package annotated to return a tensor
    known = context.torch_result(func)
    if known is not None:
        return known  # a torch function the walker knows the result of (not `torch.cuda.is_available()`), NumPy's
    if type(func) is ast.Attribute:
        if func.attr in semantics.HOST_VALUE_METHODS or func.attr in _STRING_PREDICATES or func.attr == "keys":
            return False  # `x.dim()`, `x.size(0)`, `x.item()`, `name.endswith(".bias")`, `d.keys()`: Python values
        if tensor_may_be(func.value, bound, context, seen):
            return True
        if any(k.arg == "dim" for k in node.keywords):  # type: ignore[attr-defined]
            return True  # `mask.sum(dim=1)`: NumPy says `axis=`, only torch's methods take `dim=`
        if func.attr in TENSOR_MAKING_METHODS and (func.attr not in semantics.MAYBE_VIEW_METHODS_NEED_TENSOR
                                                    or given_tensor_arguments(node, context)):
            # `x.reshape(...)`, `x.clone()`: only tensors have them. `.to(...)`, `.float()`, `.cuda()` (Triton's
            # values, modules and NumPy arrays have them too) of something unknown: only with a torch dtype.
            return True
        # `self.proj(x)`, `self.gate(x)`: a submodule or a callable the class holds, applied to a tensor.
        if type(func.value) is ast.Name and func.value.id == "self" and func.attr in context.torch_modules:
            return True
        return type(func.value) is ast.Name and func.value.id == "self" and func.attr in context.held_callables \
            and not func.attr.startswith(semantics.PREDICATE_PREFIXES) and _positional_tensor(node, bound, context, seen)
    if type(func) is ast.Name and func.id in ("max", "min", "sum", "abs"):
        return any(tensor_may_be(a, bound, context, seen) for a in call_arguments(node))  # over 0-d tensors: a tensor
    if not _wrapping_call(func):
        # `fn(x)`, `model(x)`: a callable held in a parameter or a name bound here, applied to a tensor. Any other
        # plain call is unknown to the walker (`isinstance`, `len`, `helper(x)`).
        name = func.id if type(func) is ast.Name else None
        if name is not None and name in bound and not node.args and not node.keywords:  # type: ignore[attr-defined]
            return True  # `loss = closure()`: a function defined here over the function's own values (`Facts`)
        return name is not None and (name in bound or name in context.outer) and name not in context.aliases \
            and name not in semantics.BUILTIN_NAMES and not name.startswith(semantics.PREDICATE_PREFIXES) \
            and _positional_tensor(node, bound, context, seen)
    # A class or container built from tensors holds them (`Pair(a, b)[0]`, `list(pieces)`).
    return any(tensor_may_be(a, bound, context, seen) for a in call_arguments(node))


def _value_tensor_may_be(node: ast.AST, bound: Bindings, context: TensorContext, seen: Optional[set[str]]) -> bool:
    """`tensor_may_be` of what is neither a name, an attribute nor a call."""
    kind = type(node)
    if kind is ast.Subscript:
        index = node.slice  # type: ignore[attr-defined]
        if type(index) is ast.Tuple or (type(index) is ast.Constant and index.value is Ellipsis):  # type: ignore[attr-defined]
            return True  # `x[:, 0]`, `x[...]`: tensor-style indexing, whatever `x` is
        if tensor_may_be(node.value, bound, context, seen):  # type: ignore[attr-defined]
            return True
        # `x[idx]` with a tensor index: only tensors and arrays take one.
        return maybe_advanced(index) and any(tensor_may_be(e, bound, context, seen) for e in index_elements(index))
    if kind is ast.Compare:
        if any(isinstance(op, HOST_COMPARISONS) for op in node.ops):  # type: ignore[attr-defined]
            return False  # `is`, `in`: a Python bool
        if any(type(c) is ast.Constant and isinstance(c.value, str) for c in (node.left, *node.comparators)):  # type: ignore[attr-defined]
            return False  # compared with a string: not a tensor
        return any(tensor_may_be(o, bound, context, seen) for o in (node.left, *node.comparators))  # type: ignore[attr-defined]
    if kind is ast.BinOp:
        return tensor_may_be(node.left, bound, context, seen) or tensor_may_be(node.right, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp:
        return type(node.op) is not ast.Not and tensor_may_be(node.operand, bound, context, seen)  # type: ignore[attr-defined]
    if kind is Element:
        return _element_tensor_may_be(node, bound, context, seen)  # type: ignore[arg-type]
    return _through(node, tensor_may_be, bound, context, seen)


def given_tensor_arguments(call: ast.AST, context: TensorContext) -> bool:
    """`.to(torch.float16)`, `.to(dtype=...)`, `.type(device=...)`: the walker reads the receiver of such a
    `.to`/`.type` as a tensor, whatever else it knows of it (only tensors take a torch dtype or a device)."""
    if call.func.attr not in ("to", "type"):  # type: ignore[attr-defined]
        return False
    return any(k.arg in ("dtype", "device") or context.torch_module(k.value) for k in call.keywords) \
        or any(context.torch_module(a) for a in call.args)  # type: ignore[attr-defined]


def _positional_tensor(call: ast.AST, bound: Bindings, context: TensorContext, seen: Optional[set[str]]) -> bool:
    """Some positional (unstarred) argument of the call may be a tensor."""
    return any(type(a) is not ast.Starred and tensor_may_be(a, bound, context, seen) for a in call.args)  # type: ignore[attr-defined]


def _tensor_parameter(node: ast.AST, bound: Bindings, context: TensorContext) -> bool:
    """A name bound only as a parameter the walker reads as a tensor (annotated as one, or an activation of a
    `forward`), never rebound. The walker binds it to a tensor (or, joined with what callers pass, a container
    without named fields), so an attribute it has no rule for (`x.element_type`) is unknown, not a field."""
    if type(node) is not ast.Name or node.id in context.outer:  # type: ignore[attr-defined]
        return False
    values = bound.get(node.id)  # type: ignore[attr-defined]
    return bool(values) and PARAMETER in values and all(v is PARAMETER or v is PLAIN_PARAMETER for v in values)


def _element_tensor_may_be(node: "Element", bound: Bindings, context: TensorContext, seen: Optional[set[str]]) -> bool:
    """An item of what a loop or an unpacking takes it from may be a tensor: as the walker iterates
    (`Evaluator.iterate`, `bind_target_into`), `range` gives ints, `enumerate` counts, `zip` and the
    other iterating builtins give items of their arguments, a literal its elements; anything else
    gives a tensor only when it may be a tensor or hold tensors."""
    source = node.source
    if source is COUNTER:
        return False
    kind = type(source)
    if node.slot is not None and kind is ast.Call:
        # `causal, local = _resolve(...)`: item `local` of what every `return` of the functions of that name gives.
        at = context.may_return_at(callee_name(source.func), node.slot, tensor_may_be)  # type: ignore[attr-defined]
        if at is not None:
            return at or _call_tensor_may_be(source, bound, context, seen, summarised=False)
    if kind is ast.Call and type(source.func) is ast.Name:  # type: ignore[attr-defined]
        called = source.func.id  # type: ignore[attr-defined]
        if called == "range":
            return False
        if called in ITERATING_BUILTINS:
            return any(_element_tensor_may_be(Element(a.value if type(a) is ast.Starred else a), bound, context, seen)
                       for a in (*source.args, *(k.value for k in source.keywords)))  # type: ignore[attr-defined]
    if kind is ast.List or kind is ast.Tuple or kind is ast.Set:
        return any(tensor_may_be(e, bound, context, seen) for e in source.elts)  # type: ignore[attr-defined]
    return tensor_may_be(source, bound, context, seen)


def _bound_to_tensor(name: str, bound: Bindings, context: TensorContext, seen: Optional[set[str]]) -> bool:
    """Some value `name` is bound to, in the segment or outside functions, may be a tensor."""
    return _bound_to(name, bound, context, seen, tensor_may_be, True)


# What a name holds when it is built as a container (`pieces = []`, `{k: v ...}`, `dict()`): its truth is its length.
_CONTAINER_BUILDERS = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_EMPTY_CONTAINER_CALLS = frozenset({"list", "dict", "set", "tuple", "OrderedDict", "defaultdict", "deque"})


def _built_container(value: Optional[ast.AST]) -> bool:
    """A binding that makes a container (`[]`, `{k: v ...}`, `dict()`) or adds to one (`Held`)."""
    if value is None:
        return False
    kind = type(value)
    if kind is Held or kind in _CONTAINER_BUILDERS:
        return True
    return kind is ast.Call and callee_name(value.func) in _EMPTY_CONTAINER_CALLS and not value.args  # type: ignore[attr-defined]


def built_here(node: ast.AST, bound: Bindings, context: TensorContext) -> bool:
    """A name the function builds as a container and fills (`pieces = []; pieces.append(t)`): a list or a dict
    to the walker, whatever it holds."""
    if type(node) is not ast.Name or context.outer.get(node.id) is not None:  # type: ignore[attr-defined]
        return False
    values = bound.get(node.id)  # type: ignore[attr-defined]
    return bool(values) and all(_built_container(value) for value in values)


def itself_may_be_tensor(node: ast.AST, bound: Bindings, context: TensorContext) -> bool:
    """`tensor_may_be` for a question about the value itself, not what it holds (its truth, a method called on it,
    `int(...)` of it): a container built here is none (`if pieces:`, `seen.add(k)`)."""
    return not built_here(node, bound, context) and tensor_may_be(node, bound, context)


def part_of_self(node: ast.AST, bound: Bindings, context: TensorContext) -> bool:
    """`self.ids[n:]`, `self.table[0]`: a part of something the object holds that is not a container of
    other tensors and that the segment does not set (to a view of a local); its storage lives as long
    as the object, so storing it pins nothing more (VL101, VL102)."""
    if type(node) is not ast.Subscript:
        return False
    held = node.value  # type: ignore[attr-defined]
    return type(held) is ast.Attribute and type(held.value) is ast.Name and held.value.id == "self" \
        and held.attr not in context.container_attributes and f"self.{held.attr}" not in bound  # type: ignore[attr-defined]


def _element_partial_may_be(node: Element, bound: Bindings, context: TensorContext, seen: Optional[set[str]]) -> bool:
    """An element of a tensor (a row: a view of part of it), of a sequence of views, or of `zip`/`enumerate` of them."""
    source = node.source
    if type(source) is ast.Call and type(source.func) is ast.Name and source.func.id in ITERATING_BUILTINS:  # type: ignore[attr-defined]
        return any(_element_partial_may_be(Element(a), bound, context, seen) for a in source.args)  # type: ignore[attr-defined]
    before = set(seen) if seen is not None else None  # the names the other question may visit again
    return partial_may_be(source, bound, context, seen) or tensor_may_be(source, bound, context, before)


def _bound_to(name: str, bound: Bindings, context: TensorContext, seen: Optional[set[str]],
              judge: "Callable[[ast.AST, Bindings, TensorContext, Optional[set[str]]], bool]", parameter: bool) -> bool:
    """`judge` holds for some value `name` is bound to (in the segment or outside functions);
    an unknown binding (a loop target) counts, a tensor parameter counts when `parameter`."""
    local, outer = bound.get(name), context.outer.get(name)
    if local is None and outer is None:
        return False
    seen = set() if seen is None else seen
    if name in seen:
        return False  # a cycle (`x = x + 1`) adds nothing
    seen.add(name)
    for value in (*(local or ()), *(outer or ())):
        if value is PASSED_PARAMETER:
            if judge is partial_may_be or judge is contiguous_may_be:
                return True  # what the callers pass, when it is a view of part of a tensor, or contiguous
            continue
        if value is None or (parameter if value is PARAMETER else judge(value, bound, context, seen)):
            return True
    return False


def contiguous_may_be(node: ast.AST, bound: Bindings, context: TensorContext, seen: Optional[set[str]] = None) -> bool:
    """A superset of the expressions the walker can know to be contiguous tensors (VL301):
    `torch`/NumPy results, `.contiguous()`, `.clone()`, fresh contiguous methods (`matmul`, `repeat`...),
    gathers, what casts, moves and in-place methods of such a value return, arithmetic
    on it, and names bound to any of these (or unknowably). Views, parameters, comparisons: no."""
    kind = type(node)
    if kind is ast.Name:
        return _bound_to(node.id, bound, context, seen, contiguous_may_be, False)  # type: ignore[attr-defined]
    if kind is Element:
        return _element_tensor_may_be(node, bound, context, seen)  # type: ignore[arg-type]  # a row of a contiguous tensor
    if kind is ast.Attribute:
        name = dotted(node)
        return name is not None and _bound_to(name, bound, context, seen, contiguous_may_be, False)
    if kind is ast.Call:
        func = node.func  # type: ignore[attr-defined]
        if context.torch_result(func) or context.may_call_return(func, contiguous_may_be):
            return True
        if type(func) is ast.Attribute:
            method = func.attr
            if method in ("contiguous", "clone") or method in semantics.FRESH_CONTIGUOUS_METHODS:
                return True  # (VL301 flags `.clone().contiguous()` whatever was cloned)
            if method in semantics.MAYBE_VIEW_METHODS or semantics.is_inplace_method(method) \
                    or f".{method}()" in _LAYOUT_FOLLOWING_VIEW_OPS:
                # What a cast, an in-place op, or a view that keeps a contiguous receiver contiguous (`x.view(b, -1)`,
                # `x.unsqueeze(0)`) returns.
                return contiguous_may_be(func.value, bound, context, seen)
            if type(func.value) is ast.Name and func.value.id == "self" and method in context.torch_modules:
                return True  # `self.norm(x)` of an `nn.LayerNorm` (a layer's output may be known contiguous)
        if semantics.names_an_activation((dotted(func) or "").rpartition(".")[2]):
            return any(contiguous_may_be(a, bound, context, seen) for a in call_arguments(node))  # `self.act_fn(x)`
        if type(func) is ast.Attribute:
            return False
        if not _wrapping_call(func):
            return False
        return any(contiguous_may_be(a, bound, context, seen) for a in call_arguments(node))
    if kind is ast.Subscript:
        if maybe_advanced(node.slice) and (tensor_may_be(node.value, bound, context, seen) or any(  # type: ignore[attr-defined]
                tensor_may_be(e, bound, context, seen) for e in index_elements(node.slice))):  # type: ignore[attr-defined]
            return True  # a gather: a fresh contiguous tensor
        index = node.slice  # type: ignore[attr-defined]
        if type(index) is ast.Tuple or (type(index) is ast.Slice and index.step is not None):  # type: ignore[attr-defined]
            return False  # `x[:, 0]`, `x[::2]`: a view, which the walker never knows to be contiguous
        # `parts[0]`: an element; `buf[i]`, `buf[a:b]`: whole rows, contiguous when `buf` is.
        return contiguous_may_be(node.value, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.BinOp:
        if type(node.op) is ast.MatMult:  # type: ignore[attr-defined]
            return True
        return contiguous_may_be(node.left, bound, context, seen) or contiguous_may_be(node.right, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp:
        return type(node.op) is not ast.Not and contiguous_may_be(node.operand, bound, context, seen)  # type: ignore[attr-defined]
    return _through(node, contiguous_may_be, bound, context, seen)


def partial_may_be(node: ast.AST, bound: Bindings, context: TensorContext, seen: Optional[set[str]] = None) -> bool:
    """A superset of the values the walker can know to be, or to hold, a view of part of a tensor
    (`Value.partial`, VL101/VL102): subscripts of what may be a tensor; `split`/`narrow`/`select`/...,
    `.real`/`.imag`; views, casts and moves of such a value; containers and wrappers holding one;
    names bound to any of these or unknowably (a loop target: rows of a tensor are views)."""
    kind = type(node)
    if kind is ast.Name:
        return _bound_to(node.id, bound, context, seen, partial_may_be, False)  # type: ignore[attr-defined]
    if kind is Element:
        return _element_partial_may_be(node, bound, context, seen)  # type: ignore[arg-type]
    if kind is ast.Attribute:
        attr = node.attr  # type: ignore[attr-defined]
        name = dotted(node)
        if name is not None and _bound_to(name, bound, context, seen, partial_may_be, False):
            return True
        if attr in HOST_ATTRIBUTES:
            return False  # `x.shape`, `x.device`: metadata, never a view
        if attr in PARTIAL_VIEW_CALLS:
            return True  # `.real`, `.imag`
        if name is not None and name.startswith("self.") and name.count(".") == 1 and attr in context.container_attributes:
            return True  # what a class keeps in a container attribute
        # A view attribute of a part (`piece.data`), or a field of an object holding one (`entry.embedding`).
        return partial_may_be(node.value, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.Subscript:
        index = node.slice  # type: ignore[attr-defined]
        return type(index) is ast.Tuple or (type(index) is ast.Constant and index.value is Ellipsis) \
            or tensor_may_be(node.value, bound, context, seen) or partial_may_be(node.value, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.Call:
        func = node.func  # type: ignore[attr-defined]
        last = callee_name(func) or ""
        if last in PARTIAL_VIEW_CALLS or context.may_call_return(func, partial_may_be):
            return True  # a split, or a function of this module that may return a view of part of a tensor
        if last == "deepcopy":  # `copy.deepcopy(piece)`: a view of part of a copy of all of `piece`'s storage
            return any(partial_may_be(a, bound, context, seen) for a in call_arguments(node))
        torch_call = context.torch_call(func)
        if torch_call and last in _NEW_TENSOR_FUNCTIONS:
            return False  # `torch.empty(...)`, `torch.cat(...)`: a tensor with storage of its own
        if type(func) is ast.Attribute and not torch_call:
            if last in semantics.VIEW_METHODS or last in semantics.MAYBE_VIEW_METHODS or last in _CONTAINER_READS:
                return partial_may_be(func.value, bound, context, seen)
            return False
        if not torch_call and not _wrapping_call(func):
            return False
        # A torch function of a partial view (`torch.reshape(piece, ...)`), a wrapper holding one (`Entry(piece)`).
        return any(partial_may_be(a, bound, context, seen) for a in call_arguments(node))
    if kind is ast.BoolOp:
        return any(partial_may_be(v, bound, context, seen) for v in node.values)  # type: ignore[attr-defined]
    return _through(node, partial_may_be, bound, context, seen)


def _through(node: ast.AST, judge: "Callable[[ast.AST, Bindings, TensorContext, Optional[set[str]]], bool]",
             bound: Bindings, context: TensorContext, seen: Optional[set[str]]) -> bool:
    """The cases the value predicates share: a conditional expression or `:=` is what it may
    give; a literal container holds its elements; a comprehension's elements come from its own
    `for`, so it may hold anything."""
    kind = type(node)
    if kind is Held:
        return judge(node.item, bound, context, seen)  # type: ignore[attr-defined]  # a container holding it
    if kind is ast.IfExp:
        return judge(node.body, bound, context, seen) or judge(node.orelse, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.NamedExpr or kind is ast.Starred:
        return judge(node.value, bound, context, seen)  # type: ignore[attr-defined]
    if kind is ast.List or kind is ast.Tuple or kind is ast.Set:
        return any(judge(element, bound, context, seen) for element in node.elts)  # type: ignore[attr-defined]
    if kind is ast.Dict:
        return any(judge(value, bound, context, seen) for value in node.values)  # type: ignore[attr-defined]
    return kind is ast.ListComp or kind is ast.SetComp or kind is ast.GeneratorExp or kind is ast.DictComp


def index_elements(index: ast.AST) -> list[ast.AST]:
    if type(index) is ast.Tuple:
        return [e for e in index.elts if type(e) is not ast.Slice]  # type: ignore[attr-defined]
    return [] if type(index) is ast.Slice else [index]


def call_arguments(call: ast.AST) -> list[ast.AST]:
    """The argument values of a call, positional (unstarred) and keyword."""
    return [a.value if type(a) is ast.Starred else a for a in call.args] + [k.value for k in call.keywords]  # type: ignore[attr-defined]


HOST_COMPARISONS = (ast.Is, ast.IsNot, ast.In, ast.NotIn)


def maybe_advanced(index: ast.AST) -> bool:
    """An index that may select by tensor, list or mask: anything but slices, literals and `...`/`None`."""
    kind = type(index)
    if kind is ast.Slice or kind is ast.Constant:
        return False
    if kind is ast.Tuple:
        return any(maybe_advanced(element) for element in index.elts)  # type: ignore[attr-defined]
    if kind is ast.UnaryOp:
        return type(index.operand) is not ast.Constant  # type: ignore[attr-defined]
    return True
