"""The single pass over a module: tensor facts per function, in statement order, and rule dispatch.

The walker keeps an environment (name -> Value) per function and a stack of contexts
(function, class, loop, hot or cold block). Rules receive ``visit_<Node>``/``leave_<Node>``
calls during the same walk and ask ``Facts`` what is known at that point.
"""

from __future__ import annotations

import fnmatch
import functools
import inspect
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Sequence

import libcst as cst

from viewlint.analysis import semantics as sem
from viewlint.analysis.module_index import ModuleIndex, build_index, dotted_name
from viewlint.analysis.values import (
    HOST,
    INT,
    UNKNOWN,
    UNKNOWN_TENSOR,
    IndexKind,
    Kind,
    Provenance,
    Value,
    fresh,
    merge,
)
from viewlint.settings import Settings

if TYPE_CHECKING:
    from viewlint.rule import Rule

ADVANCED_INDEX = "advanced index"
HOT_MARKER = re.compile(r"#\s*viewlint:\s*hot\b")
# Globs of function names that run once (construction, loading, saving, printing): never a hot path.
COLD_FUNCTION_NAMES = (
    "__init__", "__post_init__", "post_init", "load_weights", "load_*", "_load_*", "from_pretrained", "from_config",
    "load_state_dict", "_load_from_state_dict", "state_dict", "save_*", "setup", "build", "reset_parameters",
    "_init*", "init_weights", "*_init_weights", "create_weights", "process_weights_after_loading", "__repr__",
    "__str__", "extra_repr",
)
# Globs of function names that build an object's layout once: views they store are the design.
SETUP_FUNCTION_NAMES = (
    "__init__", "__post_init__", "post_init", "_init*", "init_*", "setup", "setup_*", "_setup*", "build", "build_*",
    "_build*", "create_*", "_create_*", "allocate*", "_allocate*", "process_weights_after_loading",
)
# Method names that are hot in any class (PyTorch's convention, used by modules and forward mixins alike).
HOT_FUNCTION_NAMES = ("forward", "forward_*", "_forward", "_forward_*")
# `__call__` is hot only on a module-like class or when it takes a tensor: processors and collators are not.
HOT_CALL_NAMES = ("__call__",)
HOT_DECORATORS = ("torch.compile", "torch.jit.script", "torch.compiler.compile", "torch._dynamo.optimize")
# Class names (or base names) of data preparation and orchestration: their `forward`/`__call__` run once per
# batch or request (feature extractors, processors, collators, pipelines and pipeline stages), not per layer.
_PREPROCESSING_CLASS_WORDS = ("FeatureExtract", "ImageProcessor", "VideoProcessor", "ProcessorMixin", "Tokenizer", "Collator", "Pipeline", "Stage")
# Names and words in an `if` test that guard logging or once-per-interval work.
_INTERVAL_WORDS = ("step", "iter", "epoch", "interval", "every", "freq", "period", "log")
_LOGGING_WORDS = ("log_interval", "logging_steps", "print_freq", "log_every", "debug", "verbose", "should_log", "epoch")


@functools.lru_cache(maxsize=4096)
def _is_setup_name(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, glob) for glob in SETUP_FUNCTION_NAMES)


@dataclass
class Context:
    """One level of the context stack."""

    kind: str  # module | class | function | loop | block
    name: str = ""
    hot: bool = False
    cold: bool = False
    class_name: Optional[str] = None
    node: Optional[cst.CSTNode] = None
    # Cold whatever is nested inside (tests, `if __name__ == "__main__":`), even a hot `forward`.
    cold_all: bool = False


@dataclass
class Report:
    rule: "Rule"
    node: cst.CSTNode
    message: str
    statement: Optional[cst.CSTNode]
    fix_message: Optional[str] = None
    edits: tuple[tuple[cst.CSTNode, str], ...] = ()
    applicability: Any = None
    top: Optional[cst.CSTNode] = None  # the module-level statement the report sits in
    member: Optional[cst.CSTNode] = None  # and the class member, when that statement is a class


@dataclass
class StoreEvent:
    """A value entering a long-lived place (a container held by `self` or the module, a cache)."""

    node: cst.CSTNode  # the Assign or Call that stores
    value_node: cst.BaseExpression
    value: Value
    target: str  # e.g. "self.cache[...]", "cache.set(...)"


def source_in_place(module: cst.Module, node: cst.CSTNode, blocks: Sequence[cst.IndentedBlock]) -> str:
    """`node`'s code with the indentation of its enclosing blocks (`blocks`, outermost first).

    `Module.code_for_node` prints a node alone, so a line continued inside brackets loses
    the indentation of the blocks around it; an edit made from it would dedent that line.
    """
    from libcst._nodes.internal import CodegenState

    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
    for block in blocks:
        state.indent_tokens.append(module.default_indent if block.indent is None else block.indent)
    node._codegen(state)
    return "".join(state.tokens)


class Facts:
    """What is known at the walker's current position. Rules hold one and ask it questions."""

    def __init__(self, module: cst.Module, settings: Settings, index: Optional[ModuleIndex] = None) -> None:
        self.module = module
        self.settings = settings
        self.index = index or build_index(module)
        self.reports: list[Report] = []
        self.errors: list[tuple[str, str]] = []  # (rule code, message)
        self._scopes: list[dict[str, Value]] = [{}]
        self._contexts: list[Context] = [Context(kind="module")]
        self._statements: list[cst.CSTNode] = []
        self._blocks: list[cst.IndentedBlock] = []  # enclosing indented blocks, for edit text
        self._if_snapshots: list[dict[str, Value]] = []
        self._loop_snapshots: list[dict[str, Value]] = []
        self._current_class: list[str] = []
        self._hot_globs = tuple(settings.hot_functions)
        self._name_reads: dict[str, int] = {}
        # The module and the functions being walked, innermost last (for reads_after).
        self._scope_nodes: list[cst.CSTNode] = []
        self._reads_cache: dict[int, tuple[dict[str, list[cst.Name]], dict[int, int]]] = {}

    # ------------------------------------------------------------------ reports
    def report(self, rule: "Rule", node: cst.CSTNode, message: str, *, fix_message: Optional[str] = None,
               edits: tuple[tuple[cst.CSTNode, str], ...] = (), applicability: Any = None) -> None:
        statement = self._statements[-1] if self._statements else None
        top = self._statements[0] if self._statements else None
        member = self._statements[1] if len(self._statements) > 1 and isinstance(top, cst.ClassDef) else None
        self.reports.append(Report(rule, node, message, statement, fix_message, edits, applicability, top, member))

    @property
    def current_statement(self) -> Optional[cst.CSTNode]:
        """The innermost statement (a SimpleStatementLine or compound statement) being walked."""
        return self._statements[-1] if self._statements else None

    # ------------------------------------------------------------------ names and text
    def qualify(self, node: cst.BaseExpression) -> Optional[str]:
        """Fully qualified name through import aliases: `t.split` -> `torch.split`."""
        return self.index.qualify(node)

    def source(self, node: cst.CSTNode) -> str:
        """The source text of a node (as libcst prints it): for messages and comparisons."""
        name = dotted_name(node) if isinstance(node, cst.BaseExpression) else None
        if name is not None:
            return name
        return self.module.code_for_node(node)

    def source_for_edit(self, node: cst.CSTNode) -> str:
        """The source text of a node inside the current statement, continuation lines indented as in the file."""
        text = self.source(node)
        if "\n" in text or "\r" in text:
            text = source_in_place(self.module, node, self._blocks)
        return text

    def short_source(self, node: cst.CSTNode, limit: int = 60) -> str:
        text = " ".join(self.source(node).split())
        return text if len(text) <= limit else text[: limit - 1] + "…"

    # ------------------------------------------------------------------ contexts
    @property
    def in_function(self) -> bool:
        return any(c.kind == "function" for c in self._contexts)

    @property
    def function_name(self) -> Optional[str]:
        for context in reversed(self._contexts):
            if context.kind == "function":
                return context.name
        return None

    @property
    def in_setup_function(self) -> bool:
        """Inside `__init__`, `_init_*`, `setup`, `build*`...: what it stores into `self` is the object's layout."""
        name = self.function_name
        return name is not None and _is_setup_name(name)

    @property
    def class_name(self) -> Optional[str]:
        return self._current_class[-1] if self._current_class else None

    @property
    def in_hot_path(self) -> bool:
        """Inside a hot function (or a block marked hot), and not inside a known-cold place.

        The contexts form a stack: the innermost one that says hot or cold decides, so a nested
        `def` or loop keeps its outer context and a cold `if step % 100 == 0:` inside `forward`
        is quiet. Tests and `if __name__ == "__main__":` silence everything nested in them.
        """
        return self._hot_context() is not None

    @property
    def hot_path_name(self) -> Optional[str]:
        """A short description of the hot context for messages: "`Model.forward`", "a `# viewlint: hot` block"."""
        return self.hot_path_name_at(None)

    def hot_path_name_at(self, header_of: Optional[cst.CSTNode]) -> Optional[str]:
        """Like `hot_path_name`, for the header of the `if`/`while`/`for` statement `header_of`: its test runs
        in the enclosing context, not in the block it opens (`if step % 100 == 0:` is not itself cold)."""
        context = self._hot_context(header_of)
        if context is None:
            return None
        if context.kind == "function":
            return f"`{context.class_name}.{context.name}`" if context.class_name else f"`{context.name}`"
        return "a `# viewlint: hot` block"

    def _hot_context(self, header_of: Optional[cst.CSTNode] = None) -> Optional[Context]:
        decided: Optional[Context] = None
        for context in self._contexts:
            if header_of is not None and context.node is header_of:
                break
            if context.cold_all:
                return None
            if context.cold:
                decided = None
            elif context.hot:
                decided = context
        return decided

    @property
    def in_cold_block(self) -> bool:
        """Inside a known-cold place: a cold function or block is the innermost one that decides."""
        for context in reversed(self._contexts):
            if context.cold or context.cold_all:
                return True
            if context.hot:
                return any(c.cold_all for c in self._contexts)
        return False

    @property
    def in_loop(self) -> bool:
        for context in reversed(self._contexts):
            if context.kind == "loop":
                return True
            if context.kind == "function":
                return False
        return False

    # ------------------------------------------------------------------ environment
    def lookup(self, name: str) -> Value:
        found = UNKNOWN
        for scope in reversed(self._scopes):
            if name in scope:
                found = scope[name]
                break
        # Configured `cpu-names` win over what the walker inferred; `*_cpu` names are CPU tensors by convention.
        if name in self.settings.cpu_names or name.split(".")[-1] in self.settings.cpu_names:
            return found.with_(cpu=True) if found.is_tensor else UNKNOWN_TENSOR.with_(cpu=True) if found.kind is Kind.UNKNOWN else found
        if found.kind in (Kind.TENSOR, Kind.UNKNOWN) and not found.cpu and sem.looks_cpu_name(name):
            # An unknown value keeps its kind, but what is computed from it (`grid_thw.reshape(-1, 2)`) is on the CPU.
            return found.with_(cpu=True)
        return found

    def bind(self, name: str, value: Value) -> None:
        self._scopes[-1][name] = value

    def reads_after(self, name: str, node: cst.CSTNode) -> Optional[int]:
        """How many times `name` is read later in the current function, or None if unknown."""
        if not self._scope_nodes:
            return None
        scope = self._scope_nodes[-1]
        if id(scope) not in self._reads_cache:
            # Collected on first use only: few rules ask, and a walk per function is not free.
            self._reads_cache[id(scope)] = _collect_reads(scope)
        reads, order = self._reads_cache[id(scope)]
        position = order.get(id(node), 1 << 60)
        return sum(1 for read in reads.get(name, ()) if read is not node and order.get(id(read), -1) > position)

    # ------------------------------------------------------------------ values
    def value_of(self, node: cst.BaseExpression) -> Value:
        """The abstract value of an expression at the current position."""
        try:
            return self._evaluate(node, {})
        except RecursionError:
            return UNKNOWN

    def may_be_on_device(self, value: Value) -> bool:
        """A known tensor not known to live on the CPU: reading its values on the host may be a sync.

        A bare `self.<attr>` that only looks like a parameter by its name (`self.use_bias`, `self.o_proj`)
        does not count: it is as often a flag or a submodule as a tensor.
        """
        if not value.is_tensor or value.cpu:
            return False
        return not (value.is_parameter and value.provenance is Provenance.UNKNOWN)

    def _evaluate(self, node: cst.BaseExpression, local: dict[str, Value]) -> Value:
        if isinstance(node, cst.Name):
            if node.value in local:
                return local[node.value]
            if node.value in ("True", "False", "None"):
                return HOST
            return self.lookup(node.value)
        if isinstance(node, cst.Integer):
            return INT
        if isinstance(node, (cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return HOST
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Not):
                return HOST  # `not t` is a Python bool (it calls `bool(t)`)
            operand = self._evaluate(node.expression, local)
            if operand.kind is Kind.INT:
                return INT
            if operand.is_tensor:
                if isinstance(node.operator, cst.BitInvert) and operand.bool_mask:
                    return fresh(contiguous=operand.contiguous, cpu=operand.cpu, bool_mask=True)
                return fresh(contiguous=operand.contiguous, cpu=operand.cpu)
            return UNKNOWN
        if isinstance(node, cst.BinaryOperation):
            return self._binary(node, local)
        if isinstance(node, cst.Comparison):
            return self._comparison(node, local)
        if isinstance(node, cst.BooleanOperation):
            return UNKNOWN
        if isinstance(node, cst.IfExp):
            return merge(self._evaluate(node.body, local), self._evaluate(node.orelse, local))
        if isinstance(node, cst.Attribute):
            return self._attribute(node, local)
        if isinstance(node, cst.Subscript):
            return self._subscript(node, local)
        if isinstance(node, cst.Call):
            return self._call(node, local)
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            elements = tuple(self._evaluate(e.value, local) for e in node.elements if isinstance(e, cst.Element))
            if isinstance(node, cst.List) and elements and all(e.kind is Kind.INT for e in elements):
                return Value(kind=Kind.INT_LIST)
            return Value(kind=Kind.WRAPPER, elements=elements, wrapper=type(node).__name__.lower())
        if isinstance(node, cst.Dict):
            elements = tuple(self._evaluate(e.value, local) for e in node.elements if isinstance(e, cst.DictElement))
            return Value(kind=Kind.WRAPPER, elements=elements, wrapper="dict")
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            inner = self._comprehension_locals(node.for_in, local)
            element = self._evaluate(node.elt, inner)
            if isinstance(node, cst.ListComp) and element.kind is Kind.INT:
                return Value(kind=Kind.INT_LIST)
            return Value(kind=Kind.WRAPPER, elements=(element,), wrapper="list")
        if isinstance(node, cst.DictComp):
            inner = self._comprehension_locals(node.for_in, local)
            return Value(kind=Kind.WRAPPER, elements=(self._evaluate(node.value, inner),), wrapper="dict")
        if isinstance(node, cst.NamedExpr):
            return self._evaluate(node.value, local)
        if isinstance(node, cst.Ellipsis):
            return HOST
        return UNKNOWN

    def _comprehension_locals(self, comp: cst.CompFor, local: dict[str, Value]) -> dict[str, Value]:
        inner = dict(local)
        current: Optional[cst.CompFor] = comp
        while current is not None:
            self._bind_target_into(current.target, self._iterate(current.iter, inner), inner)
            current = current.inner_for_in
        return inner

    def _binary(self, node: cst.BinaryOperation, local: dict[str, Value]) -> Value:
        left = self._evaluate(node.left, local)
        right = self._evaluate(node.right, local)
        if left.kind is Kind.INT and right.kind is Kind.INT:
            return INT
        if left.is_tensor or right.is_tensor:
            if isinstance(node.operator, cst.MatrixMultiply):
                return fresh(contiguous=True, cpu=left.cpu and right.cpu)
            operands = [v for v in (left, right) if v.is_tensor]
            scalars_ok = all(v.is_tensor or v.kind in (Kind.INT, Kind.HOST) for v in (left, right))
            # Elementwise results follow the inputs' strides: contiguous only when every tensor input is.
            contiguous = True if scalars_ok and all(v.contiguous for v in operands) else None
            mask = isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)) and all(v.bool_mask for v in operands)
            cpu = all(v.cpu for v in operands) and scalars_ok
            return fresh(contiguous=contiguous, cpu=cpu, bool_mask=mask)
        return UNKNOWN

    def _comparison(self, node: cst.Comparison, local: dict[str, Value]) -> Value:
        operands = [self._evaluate(node.left, local)] + [self._evaluate(c.comparator, local) for c in node.comparisons]
        if any(isinstance(c.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) for c in node.comparisons):
            return HOST
        tensors = [v for v in operands if v.is_tensor]
        if tensors:
            return fresh(contiguous=None, cpu=all(v.cpu for v in tensors), bool_mask=True)
        return UNKNOWN

    def _attribute(self, node: cst.Attribute, local: dict[str, Value]) -> Value:
        name = dotted_name(node)
        if name is not None:
            head = name.split(".")[0]
            if name in local:
                return local[name]
            bound = self.lookup(name) if head == "self" else UNKNOWN
            if bound is not UNKNOWN:
                return bound
            if node.attr.value in self.settings.cpu_names:
                return UNKNOWN_TENSOR.with_(cpu=True)  # `batch.seq_lens_cpu` with `cpu-names = ["seq_lens_cpu"]`
        attr = node.attr.value
        receiver = self._evaluate(node.value, local)
        if attr in ("shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "grad_fn", "layout"):
            return HOST
        if attr in sem.VIEW_ATTRIBUTES and (receiver.is_tensor or attr in ("T", "mT", "mH")):
            return self._view_of(node.value, receiver, "." + attr)
        if attr in sem.AMBIGUOUS_VIEW_ATTRIBUTES and receiver.is_tensor:
            return self._view_of(node.value, receiver, "." + attr)
        if name is not None and name.startswith("self.") and name.count(".") == 1:
            info = self.index.classes.get(self.class_name or "")
            if info is not None and attr in info.tensor_attributes:
                return UNKNOWN_TENSOR.with_(is_parameter=True)  # nn.Parameter(...) or register_buffer("attr", ...)
            if info is not None and attr in info.submodule_attributes:
                return UNKNOWN  # `self.q_proj = nn.Linear(...)`: a module, not a tensor
            if info is not None and attr in info.host_attributes:
                return UNKNOWN  # `self.mim_weight = config.mim_weight`: a hyperparameter, not a tensor
            # (`self.use_bias`, `self.has_bias`, `self.disable_merger_proj`: flags by their prefix, not tensors.)
            if (attr in ("weight", "bias") or attr.endswith(("_weight", "_bias", "_proj"))) and not attr.startswith(sem.FLAG_PREFIXES):
                return UNKNOWN_TENSOR.with_(is_parameter=True)
        if name is not None and name.startswith("self.") and name.count(".") == 2 and attr in sem.PARAMETER_ATTRIBUTE_NAMES:
            return UNKNOWN_TENSOR.with_(is_parameter=True)  # `self.q_proj.weight`: a submodule's parameter
        if receiver.is_tensor and attr == "grad":
            return Value(kind=Kind.TENSOR)
        return UNKNOWN

    def _view_of(self, base_node: cst.BaseExpression, base: Value, origin: str, partial: Optional[bool] = None) -> Value:
        if base.is_view or base.is_maybe_view_of_view:
            root = base.base
            inherited = base.partial
        else:
            root = self.short_source(base_node)
            inherited = False
        # A view of a part (of a view) is a part: `x[:2].t()` still pins all of `x`.
        part = inherited or (sem.is_partial_view_op(origin) if partial is None else partial)
        return Value(kind=Kind.TENSOR, provenance=Provenance.VIEW, base=root, origin=origin,
                     contiguous=None, cpu=base.cpu, is_parameter=base.is_parameter, partial=part)

    def index_kind(self, node: cst.Subscript, local: Optional[dict[str, Value]] = None) -> IndexKind:
        """Basic (the result is a view) or advanced (a gathered copy), or unknown."""
        local = local or {}
        kinds = [self._element_index_kind(e, node, local) for e in node.slice]
        if IndexKind.ADVANCED in kinds:
            return IndexKind.ADVANCED
        if IndexKind.UNKNOWN in kinds:
            return IndexKind.UNKNOWN
        return IndexKind.BASIC

    def _element_index_kind(self, element: cst.SubscriptElement, subscript: cst.Subscript, local: dict[str, Value]) -> IndexKind:
        index = element.slice
        if isinstance(index, cst.Slice):
            return IndexKind.BASIC
        return self._expression_index_kind(index.value, subscript, local)

    def _expression_index_kind(self, expr: cst.BaseExpression, subscript: cst.Subscript, local: dict[str, Value]) -> IndexKind:
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
            value = self._evaluate(expr, local)
            if value.bool_mask:
                return IndexKind.ADVANCED
            operands = [expr.left] + [c.comparator for c in expr.comparisons]
            if any(o.deep_equals(subscript.value) for o in operands):
                return IndexKind.ADVANCED
            return IndexKind.UNKNOWN
        value = self._evaluate(expr, local)
        if value.kind is Kind.INT or value.kind is Kind.HOST:
            return IndexKind.BASIC
        if value.kind is Kind.INT_LIST:
            return IndexKind.ADVANCED
        if value.is_tensor:
            if value.zero_dim:
                return IndexKind.BASIC  # a 0-dim tensor index is a select, not a gather
            if value.zero_dim is False or value.bool_mask or value.index_like:
                return IndexKind.ADVANCED
            return IndexKind.UNKNOWN
        if value.kind is Kind.TENSOR_SEQUENCE:
            return IndexKind.ADVANCED  # torch.where(c) / nonzero(as_tuple=True)
        return IndexKind.UNKNOWN

    def _subscript(self, node: cst.Subscript, local: dict[str, Value]) -> Value:
        receiver = self._evaluate(node.value, local)
        if receiver.kind in (Kind.TENSOR_SEQUENCE, Kind.WRAPPER):
            single = len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
            if receiver.kind is Kind.TENSOR_SEQUENCE:
                if single:
                    return receiver.elements[0] if receiver.elements else UNKNOWN
                return receiver  # a slice of a split result is still a tuple of views
            if single and receiver.elements and all(e == receiver.elements[0] for e in receiver.elements):
                return receiver.elements[0]
            return UNKNOWN
        kind = self.index_kind(node, local)
        # `arr[:, 0]` on a known host value (a NumPy array from `.numpy()`) is not tensor indexing.
        tensor_like = receiver.is_tensor or (receiver.kind is Kind.UNKNOWN and self._tensor_style_index(node))
        if not tensor_like:
            return UNKNOWN
        if kind is IndexKind.BASIC:
            view = self._view_of(node.value, receiver, "[" + self.short_source(node, 200).split("[", 1)[-1],
                                 partial=not self._whole_index(node))
            return view.with_(contiguous=False) if self._selects_last_dim(node, local) else view
        if kind is IndexKind.ADVANCED:
            # A gathered copy: it owns its storage; `origin`/`base` say where it was gathered from.
            return fresh(contiguous=True, cpu=receiver.cpu, origin=ADVANCED_INDEX, base=self.short_source(node.value))
        return Value(kind=Kind.TENSOR, cpu=receiver.cpu)

    def _selects_last_dim(self, node: cst.Subscript, local: dict[str, Value]) -> bool:
        """`x[..., 0]`: an integer index on the last dimension leaves every stride a multiple of its
        size, so the view is not contiguous (unless that size is 1, or one element is left)."""
        if len(node.slice) != 2:
            return False
        first, last = node.slice[0].slice, node.slice[1].slice
        if not (isinstance(first, cst.Index) and isinstance(first.value, cst.Ellipsis)):
            return False
        return isinstance(last, cst.Index) and self._evaluate(last.value, local).kind is Kind.INT

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

    def _call(self, node: cst.Call, local: dict[str, Value]) -> Value:
        func = node.func
        qualified = self.qualify(func)
        if qualified is not None and (qualified.startswith("torch.") or qualified.startswith("numpy.")):
            return self._torch_function(node, qualified, local)
        if isinstance(func, cst.Attribute):
            return self._method(node, func, local)
        if isinstance(func, cst.Name):
            name = func.value
            if name in ("len", "int", "range", "sum", "max", "min", "round", "abs", "ord", "hash"):
                return INT if name != "range" else Value(kind=Kind.HOST)
            if name in ("float", "bool", "str", "repr", "isinstance", "print", "id"):
                return HOST
            if name in ("list", "tuple", "dict", "set", "OrderedDict"):
                elements = tuple(self._evaluate(a.value, local) for a in node.args)
                if name in ("list", "tuple") and len(elements) == 1 and elements[0].kind in (Kind.TENSOR_SEQUENCE, Kind.WRAPPER):
                    return elements[0]
                return Value(kind=Kind.WRAPPER, elements=elements, wrapper=name)
            if name == "replace" or qualified in ("dataclasses.replace", "copy.copy"):
                return self._wrapper(node, name, local)
            cls = self.index.classes.get(name)
            if (cls is not None and not cls.is_module) or (cls is None and name[:1].isupper() and name not in self.index.aliases):
                return self._wrapper(node, name, local)
            if cls is None and name[:1].isupper():
                target = self.index.aliases.get(name, "")
                if not target.startswith("torch"):
                    return self._wrapper(node, name, local)
        return UNKNOWN

    def _wrapper(self, node: cst.Call, name: str, local: dict[str, Value]) -> Value:
        elements = tuple(self._evaluate(a.value, local) for a in node.args)
        return Value(kind=Kind.WRAPPER, elements=elements, wrapper=name)

    def _first_arg(self, node: cst.Call) -> Optional[cst.BaseExpression]:
        for arg in node.args:
            if arg.keyword is None and arg.star == "":
                return arg.value
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in ("input", "self", "tensor", "x"):
                return arg.value
        return None

    @staticmethod
    def _keyword(node: cst.Call, name: str) -> Optional[cst.Arg]:
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == name:
                return arg
        return None

    def _torch_function(self, node: cst.Call, qualified: str, local: dict[str, Value]) -> Value:
        first = self._first_arg(node)
        first_value = self._evaluate(first, local) if first is not None else UNKNOWN
        has_device = self._keyword(node, "device") is not None
        if qualified in sem.SEQUENCE_VIEW_FUNCTIONS and first is not None:
            element = self._view_of(first, first_value, qualified)
            return Value(kind=Kind.TENSOR_SEQUENCE, elements=(element,), origin=qualified)
        if qualified in sem.VIEW_FUNCTIONS and first is not None:
            return self._view_of(first, first_value, qualified)
        device_cpu = self._device_argument_cpu(node, local)
        if qualified in sem.MAYBE_VIEW_FUNCTIONS and first is not None:
            # `torch.as_tensor(list)` builds on the CPU unless told otherwise; a tensor keeps its device.
            host_data = first_value.kind in (Kind.INT, Kind.INT_LIST, Kind.HOST) or isinstance(first, (cst.List, cst.Tuple, cst.ListComp))
            cpu = device_cpu if device_cpu is not None else (first_value.cpu or host_data or qualified == "torch.from_numpy")
            return self._maybe_view(first_value, qualified, cpu=cpu)
        if qualified in ("torch.where",) and len([a for a in node.args if a.keyword is None]) == 1:
            return Value(kind=Kind.TENSOR_SEQUENCE, elements=(fresh(contiguous=True, index_like=True, zero_dim=False),))
        if qualified == "torch.nonzero" and self._keyword(node, "as_tuple") is not None:
            return Value(kind=Kind.TENSOR_SEQUENCE, elements=(fresh(contiguous=True, index_like=True, zero_dim=False),))
        if qualified in sem.FACTORY_FUNCTIONS:
            zero_dim: Optional[bool] = None
            if qualified == "torch.tensor" and first is not None:
                zero_dim = not isinstance(first, (cst.List, cst.Tuple, cst.ListComp))
                if isinstance(first, (cst.Integer, cst.Float)):
                    zero_dim = True
            elif qualified in ("torch.arange", "torch.randperm", "torch.linspace"):
                zero_dim = False
            index_like = qualified in ("torch.arange", "torch.randperm", "torch.tril_indices", "torch.triu_indices") or (
                qualified == "torch.tensor" and zero_dim is False and isinstance(first, (cst.List, cst.ListComp))
            )
            # Row-major unless the strides are explicit, follow an input, or another memory format is asked for.
            contiguous = None if qualified in sem.NON_CONTIGUOUS_FACTORIES or not self._default_memory_format(node) else True
            # On the CPU without a device (`torch.tensor(t)` of a tensor keeps t's device), or on the one named.
            cpu = device_cpu if device_cpu is not None else (first_value.cpu if qualified == "torch.tensor" and first_value.is_tensor else True)
            return fresh(contiguous=contiguous, cpu=cpu, zero_dim=zero_dim, index_like=index_like)
        if qualified in sem.LIKE_FACTORY_FUNCTIONS:
            cpu = device_cpu if device_cpu is not None else first_value.cpu
            return fresh(contiguous=first_value.contiguous if not has_device else None, cpu=cpu)
        if qualified in sem.FRESH_CONTIGUOUS_FUNCTIONS:
            index_like = qualified in ("torch.nonzero", "torch.argwhere")
            # nonzero/argwhere come back transposed (stride (1, n)); the others are row-major.
            return fresh(contiguous=None if index_like else True, index_like=index_like, zero_dim=False if index_like else None,
                         cpu=self._inputs_on_cpu(node, local))
        if qualified in sem.FRESH_FUNCTIONS:
            index_like = qualified in ("torch.argsort",)
            return fresh(contiguous=None, index_like=index_like, cpu=self._inputs_on_cpu(node, local),
                         bool_mask=qualified in sem.BOOL_RESULT_FUNCTIONS)
        if qualified.startswith("numpy.") and qualified.split(".")[-1] in ("array", "arange", "asarray", "nonzero", "where", "argsort"):
            return Value(kind=Kind.INT_LIST)  # a numpy array index gathers like a list
        return UNKNOWN

    def _maybe_view(self, receiver: Value, op: str, cpu: bool) -> Value:
        if receiver.is_view or receiver.is_maybe_view_of_view:
            name = op.rsplit(".", 1)[-1].removesuffix("()")
            if receiver.contiguous is False and name == "contiguous":
                # `.contiguous()` of a known non-contiguous view always copies: the result owns its storage.
                return fresh(contiguous=True, cpu=cpu)
            # A cast that returned its input is the same non-contiguous view; one that copied owns its
            # storage: either way a later `.contiguous()` gives an owned tensor.
            still_strided = receiver.contiguous is False and name in sem.DTYPE_CAST_METHODS | sem.DEVICE_MOVE_METHODS | {"to", "type", "type_as"}
            return Value(kind=Kind.TENSOR, provenance=Provenance.MAYBE_VIEW, base=receiver.base,
                         origin=receiver.origin, ownership_op=receiver.ownership_op or op, cpu=cpu,
                         is_parameter=receiver.is_parameter, partial=receiver.partial,
                         contiguous=True if "contiguous" in op else (False if still_strided else None))
        if receiver.is_fresh:
            # On a tensor that owns its storage, "maybe the same storage" still owns it.
            return fresh(contiguous=True if "contiguous" in op else receiver.contiguous, cpu=cpu,
                         zero_dim=receiver.zero_dim, bool_mask=receiver.bool_mask, index_like=receiver.index_like)
        if receiver.is_tensor:
            return Value(kind=Kind.TENSOR, provenance=Provenance.UNKNOWN, cpu=cpu,
                         contiguous=True if "contiguous" in op else None, is_parameter=receiver.is_parameter)
        return Value(kind=Kind.TENSOR, provenance=Provenance.UNKNOWN, cpu=cpu, contiguous=True if "contiguous" in op else None)

    def _method(self, node: cst.Call, func: cst.Attribute, local: dict[str, Value]) -> Value:
        method = func.attr.value
        receiver_node = func.value
        # Calls on module names (`np.foo`, `os.path.join`) are not tensor methods.
        receiver = self._evaluate(receiver_node, local)
        if isinstance(receiver_node, cst.Name) and receiver_node.value in self.index.aliases and not receiver.is_tensor:
            return UNKNOWN
        tensor = receiver.is_tensor
        if method in sem.SEQUENCE_VIEW_METHODS:
            if tensor or method not in sem.AMBIGUOUS_SEQUENCE_METHODS or self._tensor_split_arguments(node):
                element = self._view_of(receiver_node, receiver, "." + method + "()")
                return Value(kind=Kind.TENSOR_SEQUENCE, elements=(element,), origin="." + method)
            return UNKNOWN
        if method in sem.VIEW_METHODS:
            if method == "view" and node.args and self._is_dtype_argument(node.args[0].value):
                return self._view_of(receiver_node, receiver, ".view(dtype)")
            if tensor or method not in sem.AMBIGUOUS_VIEW_METHODS:
                if method == "t" and node.args:
                    return UNKNOWN
                return self._view_of(receiver_node, receiver, "." + method + "()")
            return UNKNOWN
        if method in sem.MAYBE_VIEW_METHODS:
            if tensor or method not in sem.MAYBE_VIEW_METHODS_NEED_TENSOR:
                cpu = method in ("cpu", "pin_memory") or (receiver.cpu and method not in ("cuda", "xpu", "mps", "npu", "to"))
                if method == "to":
                    cpu = self._to_keeps_cpu(node, receiver, local)
                result = self._maybe_view(receiver, "." + method + "()", cpu)
                if not self._default_memory_format(node):
                    result = result.with_(contiguous=None)  # `.to(memory_format=torch.channels_last)`
                return result
            return UNKNOWN
        if method == "numpy" and tensor:
            return HOST  # a NumPy array: host memory, not a tensor
        if method in sem.HOST_VALUE_METHODS:
            return INT if method in ("item", "numel", "dim", "ndimension", "element_size", "nelement", "storage_offset", "get_device") or (method == "size" and node.args) else HOST
        if method == "clone":
            memory_format = self._keyword(node, "memory_format")
            contiguous = True if memory_format is not None and "contiguous_format" in self.source(memory_format.value) else receiver.contiguous
            if not tensor and receiver.kind is not Kind.UNKNOWN:
                return UNKNOWN
            return fresh(contiguous=contiguous, cpu=receiver.cpu, zero_dim=receiver.zero_dim, bool_mask=receiver.bool_mask, index_like=receiver.index_like)
        if tensor and method in sem.FRESH_METHODS:
            contiguous = True if method in sem.FRESH_CONTIGUOUS_METHODS else None
            index_like = method in sem.INDEX_TENSOR_METHODS
            bool_mask = method in ("eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "logical_not", "logical_and", "logical_or")
            if method == "nonzero" and self._keyword(node, "as_tuple") is not None:
                return Value(kind=Kind.TENSOR_SEQUENCE, elements=(fresh(contiguous=True, index_like=True, zero_dim=False),))
            return fresh(contiguous=contiguous, cpu=receiver.cpu, index_like=index_like, bool_mask=bool_mask,
                         zero_dim=False if index_like else None)
        if tensor and sem.is_inplace_method(method):
            if method in sem.RESTRIDING_INPLACE_METHODS:
                return receiver.with_(contiguous=None)  # `x.t_()` returns x with new strides
            return receiver  # in-place methods return self
        if method in ("nonzero", "argsort") and not tensor and receiver.kind is Kind.UNKNOWN:
            return Value(kind=Kind.TENSOR, provenance=Provenance.FRESH, index_like=True, zero_dim=False, contiguous=None)
        return UNKNOWN

    def _default_memory_format(self, node: cst.Call) -> bool:
        """No `memory_format=` argument, or `torch.contiguous_format`: the result is row-major."""
        memory_format = self._keyword(node, "memory_format")
        return memory_format is None or "contiguous_format" in self.source(memory_format.value)

    def _is_dtype_argument(self, node: cst.BaseExpression) -> bool:
        qualified = self.qualify(node) or ""
        return qualified.startswith("torch.") and qualified.split(".")[-1] in {
            "float32", "float16", "bfloat16", "float", "half", "int8", "uint8", "int32", "int64", "int16", "float64", "double", "long", "int", "bool", "float8_e4m3fn", "float8_e5m2", "complex64",
        }

    @staticmethod
    def _is_cpu_device(node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.SimpleString) and node.value.strip("'\"") == "cpu"

    def _names_cpu_device(self, node: cst.BaseExpression, local: dict[str, Value]) -> bool:
        """`"cpu"`, `torch.device("cpu")`, or `t.device` of a tensor known to be on the CPU."""
        if self._is_cpu_device(node):
            return True
        if isinstance(node, cst.Call) and self.qualify(node.func) == "torch.device" and node.args:
            return self._is_cpu_device(node.args[0].value)
        if isinstance(node, cst.Attribute) and node.attr.value == "device":
            receiver = self._evaluate(node.value, local)
            return receiver.is_tensor and receiver.cpu
        return False

    def _to_keeps_cpu(self, node: cst.Call, receiver: Value, local: dict[str, Value]) -> bool:
        """`.to("cpu")`, `.to(cpu_tensor)` or a dtype-only `.to(torch.float16)` of a CPU tensor: on the CPU."""
        device = self._keyword(node, "device")
        positional = [a.value for a in node.args if a.keyword is None and a.star == ""]
        target = device.value if device is not None else (positional[0] if positional else None)
        if target is None or self._is_dtype_argument(target):
            return receiver.cpu and not any(a.star for a in node.args)
        if self._names_cpu_device(target, local):
            return True
        value = self._evaluate(target, local)
        return value.is_tensor and value.cpu

    def _device_argument_cpu(self, node: cst.Call, local: dict[str, Value]) -> Optional[bool]:
        """Whether `device=` names the CPU; None when the call has no `device=`."""
        arg = self._keyword(node, "device")
        return None if arg is None else self._names_cpu_device(arg.value, local)

    def _inputs_on_cpu(self, node: cst.Call, local: dict[str, Value]) -> bool:
        """Every positional input (and every tensor in a list of them) is a CPU tensor or a Python scalar."""
        values: list[Value] = []
        for arg in node.args:
            if arg.keyword is None and arg.star == "":
                value = self._evaluate(arg.value, local)
                if not value.is_tensor and sem.looks_cpu_name(dotted_name(arg.value) or ""):
                    value = UNKNOWN_TENSOR.with_(cpu=True)  # `torch.cumsum(meta.extend_seq_lens_cpu, 0)`
                nested = value.kind is Kind.TENSOR_SEQUENCE or (value.kind is Kind.WRAPPER and value.wrapper in ("list", "tuple"))
                values.extend(value.elements if nested else (value,))
        tensors = [v for v in values if v.is_tensor]
        return bool(tensors) and all(v.cpu for v in tensors) and all(v.is_tensor or v.kind in (Kind.INT, Kind.HOST) for v in values)

    @staticmethod
    def _tensor_split_arguments(node: cst.Call) -> bool:
        """`.split(100)`, `.split([3, 4], dim=0)`, `.split(sizes, dim=-1)`: a tensor split, not `str.split`."""
        positional = [a for a in node.args if a.keyword is None]
        if any(a.keyword is not None and a.keyword.value in ("dim", "split_size", "split_size_or_sections") for a in node.args):
            return True
        if positional and isinstance(positional[0].value, (cst.Integer, cst.List)):
            if isinstance(positional[0].value, cst.List):
                return all(isinstance(e.value, (cst.Integer, cst.Name)) for e in positional[0].value.elements)
            return True
        if len(positional) == 2 and isinstance(positional[1].value, (cst.Integer, cst.UnaryOperation)):
            return True  # .split(size, dim)
        return False

    def _iterate(self, node: cst.BaseExpression, local: dict[str, Value]) -> Value:
        """The value of each item when iterating over `node`."""
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            name = node.func.value
            if name == "range":
                return INT
            if name == "enumerate" and node.args:
                return Value(kind=Kind.WRAPPER, elements=(INT, self._iterate(node.args[0].value, local)), wrapper="tuple")
            if name == "zip":
                return Value(kind=Kind.WRAPPER, elements=tuple(self._iterate(a.value, local) for a in node.args), wrapper="tuple")
            if name in ("reversed", "sorted", "list", "tuple", "iter") and node.args:
                return self._iterate(node.args[0].value, local)
        value = self._evaluate(node, local)
        if value.kind is Kind.TENSOR_SEQUENCE:
            return value.elements[0] if value.elements else UNKNOWN
        if value.kind is Kind.INT_LIST:
            return INT
        if value.is_tensor:
            # Iterating a tensor yields views of its rows.
            return self._view_of(node, value, "iteration")
        if value.kind is Kind.WRAPPER and value.elements and all(e == value.elements[0] for e in value.elements):
            return value.elements[0]
        return UNKNOWN

    # ------------------------------------------------------------------ binding
    def _bind_target_into(self, target: cst.BaseExpression, value: Value, scope: dict[str, Value]) -> None:
        if isinstance(target, cst.Name):
            scope[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = [e for e in target.elements]
            for i, element in enumerate(elements):
                if isinstance(element, cst.StarredElement):
                    item = value if value.kind is Kind.TENSOR_SEQUENCE else UNKNOWN
                    self._bind_target_into(element.value, item, scope)
                    continue
                if value.kind is Kind.TENSOR_SEQUENCE:
                    item = value.elements[0] if value.elements else UNKNOWN
                elif value.kind is Kind.WRAPPER and value.wrapper in ("tuple", "list") and len(value.elements) == len(elements):
                    item = value.elements[i]
                else:
                    item = UNKNOWN
                self._bind_target_into(element.value, item, scope)
        elif isinstance(target, cst.Attribute):
            name = dotted_name(target)
            if name is not None and name.startswith("self."):
                scope[name] = value

    def bind_target(self, target: cst.BaseExpression, value: Value) -> None:
        self._bind_target_into(target, value, self._scopes[-1])

    def _invalidate_attributes(self) -> None:
        """A call may change anything held in self.<attr>: forget those facts."""
        scope = self._scopes[-1]
        for key in [k for k in scope if k.startswith("self.")]:
            del scope[key]

    # ------------------------------------------------------------------ stores into long-lived places
    def is_long_lived_container(self, node: cst.BaseExpression) -> bool:
        """`self.<attr>` known to be a container, a module-level container, or a cache-named receiver."""
        name = dotted_name(node)
        if name is None:
            return False
        if name.startswith("self.") and name.count(".") == 1:
            info = self.index.classes.get(self.class_name or "")
            if info is not None and name[5:] in info.container_attributes:
                return True
        if "." not in name and name in self.index.module_containers and not self._is_local(name):
            return True
        return False

    def _is_local(self, name: str) -> bool:
        return len(self._scopes) > 1 and name in self._scopes[-1]

    def outlives_function(self, expression: str) -> bool:
        """`self.<attr>…` or a module-level name: its storage stays alive whatever this function keeps."""
        head = re.split(r"[.\[(]", expression, maxsplit=1)[0]
        if head in ("self", "cls"):
            return expression.startswith(head + ".")
        return head in self.index.module_names and not self._is_local(head)

    def _long_lived_receiver(self, node: cst.BaseExpression, method: str) -> bool:
        name = dotted_name(node)
        if name is None:
            return False
        if self.is_long_lived_container(node):
            return True
        if method in sem.CONTAINER_ONLY_METHODS:
            # Only containers have these: any self-held or module-level receiver is long-lived.
            if name.startswith("self.") or (name in self.index.module_names and not self._is_local(name)):
                return True
        last = name.split(".")[-1]
        if sem.looks_long_lived(last, self.settings.long_lived_names):
            # A parameter named `cache` belongs to the caller, who decides how long it lives (HF's
            # `cache.update(k, v)` concatenates copies); a configured `long-lived-names` entry still counts.
            configured = any(last.lower() == extra.lower() for extra in self.settings.long_lived_names)
            if "." not in name and not configured and self._is_parameter(name):
                return False
            # A receiver named like a cache/pool/store/registry keeps what it is given,
            # unless it is a container built in this function (it dies with the function).
            return not self._is_local_container(name)
        return False

    def _is_parameter(self, name: str) -> bool:
        """`name` is a parameter of the innermost enclosing function."""
        for context in reversed(self._contexts):
            if context.kind == "function" and isinstance(context.node, cst.FunctionDef):
                params = context.node.params
                every = [*params.posonly_params, *params.params, *params.kwonly_params]
                return any(p.name.value == name for p in every)
        return False

    def _is_local_container(self, name: str) -> bool:
        """A name bound in this function to a container literal: it dies with the function."""
        if "." in name or not self._is_local(name):
            return False
        value = self._scopes[-1].get(name, UNKNOWN)
        return value.kind is Kind.WRAPPER

    def store_events(self, node: cst.CSTNode) -> list[StoreEvent]:
        """The values that `node` (an Assign or a Call) puts into a long-lived place."""
        events: list[StoreEvent] = []
        if isinstance(node, cst.Assign):
            for target in node.targets:
                t = target.target
                if isinstance(t, cst.Subscript) and self.is_long_lived_container(t.value):
                    events.append(StoreEvent(node, node.value, self.value_of(node.value), self.short_source(t.value) + "[...]"))
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            receiver = node.func.value
            # `list.append/extend/insert` take no keywords: `self.dispatcher.extend(q=q)` is some other method.
            container_call = method not in sem.CONTAINER_ONLY_METHODS or all(a.keyword is None for a in node.args)
            if method in sem.STORING_METHODS and container_call and self._long_lived_receiver(receiver, method):
                for arg in node.args:
                    events.append(StoreEvent(node, arg.value, self.value_of(arg.value), f"{self.short_source(receiver)}.{method}(...)"))
            else:
                events.extend(self._summary_store_events(node, method, receiver))
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            name = node.func.value
            positions = self.index.retaining_functions.get(name)
            if positions is not None:
                keywords = self.index.retaining_function_keywords.get(name, set())
                events.extend(self._arguments_at(node, positions, keywords, f"{name}(...)"))
        return events

    def _summary_store_events(self, node: cst.Call, method: str, receiver: cst.BaseExpression) -> list[StoreEvent]:
        """Calls of methods (of classes in this module) whose body keeps an argument in a long-lived place."""
        class_name: Optional[str] = None
        name = dotted_name(receiver)
        if name == "self":
            class_name = self.class_name
        elif name is not None and name.startswith("self.") and name.count(".") == 1:
            info = self.index.classes.get(self.class_name or "")
            class_name = info.attribute_classes.get(name[5:]) if info else None
        elif name is not None and "." not in name:
            class_name = self.index.module_instances.get(name)
        if class_name is None:
            return []
        info = self.index.classes.get(class_name)
        if info is None or method not in info.retaining_methods:
            return []
        return self._arguments_at(node, info.retaining_methods[method], info.retaining_keywords.get(method, set()),
                                  f"{self.short_source(receiver)}.{method}(...)")

    def _arguments_at(self, node: cst.Call, positions: set[int], keywords: set[str], target: str) -> list[StoreEvent]:
        events = []
        positional = [a for a in node.args if a.keyword is None and a.star == ""]
        for i, arg in enumerate(positional):
            if i in positions:
                events.append(StoreEvent(node, arg.value, self.value_of(arg.value), target))
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in keywords:
                events.append(StoreEvent(node, arg.value, self.value_of(arg.value), target))
        return events

    # ------------------------------------------------------------------ walking hooks (called by Walker)
    def enter_module(self, node: cst.Module) -> None:
        self._scope_nodes.append(node)

    def enter_function(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        # A `# viewlint: hot` marker beats a cold name; a `hot-functions` glob (even `*`) does not.
        marked = self._has_hot_marker(node)
        cold = not marked and any(fnmatch.fnmatchcase(name, glob) for glob in COLD_FUNCTION_NAMES)
        hot = marked or (not cold and (self._matches_hot_glob(node) or self._is_hot_function(node)))
        self._contexts.append(Context(kind="function", name=name, hot=hot, cold=cold, class_name=self.class_name, node=node,
                                      cold_all=name.startswith("test_")))
        scope: dict[str, Value] = {}
        for param in list(node.params.posonly_params) + list(node.params.params) + list(node.params.kwonly_params):
            scope[param.name.value] = self._parameter_value(param)
        self._scopes.append(scope)
        self._scope_nodes.append(node)

    def leave_function(self, node: cst.FunctionDef) -> None:
        self._contexts.pop()
        self._scopes.pop()
        self._scope_nodes.pop()

    def _parameter_value(self, param: cst.Param) -> Value:
        annotation = param.annotation.annotation if param.annotation is not None else None
        if annotation is None:
            return UNKNOWN
        if isinstance(annotation, cst.Subscript):
            container = (dotted_name(annotation.value) or "").split(".")[-1]
            item = annotation.slice[0].slice if len(annotation.slice) == 1 else None
            if container in ("list", "List", "Sequence") and isinstance(item, cst.Index) and dotted_name(item.value) == "int":
                return Value(kind=Kind.INT_LIST)
            return UNKNOWN
        qualified = self.qualify(annotation) or dotted_name(annotation) or ""
        # `torch.LongTensor`, `torch.FloatTensor`...: the legacy typed names transformers annotates with.
        if qualified in ("torch.Tensor", "Tensor", "torch.nn.Parameter") or (qualified.startswith("torch.") and qualified.endswith("Tensor") and qualified.count(".") == 1):
            return UNKNOWN_TENSOR
        if qualified in ("int",):
            return INT
        if qualified in ("str", "float", "bool"):
            return HOST
        return UNKNOWN

    def _matches_hot_glob(self, node: cst.FunctionDef) -> bool:
        """Named like a configured `hot-functions` glob, as `name` or as `Class.name`."""
        name = node.name.value
        qualified = f"{self.class_name}.{name}" if self.class_name and self._contexts[-1].kind == "class" else name
        return any(fnmatch.fnmatchcase(name, glob) or fnmatch.fnmatchcase(qualified, glob) for glob in self._hot_globs)

    def _is_hot_function(self, node: cst.FunctionDef) -> bool:
        """`forward`/`forward_*` methods, a module's (or tensor-taking) `__call__`, compiled or scripted functions."""
        name = node.name.value
        if self.class_name is not None and self._contexts[-1].kind == "class":
            info = self.index.classes.get(self.class_name)
            if not (info is not None and info.is_module) and self._is_preprocessing_class(self._contexts[-1].node):
                return False  # pipelines, pipeline stages, processors: once per request, not per layer or step
            if any(fnmatch.fnmatchcase(name, glob) for glob in HOT_FUNCTION_NAMES):
                return True
            if name in HOT_CALL_NAMES:
                info = self.index.classes.get(self.class_name)
                if info is not None and info.is_module:
                    return True
                if self._takes_tensor(node):
                    return True
        for decorator in node.decorators:
            expr = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
            qualified = self.qualify(expr) or dotted_name(expr) or ""
            if qualified in HOT_DECORATORS or (qualified.endswith((".compile", ".jit.script")) and "torch" in qualified):
                return True
        return False

    @staticmethod
    def _is_preprocessing_class(node: Optional[cst.CSTNode]) -> bool:
        """Feature extractors, processors, tokenizers, collators, pipelines and their stages (by class or base name)."""
        if not isinstance(node, cst.ClassDef):
            return False
        names = [node.name.value] + [(dotted_name(b.value) or "").split(".")[-1] for b in node.bases]
        return any(part in n for n in names for part in _PREPROCESSING_CLASS_WORDS)

    @staticmethod
    def _takes_tensor(node: cst.FunctionDef) -> bool:
        """A parameter annotated with a tensor type (`torch.Tensor`, `Optional[torch.FloatTensor]`)."""
        params = list(node.params.posonly_params) + list(node.params.params) + list(node.params.kwonly_params)
        for param in params:
            if param.annotation is not None:
                text = cst.Module(body=[]).code_for_node(param.annotation.annotation)
                if "Tensor" in text:
                    return True
        return False

    def _has_hot_marker(self, node: cst.CSTNode) -> bool:
        """`# viewlint: hot` on the lines above the statement (or its decorators), or at the end of its header line.

        Above the module's first statement, libcst keeps those lines in the module's header.
        """
        lines = list(getattr(node, "leading_lines", ())) + list(getattr(node, "lines_after_decorators", ()))
        if self.module.body and node is self.module.body[0]:
            lines.extend(self.module.header)
        for line in lines:
            if line.comment is not None and HOT_MARKER.search(line.comment.value):
                return True
        body = getattr(node, "body", None)
        header = getattr(body, "header", None)
        if header is not None and header.comment is not None and HOT_MARKER.search(header.comment.value):
            return True
        return False

    def enter_class(self, node: cst.ClassDef) -> None:
        self._current_class.append(node.name.value)
        # Test classes (`TestAttention`) are cold, with every module they define inside.
        self._contexts.append(Context(kind="class", name=node.name.value, node=node, cold_all=node.name.value.startswith("Test")))
        self._scopes.append({})

    def leave_class(self, node: cst.ClassDef) -> None:
        self._current_class.pop()
        self._contexts.pop()
        self._scopes.pop()

    def enter_loop(self, node: cst.CSTNode) -> None:
        self._contexts.append(Context(kind="loop", node=node, hot=self._has_hot_marker(node)))
        self._loop_snapshots.append(dict(self._scopes[-1]))
        if isinstance(node, cst.For):
            self.bind_target(node.target, self._iterate(node.iter, {}))

    def leave_loop(self, node: cst.CSTNode) -> None:
        self._contexts.pop()
        before = self._loop_snapshots.pop()
        self._scopes[-1] = _merge_scopes(before, self._scopes[-1])

    def enter_if(self, node: cst.If) -> None:
        text = _words(node.test)
        main_guard = "__name__" in text and "__main__" in text
        cold = main_guard or self._is_cold_condition(node.test)
        self._contexts.append(Context(kind="block", node=node, cold=cold, hot=self._has_hot_marker(node), cold_all=main_guard))
        self._if_snapshots.append(dict(self._scopes[-1]))

    def enter_cold_block(self, node: cst.CSTNode) -> None:
        """A `raise` statement or an `except` handler: the error path, not the hot path."""
        self._contexts.append(Context(kind="block", node=node, cold=True))

    def leave_cold_block(self, node: cst.CSTNode) -> None:
        self._contexts.pop()

    def if_body_done(self, node: cst.If) -> None:
        # Keep the body's result and restart from the state before the `if` for the else branch.
        before = self._if_snapshots[-1]
        self._if_snapshots[-1] = self._scopes[-1]
        self._scopes[-1] = dict(before)
        # The else branch of a cold guard is not cold, nor is the else of a block marked hot hot.
        context = self._contexts[-1]
        context.cold = context.cold_all = context.hot = False

    def leave_if(self, node: cst.If) -> None:
        self._contexts.pop()
        after_body = self._if_snapshots.pop()
        self._scopes[-1] = _merge_scopes(after_body, self._scopes[-1])

    def is_cold_guard(self, test: cst.BaseExpression) -> bool:
        """Whether `test` guards a cold block: `step % 100 == 0`, `self.debug`, `__name__ == "__main__"`.
        In `guard and t.any()`, the right operand runs only inside the guard."""
        text = _words(test)
        return ("__name__" in text and "__main__" in text) or self._is_cold_condition(test)

    def _is_cold_condition(self, test: cst.BaseExpression) -> bool:
        """Logging or bookkeeping guarded by an interval (`if step % 100 == 0:`), a debug flag or the epoch."""
        if isinstance(test, cst.BooleanOperation):
            left, right = self._is_cold_condition(test.left), self._is_cold_condition(test.right)
            return (left or right) if isinstance(test.operator, cst.And) else (left and right)
        if isinstance(test, cst.Comparison) and isinstance(test.left, cst.BinaryOperation) and isinstance(test.left.operator, cst.Modulo):
            # `step % 100 == 0`, `(i + 1) % log_every == 0`; not `layer_id % 2 == 0`, which picks a layer type.
            modulus = test.left.right
            if isinstance(modulus, cst.Integer):
                return int(modulus.evaluated_value) >= 10
            lowered = _words(test.left).lower()
            return any(word in lowered for word in _INTERVAL_WORDS)
        lowered = _words(test).lower()
        return any(word in lowered for word in _LOGGING_WORDS)

    def push_statement(self, node: cst.CSTNode) -> None:
        self._statements.append(node)

    def pop_statement(self) -> None:
        self._statements.pop()

    def after_assign(self, node: cst.BaseSmallStatement) -> None:
        if isinstance(node, cst.Assign):
            value = self.value_of(node.value)
            for target in node.targets:
                self.bind_target(target.target, value)
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            self.bind_target(node.target, self.value_of(node.value))
        elif isinstance(node, cst.AugAssign):
            if isinstance(node.target, cst.Name):
                old = self.lookup(node.target.value)
                if old.is_tensor:
                    return  # `x += y` on a tensor is in place: x keeps its storage
                self.bind_target(node.target, UNKNOWN)


def _words(node: cst.CSTNode) -> str:
    """The names, attribute names and literals of an expression, space-separated: what the cold-guard
    checks look for (`step`, `debug`, `"__main__"`), without printing the expression."""
    parts = []
    for child in descendants(node):
        if isinstance(child, cst.Name):
            parts.append(child.value)
        elif isinstance(child, (cst.SimpleString, cst.Integer, cst.FormattedStringText)):
            parts.append(child.value)
    return " ".join(parts)


def _merge_scopes(a: dict[str, Value], b: dict[str, Value]) -> dict[str, Value]:
    merged: dict[str, Value] = {}
    for key in set(a) | set(b):
        if key in a and key in b:
            merged[key] = merge(a[key], b[key])
        else:
            merged[key] = UNKNOWN
    return merged


def _collect_reads(fn: cst.CSTNode) -> tuple[dict[str, list[cst.Name]], dict[int, int]]:
    """Every name under a function's body (or under `fn`), and each node's place in source order."""
    reads: dict[str, list[cst.Name]] = {}
    order: dict[int, int] = {}
    for counter, node in enumerate(descendants(fn.body if isinstance(fn, cst.FunctionDef) else fn), start=1):
        order[id(node)] = counter
        if type(node) is cst.Name:
            reads.setdefault(node.value, []).append(node)  # type: ignore[attr-defined]
    return reads, order


# Node types no rule and no fact ever looks at: whitespace, comments, brackets, commas, operators.
# The walker does not descend into them (rules read operators through their parents' attributes).
_UNWALKED = (
    cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Newline, cst.Comment,
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace,
    cst.RightCurlyBrace, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual, cst.ImportStar,
    cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseUnaryOp, cst.BaseCompOp, cst.BaseAugOp,
)
_CHILD_FIELD = re.compile(r'visit_\w+\(\s*self,\s*"(\w+)"')
_FIELDS: dict[type, tuple[str, ...]] = {}
_WALKED: dict[type, bool] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    """The fields holding child nodes, in the order libcst's own visitor visits them (source order)."""
    fields = _FIELDS.get(node_type)
    if fields is None:
        source = inspect.getsource(node_type._visit_and_replace_children)  # type: ignore[attr-defined]
        fields = _FIELDS[node_type] = tuple(dict.fromkeys(_CHILD_FIELD.findall(source)))
    return fields


def _walked(node_type: type) -> bool:
    """A libcst node type the walker enters (False for whitespace, punctuation and non-nodes)."""
    walked = _WALKED.get(node_type)
    if walked is None:
        walked = _WALKED[node_type] = issubclass(node_type, cst.CSTNode) and not issubclass(node_type, _UNWALKED)
    return walked


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes under `node` (itself first) in source order, without whitespace or punctuation;
    much cheaper than a libcst visitor, which rebuilds every node it passes."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        children: list[cst.CSTNode] = []
        for name in _child_fields(type(current)):
            value = getattr(current, name)
            if type(value) is tuple or type(value) is list:
                children.extend(child for child in value if _WALKED.get(type(child)) or _walked(type(child)))
            elif _WALKED.get(type(value)) or _walked(type(value)):
                children.append(value)
        children.reverse()
        stack.extend(children)


def walk_events(node: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, bool]]:
    """`(node, True)` on entering and `(node, False)` on leaving each node under `node` (itself
    included), in source order, without whitespace or punctuation: a libcst visitor's
    `on_visit`/`on_leave` sequence, without rebuilding the tree."""
    stack: list[tuple[cst.CSTNode, bool]] = [(node, True)]
    while stack:
        current, entering = stack.pop()
        yield current, entering
        if not entering:
            continue
        stack.append((current, False))
        children: list[tuple[cst.CSTNode, bool]] = []
        for name in _child_fields(type(current)):
            value = getattr(current, name)
            if type(value) is tuple or type(value) is list:
                children.extend((child, True) for child in value if _WALKED.get(type(child)) or _walked(type(child)))
            elif _WALKED.get(type(value)) or _walked(type(value)):
                children.append((value, True))
        children.reverse()
        stack.extend(children)


# What the walker does on entering and leaving each node type (computed once per type).
_STATEMENT, _BLOCK, _MODULE, _FUNCTION, _CLASS, _LOOP, _IF, _COLD, _ASSIGN = (1 << i for i in range(9))
_KINDS: dict[type, int] = {}
# The Facts methods called on entering and leaving each kind of context (the first that matches).
_CONTEXT_HOOKS = (
    (_MODULE, "enter_module", None), (_FUNCTION, "enter_function", "leave_function"),
    (_CLASS, "enter_class", "leave_class"), (_LOOP, "enter_loop", "leave_loop"), (_IF, "enter_if", "leave_if"),
    (_COLD, "enter_cold_block", "leave_cold_block"),
)


def _kind(node_type: type) -> int:
    kind = _KINDS.get(node_type)
    if kind is None:
        kind = 0
        for flag, types in (
            (_STATEMENT, (cst.SimpleStatementLine, cst.BaseCompoundStatement)), (_BLOCK, cst.IndentedBlock),
            (_MODULE, cst.Module), (_FUNCTION, cst.FunctionDef), (_CLASS, cst.ClassDef), (_LOOP, (cst.For, cst.While)),
            (_IF, cst.If), (_COLD, (cst.Raise, cst.ExceptHandler)), (_ASSIGN, (cst.Assign, cst.AnnAssign, cst.AugAssign)),
        ):
            if issubclass(node_type, types):
                kind |= flag
        _KINDS[node_type] = kind
    return kind


class Walker(cst.CSTVisitor):
    """Walks a module once: updates Facts and calls each rule's visit_/leave_ methods.

    `walk` descends the tree itself, in libcst's visiting order, without rebuilding nodes
    and without entering whitespace or punctuation (libcst's generic `visit` costs more than
    the parse). `module.visit(walker)` still works and gives the same results.
    """

    def __init__(self, facts: Facts, rules: list["Rule"], activity: Optional[dict[int, frozenset[str]]] = None) -> None:
        """`activity`: for some statements (by `id`), the codes of the only rules that can fire
        inside them (from the prefilter); their handlers alone are called in that subtree."""
        super().__init__()
        self.facts = facts
        self.rules = rules
        self._activity = activity or {}
        self._tables: dict[frozenset[str], tuple[dict[type, list[Any]], dict[type, list[Any]]]] = {}
        self._visit: dict[type, list[tuple["Rule", Callable[[cst.CSTNode], Any]]]] = {}
        self._leave: dict[type, list[tuple["Rule", Callable[[cst.CSTNode], Any]]]] = {}
        self._disabled: set[str] = set()
        for rule in rules:
            for attr in _handler_names(type(rule)):
                kind, _, node_type = attr.partition("_")
                node_class = getattr(cst, node_type, None)
                if node_class is None:
                    continue
                table = self._visit if kind == "visit" else self._leave
                table.setdefault(node_class, []).append((rule, getattr(rule, attr)))
        self._visit_now, self._leave_now = self._visit, self._leave

    def _tables_for(self, codes: frozenset[str]) -> tuple[dict[type, list[Any]], dict[type, list[Any]]]:
        tables = self._tables.get(codes)
        if tables is None:
            tables = self._tables[codes] = tuple(  # type: ignore[assignment]
                {t: [h for h in handlers if h[0].code in codes] for t, handlers in table.items()}
                for table in (self._visit, self._leave)
            )
        return tables  # type: ignore[return-value]

    def walk(self, node: cst.CSTNode) -> None:
        node_type = type(node)
        kind = _KINDS.get(node_type)
        if kind is None:
            kind = _kind(node_type)
        outer = None
        if kind & _STATEMENT and self._activity:
            codes = self._activity.get(id(node))
            if codes is not None:  # a segment: only the rules that can fire in it
                outer = self._visit_now, self._leave_now
                self._visit_now, self._leave_now = self._tables_for(codes)
        if kind:
            self._enter(node, kind)
        handlers = self._visit_now.get(node_type)
        if handlers:
            self._call(handlers, node)
        walked, walk = _WALKED, self.walk
        for name in _FIELDS.get(node_type) or _child_fields(node_type):
            value = getattr(node, name)
            if type(value) is tuple or type(value) is list:
                for child in value:
                    if walked.get(type(child)) or _walked(type(child)):
                        walk(child)
            elif walked.get(type(value)) or _walked(type(value)):
                walk(value)
            if name == "body" and node_type is cst.If:
                self.facts.if_body_done(node)  # type: ignore[arg-type]
        handlers = self._leave_now.get(node_type)
        if handlers:
            self._call(handlers, node)
        if kind:
            self._exit(node, kind)
        if outer is not None:
            self._visit_now, self._leave_now = outer

    def _call(self, handlers: list[tuple["Rule", Callable[[cst.CSTNode], Any]]], node: cst.CSTNode) -> None:
        for rule, handler in handlers:
            if rule.code in self._disabled:
                continue
            try:
                handler(node)
            except Exception as error:  # a bug in one rule must not stop the others
                self._disabled.add(rule.code)
                self.facts.errors.append((rule.code, f"{type(error).__name__}: {error}"))

    def _enter(self, node: cst.CSTNode, kind: int) -> None:
        facts = self.facts
        if kind & _STATEMENT:
            facts.push_statement(node)
        elif kind & _BLOCK:
            facts._blocks.append(node)  # type: ignore[arg-type]
        for flag, enter, _ in _CONTEXT_HOOKS:
            if kind & flag:
                getattr(facts, enter)(node)
                break

    def _exit(self, node: cst.CSTNode, kind: int) -> None:
        facts = self.facts
        if kind & _ASSIGN:
            facts.after_assign(node)  # type: ignore[arg-type]
        else:
            for flag, _, leave in _CONTEXT_HOOKS:
                if kind & flag:
                    if leave is not None:
                        getattr(facts, leave)(node)
                    break
        if kind & _STATEMENT:
            facts.pop_statement()
        elif kind & _BLOCK:
            facts._blocks.pop()

    # libcst's visitor protocol, for `module.visit(walker)` (the same results as `walk`, slower).
    def on_visit(self, node: cst.CSTNode) -> bool:
        kind = _KINDS.get(type(node)) or _kind(type(node))
        if kind:
            self._enter(node, kind)
        handlers = self._visit_now.get(type(node))
        if handlers:
            self._call(handlers, node)
        return True

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        if attribute == "body" and isinstance(original_node, cst.If):
            self.facts.if_body_done(original_node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        handlers = self._leave_now.get(type(original_node))
        if handlers:
            self._call(handlers, original_node)
        kind = _KINDS.get(type(original_node)) or _kind(type(original_node))
        if kind:
            self._exit(original_node, kind)


_HANDLER_CACHE: dict[type, tuple[str, ...]] = {}


def _handler_names(rule_class: type) -> tuple[str, ...]:
    if rule_class not in _HANDLER_CACHE:
        _HANDLER_CACHE[rule_class] = tuple(
            attr for attr in dir(rule_class) if attr.startswith(("visit_", "leave_")) and callable(getattr(rule_class, attr))
        )
    return _HANDLER_CACHE[rule_class]
