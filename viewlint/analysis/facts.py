"""The flow: what is known at the walker's position, and what rules ask about it.

`Facts` keeps the environment (name -> Value, per function, joined at the end of branches
and loops), the context stack (hot or cold), and the rules' reports. The walker calls its
`enter_*`/`leave_*`/`after_*` hooks in statement order; rules ask it questions
(`value_of`, `index_kind`, `store_events`, `in_hot_path`) and report through it.

The hooks are in `viewlint.analysis.flow`, the questions about stores into long-lived places in
`viewlint.analysis.stores`: parts of `Facts` it inherits.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

import libcst as cst

from viewlint.analysis import stack
from viewlint.analysis import semantics as sem
from viewlint.analysis.callgraph import FunctionKey
from viewlint.analysis.contexts import DEFAULT_SYNC_ALLOWED_CONTEXTS, ContextStack, is_setup_name
from viewlint.analysis.evaluator import Evaluator
from viewlint.analysis.narrowing import NOT_A_TENSOR
from viewlint.analysis.flow import FlowHooks
from viewlint.analysis.module_index import ModuleIndex, build_index
from viewlint.analysis.nodes import preorder
from viewlint.analysis.rebinding import LayoutRisks, layout_risks
from viewlint.analysis.stores import StoreQuestions
from viewlint.analysis.value_ops import fields_mark
from viewlint.analysis.usage import attribute_reads, tensor_use
from viewlint.analysis.tree import STORED, chain_text, code_for_node, descendants, dotted_name, source_in_place, short_text
from viewlint.analysis.values import UNKNOWN, UNKNOWN_TENSOR, Device, IndexKind, Kind, Provenance, Value

if TYPE_CHECKING:
    from viewlint.analysis.summaries import ModuleSummaries
    from viewlint.rule import Rule
    from viewlint.settings import Settings


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


class Facts(FlowHooks, StoreQuestions):
    """What is known at the walker's current position. Rules hold one and ask it questions."""

    def __init__(self, module: cst.Module, settings: "Settings", index: Optional[ModuleIndex] = None,
                 summaries: Optional["ModuleSummaries"] = None) -> None:
        self.module = module
        self.settings = settings
        self.index = index or build_index(module)
        self.summaries = summaries
        self.reports: list[Report] = []
        self.errors: list[tuple[str, str]] = []  # (rule code, message)
        self._scopes: list[dict[str, Value]] = [{}]
        self.contexts = ContextStack(module, self.index, tuple(settings.hot_functions),
                                     summaries.callgraph if summaries is not None else None)
        self._statements: list[cst.CSTNode] = []
        self._blocks: list[cst.IndentedBlock] = []  # enclosing indented blocks, for edit text
        self._if_snapshots: list[dict[str, Value]] = []
        self._loop_snapshots: list[dict[str, Value]] = []
        # The module and the functions being walked, innermost last (for reads_after and usage).
        self._scope_nodes: list[cst.CSTNode] = []
        self._reads_cache: dict[int, tuple[dict[str, list[cst.Name]], dict[int, int]]] = {}
        self._usage_cache: dict[int, dict[str, frozenset[str]]] = {}
        self._long_prefixes: dict[tuple[int, int], tuple[cst.CSTNode, str]] = {}  # for `short_source`
        self._link_texts: dict[int, tuple[cst.CSTNode, str]] = {}  # for `source`
        self._subtree_cache: dict[tuple[str, int], tuple[cst.CSTNode, Any]] = {}  # keeps each node its id names
        self._cpu_names = frozenset(settings.cpu_names)
        self._sync_allowed = DEFAULT_SYNC_ALLOWED_CONTEXTS + tuple(getattr(settings, "sync_allowed_contexts", ()))
        self._parameter_classes: dict[str, str] = {}  # annotated parameters of the innermost function -> class
        self._outer_parameter_classes: list[dict[str, str]] = []  # those of the functions around it
        self.headers: list[cst.CSTNode] = []  # the `for`s and `if`s whose iterable or test the walk is in (`walker._HEADERS`)
        self.evaluator = Evaluator(self)
        self.evaluator.configure(self._cpu_names)
        # Parameter values to use instead of the evidence, for a summary run (`ModuleSummaries.run`).
        self.entry_values: Optional[dict[str, Value]] = None
        # A caller's summary walk: what its own callers pass, taken as its own walk takes `entry_values`.
        self.callers_pass: Optional[dict[str, Value]] = None
        # What a summary run records (returns, stores into `self`, calls); None in a rule walk.
        self.recorder: Optional[Any] = None
        # A summary run that answers what a class keeps in an attribute: it does not ask for others.
        self.shallow = False
        self._layout_risks: Optional[LayoutRisks] = None
        # For each `try` being walked that has handlers: the names its body binds (a handler may be
        # entered after any statement of it).
        self._try_stores: list[set[str]] = []
        # The blocks whose rest runs only after a `try` handler caught an error (one cold context pushed for each).
        self._cold_rests: list[int] = []

    # ------------------------------------------------------------------ reports
    def report(self, rule: "Rule", node: cst.CSTNode, message: str, *, fix_message: Optional[str] = None,
               edits: tuple[tuple[cst.CSTNode, str], ...] = (), applicability: Any = None,
               statement: Optional[cst.CSTNode] = None) -> None:
        """A finding at `node`; `statement`: the statement it sits in, when that is not the current one
        (a rule that learns at a later statement that an earlier one was the costly one)."""
        if statement is None:
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
        return chain_text(node, self._code_for_node, self._link_texts)

    def _code_for_node(self, node: cst.CSTNode) -> str:
        return code_for_node(self.module, node)

    def source_for_edit(self, node: cst.CSTNode) -> str:
        """The source text of a node inside the current statement, continuation lines indented as in the file."""
        text = self.source(node)
        if "\n" in text or "\r" in text:
            text = source_in_place(self.module, node, self._blocks)
        return text

    def short_source(self, node: cst.CSTNode, limit: int = 60) -> str:
        return short_text(node, self.source, limit, self._long_prefixes)

    def holding_node(self, node: cst.BaseExpression, holds: "Callable[[Value], bool]", depth: int = 2) -> Optional[cst.BaseExpression]:
        """The sub-expression of `node` (itself, an element of a tuple, list or dict it displays, an argument of an object
        it builds that the object holds: `Entry(x)`, `list(pieces)`) whose value `holds` says is the one sought; a
        rule's report goes there, and its edit."""
        value = self.value_of(node)
        if value.kind is Kind.TENSOR:
            return node if holds(value) else None
        if depth <= 0:
            return None
        children: list[cst.BaseExpression] = []
        if isinstance(node, cst.Call):
            # Only where the call's result holds its arguments: a module or a function given `text_ids` hands back
            # something else.
            children = [a.value for a in node.args if value.kind is Kind.WRAPPER and self.value_of(a.value) in value.elements]
        elif isinstance(node, (cst.Tuple, cst.List)):
            children = [e.value for e in node.elements]
        elif isinstance(node, cst.Dict):
            children = [e.value for e in node.elements if isinstance(e, cst.DictElement)]
        for child in children:
            found = self.holding_node(child, holds, depth - 1)
            if found is not None:
                return found
        return None

    # ------------------------------------------------------------------ contexts
    @property
    def in_function(self) -> bool:
        return self.contexts.in_function

    @property
    def function_name(self) -> Optional[str]:
        return self.contexts.function_name

    @property
    def in_setup_function(self) -> bool:
        """Inside `__init__`, `_init_*`, `setup`, `build*`...: what it stores into `self` is the object's layout."""
        name = self.function_name
        return name is not None and is_setup_name(name)

    @property
    def class_name(self) -> Optional[str]:
        return self.contexts.class_name

    @property
    def in_hot_path(self) -> bool:
        """Inside a hot function (or a block marked hot), and not inside a known-cold place.

        The contexts form a stack: the innermost one that says hot or cold decides, so a nested
        `def` or loop keeps its outer context and a cold `if step % 100 == 0:` inside `forward`
        is quiet. Tests and `if __name__ == "__main__":` silence everything nested in them.
        """
        return self.contexts.hot_context(self.headers[-1] if self.headers else None) is not None

    @property
    def hot_path_name(self) -> Optional[str]:
        """A short description of the hot context for messages: "`Model.forward`", "a `# viewlint: hot` block"."""
        return self.contexts.hot_path_name_at(self.headers[-1] if self.headers else None)

    def hot_path_name_at(self, header_of: Optional[cst.CSTNode]) -> Optional[str]:
        """Like `hot_path_name`, for the header of the `if`/`while`/`for` statement `header_of`: its test runs
        in the enclosing context, not in the block it opens (`if step % 100 == 0:` is not itself cold)."""
        return self.contexts.hot_path_name_at(header_of)

    def sync_path_name(self, header_of: Optional[cst.CSTNode] = None) -> Optional[str]:
        """For the host-sync rules: the hot path (as `hot_path_name_at`), or None when the code is not hot or
        sits in a block that allows syncs (`with gpu_sync_allowed():`). In the header of a statement the walk is
        in (`for t in x.tolist():` runs `x.tolist()` once, before its loop), as the context around it judges it."""
        if self.contexts.sync_allowed:
            return None
        if header_of is None and self.headers:
            header_of = self.headers[-1]
        return self.contexts.hot_path_name_at(header_of)

    @property
    def in_cold_block(self) -> bool:
        """Inside a known-cold place: a cold function or block is the innermost one that decides."""
        return self.contexts.in_cold_block

    @property
    def in_loop(self) -> bool:
        return self.contexts.in_loop

    def is_cold_guard(self, test: cst.BaseExpression) -> bool:
        return self.contexts.is_cold_guard(test)

    # ------------------------------------------------------------------ environment
    def lookup(self, name: str) -> Value:
        found = UNKNOWN
        scopes = self._scopes
        for depth in range(len(scopes) - 1, -1, -1):
            if name in scopes[depth]:
                found = scopes[depth][name]
                if found.contiguous and self._layout_may_change(name, depth, len(scopes) - 1):
                    found = found.with_(contiguous=None)
                break
        if found.kind is Kind.UNKNOWN and "." not in name and name not in ("self", "cls") and found.host_type != NOT_A_TENSOR.host_type:
            # (Of `d["k"]` that nothing stored here: how the function uses `d["k"]`.)
            name = name[len(STORED):] if name.startswith(STORED) else name
            why = tensor_use(name, self.usage_of(name))
            if why is not None:
                # `mask.masked_fill(...)`, `idx.long()` elsewhere in the function: only tensors have those; and only
                # tensors are taken by `torch.exp(x)` or a loss module. Where it lives stays what the value said
                # (`seq_lens_cpu[s] - query_lens_cpu[s]`: on the host).
                found = UNKNOWN_TENSOR.with_(why=why, label=name, device=found.device, guessed_cpu=found.guessed_cpu)
        # Configured `cpu-names` win over what the walker inferred; `*_cpu` names are CPU tensors by convention.
        if name in self._cpu_names or name.split(".")[-1] in self._cpu_names:
            return found.with_(device=Device.CPU) if found.is_tensor else UNKNOWN_TENSOR.with_(device=Device.CPU) if found.kind is Kind.UNKNOWN else found
        if found.kind in (Kind.TENSOR, Kind.UNKNOWN) and found.device is Device.UNKNOWN and sem.looks_cpu_name(name):
            # A name guess, used only where the code says nothing of the device: `grid_thw = grid_thw.to(device)`
            # (evidence of a device) wins. An unknown value keeps its kind, but what is computed from it
            # (`grid_thw.reshape(-1, 2)`) is on the CPU.
            return found.with_(device=Device.CPU, guessed_cpu=not sem.named_host_side(name))
        return found

    def tensor_only_by_use_of(self, name: str, method: str) -> bool:
        """`name` is a tensor only because the function calls `.{method}` on it (`lookup`'s usage evidence, with no
        other tensor-only use): a rule about that very call must not take it for proof (`finalizer.detach()` of a
        `weakref.finalize`)."""
        found = self.lookup(name)
        return found.is_tensor and self.usage_of(name) & sem.TENSOR_USAGE_METHODS == {method} \
            and (found.why or "").startswith(f"`{name}` is used as a tensor")

    def field_value(self, name: str) -> Optional[Value]:
        """What this function set the field `obj.attr` of an object it holds to (`item.embeddings = v`), or None."""
        head = name.split(".")[0]
        for scope in reversed(self._scopes):
            if head in scope or fields_mark(head) in scope:
                return scope.get(name)
        return None

    def fields_of(self, head: str) -> dict[str, Value]:
        """{attr: value} for the fields this function set on the object `head` holds."""
        for scope in reversed(self._scopes):
            if fields_mark(head) in scope:
                prefix = f"{head}."
                return {k[len(prefix):]: v for k, v in scope.items() if k.startswith(prefix) and k != fields_mark(head)}
            if head in scope:
                return {}
        return {}

    def bind(self, name: str, value: Value) -> None:
        self.evaluator.forget_values()
        self._scopes[-1][name] = value

    @property
    def layout_risks(self) -> LayoutRisks:
        risks = self._layout_risks
        if risks is None:
            memo = self.index.memo
            risks = memo.get("layout risks")  # type: ignore[assignment]
            if risks is None:
                risks = memo["layout risks"] = layout_risks(self.index.source or self.module.code, self.index.tree,
                                                             memo.get("kept rows"))  # type: ignore[arg-type]
            self._layout_risks = risks
        return risks  # type: ignore[return-value]

    def _layout_may_change(self, name: str, depth: int, innermost: int) -> bool:
        """Whether the layout bound to `name` may have changed where the flow cannot see: a tensor
        restrided in place anywhere in the module (through an alias or a call it may be this one), a
        name another function rebinds (`global`/`nonlocal`), or a function reading its enclosing
        scope's name (bound to whatever that name holds when the function is called)."""
        risks = self.layout_risks
        if risks.restrides_in_place or name in risks.rebound_elsewhere or (depth == 0 and name in risks.bound_unseen):
            return True
        return depth < innermost and bool(self._scope_nodes) and isinstance(self._scope_nodes[-1], cst.FunctionDef)

    def forget_layout(self, names: Iterable[str]) -> None:
        """These names may be bound to something else now (or on some path): their layout is not known."""
        scope = self._scopes[-1]
        for name in names:
            value = scope.get(name)
            if value is not None and value.contiguous:
                scope[name] = value.with_(contiguous=None)

    def _proves_layout(self) -> bool:
        """Whether some name of the current scope is known contiguous (else forgetting is moot)."""
        return any(value.contiguous for value in self._scopes[-1].values())

    def usage_of(self, name: str) -> frozenset[str]:
        """The attributes and methods read off `name` anywhere in the current function."""
        if not self._scope_nodes or not name:
            return frozenset()
        scope = self._scope_nodes[-1]
        found = self._usage_cache.get(id(scope))
        if found is None:
            found = self._usage_from_ast(scope)
            if found is None:
                found = self._nested_usage(scope)
            if found is None:  # a nested function the module's `ast` does not name alone: its own text, parsed once
                found = attribute_reads(_parsed_nodes(self.module, scope), self.index)
            self._usage_cache[id(scope)] = found
        return found.get(name, frozenset())

    def _usage_from_ast(self, scope: cst.CSTNode) -> Optional[dict[str, frozenset[str]]]:
        """The same, read off the module's `ast` (much cheaper) for a top-level function or method."""
        memo = self.index.memo  # one read per module and per function, shared by every summary walk of the file
        if isinstance(scope, cst.Module):
            # Module-level code: every statement of the file (what the prefilter blanked included).
            found = memo.get(("usage", None))
            if found is None:
                found = memo[("usage", None)] = attribute_reads(
                    (n for nodes in self.index.segment_nodes.values() for n in nodes), self.index)
            return found  # type: ignore[return-value]
        if not isinstance(scope, cst.FunctionDef) or self.summaries is None or len(self._functions()) != 1:
            return None  # (a nested function is not the top-level function or method its name may also name)
        function = self.contexts.function
        owner = function.class_name if function is not None else None
        info = self.summaries.functions.get(FunctionKey(owner, scope.name.value))
        if info is None:
            return None
        found = memo.get(("usage", id(info.node)))
        if found is None:
            nodes = self.index.segment_nodes.get(id(info.node))
            if nodes is None:
                return None
            found = memo[("usage", id(info.node))] = attribute_reads(nodes, self.index, self._layers(owner))
        return found  # type: ignore[return-value]

    def _layers(self, owner: Optional[str]) -> dict[str, str]:
        """The `torch.nn` layers a class of this module holds, `{attr: class}`."""
        info = self.index.classes.get(owner) if owner is not None else None
        return info.torch_module_attributes if info is not None else {}

    def _functions(self) -> list[cst.FunctionDef]:
        """The functions being walked, outermost first (a summary's walk starts at its function, not the module)."""
        return [node for node in self._scope_nodes if isinstance(node, cst.FunctionDef)]

    def _nested_usage(self, scope: cst.CSTNode) -> Optional[dict[str, frozenset[str]]]:
        """The same for a function nested in a top-level function or method: the one `def` of its name among the
        outer function's `ast` nodes (kernels define dozens of closures; printing and parsing each one's text again
        cost more than the rest of their file's lint)."""
        functions = self._functions()
        outer = functions[0] if len(functions) > 1 else None
        if not isinstance(scope, cst.FunctionDef) or outer is None or self.summaries is None:
            return None
        context = next((c for c in self.contexts.contexts if c.kind == "function"), None)
        info = self.summaries.functions.get(FunctionKey(context.class_name if context is not None else None,
                                                        outer.name.value))
        nodes = self.index.segment_nodes.get(id(info.node)) if info is not None else None
        if nodes is None:
            return None
        memo = self.index.memo
        by_name = memo.get(("definitions", id(info.node)))
        if by_name is None:
            by_name = memo[("definitions", id(info.node))] = {}
            for n in nodes:
                if type(n) in _DEFINITIONS:
                    by_name.setdefault(n.name, []).append(n)  # type: ignore[attr-defined]
        matches = by_name.get(scope.name.value, ())
        if len(matches) != 1:
            return None
        found = memo.get(("usage", id(matches[0])))
        if found is None:
            found = memo[("usage", id(matches[0]))] = attribute_reads(
                preorder(matches[0]), self.index, self._layers(context.class_name if context is not None else None))
        return found  # type: ignore[return-value]

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
        inside = {id(n) for n in descendants(node)} if position < (1 << 60) else set()
        return sum(1 for read in reads.get(name, ()) if id(read) not in inside and order.get(id(read), -1) > position)

    # ------------------------------------------------------------------ values
    def value_of(self, node: cst.BaseExpression) -> Value:
        """The abstract value of an expression at the current position (within its statement: where the
        conditional expressions and `and`/`or` tests around it hold)."""
        return self.evaluator.value_of(node, self._statements[-1] if self._statements else None)

    def selects_by_mask(self, index: cst.BaseExpression) -> bool:
        """`index`, an index of a subscript, is a boolean mask of more than 0 dimensions: known to be one
        (a comparison, `.bool()`), or a tensor of unknown dtype, or a value nothing is known of, named as one
        (`x[keep_mask]`: an integer tensor of 0s and 1s would gather rows 0 and 1, which no code means)."""
        value = self.value_of(index)
        if value.zero_dim or not (value.is_tensor or value.kind is Kind.UNKNOWN):
            return False
        if value.bool_mask:
            return True
        name = dotted_name(index)
        if name is None and isinstance(index, cst.Call) and index.args and self.qualify(index.func) in ("torch.cat", "torch.concat"):
            name = dotted_name(index.args[0].value)  # `x[torch.cat(inner_pad_mask)]`: the masks of each item, joined
        return value.dtype is None and not value.index_like and name is not None and sem.looks_like_mask_name(name)

    def index_kind(self, node: cst.Subscript) -> IndexKind:
        """Basic (the result is a view) or advanced (a gathered copy), or unknown."""
        try:
            return self.evaluator.index_kind(node)
        except RecursionError:
            stack.ran_out()
            return IndexKind.UNKNOWN

    def keyed_by_string(self, node: cst.Subscript) -> bool:
        """`d["key"]`, `d[name]` of a string `name`: what it indexes is no tensor."""
        return self.evaluator.keyed_by_string(node)

    def may_be_on_device(self, value: Value) -> bool:
        """A known tensor not known to live on the CPU: reading its values on the host may be a sync.

        A bare `self.<attr>` that only looks like a parameter by its name (`self.use_bias`, `self.o_proj`)
        does not count: it is as often a flag or a submodule as a tensor. One the class registers
        (`self.register_buffer("ptr", ...)`, `nn.Parameter(...)`) does: it moves with the module.
        """
        if not value.is_tensor or value.cpu:
            return False
        return not (value.is_parameter and value.provenance is Provenance.UNKNOWN and value.why is None)

    def bind_target(self, target: cst.BaseExpression, value: Value) -> None:
        self.evaluator.forget_values()
        self.evaluator.bind_target_into(target, value, self._scopes[-1])

    def close(self) -> None:
        """Drop the references that close cycles (the evaluator and the recorder point back at these
        facts, the reports at the rules that hold them), once nothing more is asked: the file's trees
        are then freed by reference counting when it is done, not left to a garbage collection."""
        self.evaluator = None  # type: ignore[assignment]
        self.recorder = None
        self.reports = []


def _collect_reads(fn: cst.CSTNode) -> tuple[dict[str, list[cst.Name]], dict[int, int]]:
    """Every name under a function's body (or under `fn`), and each node's place in source order."""
    reads: dict[str, list[cst.Name]] = {}
    order: dict[int, int] = {}
    for counter, node in enumerate(descendants(fn.body if isinstance(fn, cst.FunctionDef) else fn), start=1):
        order[id(node)] = counter
        if type(node) is cst.Name:
            reads.setdefault(node.value, []).append(node)  # type: ignore[attr-defined]
    return reads, order


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _parsed_nodes(module: cst.Module, scope: cst.CSTNode) -> list[ast.AST]:
    """The `ast` nodes of a libcst function, parsed from its own text (nothing when that does not parse alone)."""
    try:
        return preorder(ast.parse(module.code_for_node(scope)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
