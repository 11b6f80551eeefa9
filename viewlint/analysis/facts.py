"""The flow: what is known at the walker's position, and what rules ask about it.

`Facts` keeps the environment (name -> Value, per function, joined at the end of branches
and loops), the context stack (hot or cold), and the rules' reports. The walker calls its
`enter_*`/`leave_*`/`after_*` hooks in statement order; rules ask it questions
(`value_of`, `index_kind`, `store_events`, `in_hot_path`) and report through it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Optional

import libcst as cst

from viewlint.analysis import stack
from viewlint.analysis import semantics as sem
from viewlint.analysis.annotations import annotation_value, collect_usage, docstring_value
from viewlint.analysis.callgraph import FunctionKey
from viewlint.analysis.contexts import DEFAULT_SYNC_ALLOWED_CONTEXTS, ContextStack, is_setup_name, warns_and_leaves
from viewlint.analysis.evaluator import Evaluator
from viewlint.analysis.module_index import ClassInfo, ModuleIndex, annotation_class, build_index
from viewlint.analysis.rebinding import LayoutRisks, layout_risks, match_captures, stored_names
from viewlint.analysis.tree import chain_text, code_for_node, descendants, dotted_name, remembered, source_in_place, short_text, subtree
from viewlint.analysis.value_ops import MODULE_OUTPUT, labelled
from viewlint.analysis.values import (
    ADVANCED_INDEX,
    INT,
    HOST,
    UNKNOWN,
    UNKNOWN_TENSOR,
    Device,
    IndexKind,
    Kind,
    Provenance,
    Value,
    join,
)

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


@dataclass
class StoreEvent:
    """A value entering a long-lived place (a container held by `self` or the module, a cache)."""

    node: cst.CSTNode  # the Assign or Call that stores
    value_node: cst.BaseExpression
    value: Value
    target: str  # e.g. "self.cache[...]", "cache.set(...)"
    # For a list of this function that collects across a loop and is handed back: the loop. Only views of
    # tensors each iteration makes pin something: every entry keeps one iteration's whole tensor alive.
    loop: Optional[cst.CSTNode] = None




class Facts:
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
        self._locals_annotated: dict[int, tuple[cst.FunctionDef, dict[str, str]]] = {}  # by function (`_annotated_locals`)
        self.evaluator = Evaluator(self)
        self.evaluator.configure(self._cpu_names)
        # Parameter values to use instead of the evidence, for a summary run (`ModuleSummaries.run`).
        self.entry_values: Optional[dict[str, Value]] = None
        # What a summary run records (returns, stores into `self`, calls); None in a rule walk.
        self.recorder: Optional[Any] = None
        # A summary run that answers what a class keeps in an attribute: it does not ask for others.
        self.shallow = False
        self._layout_risks: Optional[LayoutRisks] = None
        # For each `try` being walked that has handlers: the names its body binds (a handler may be
        # entered after any statement of it).
        self._try_stores: list[set[str]] = []

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
        return self.contexts.hot_context() is not None

    @property
    def hot_path_name(self) -> Optional[str]:
        """A short description of the hot context for messages: "`Model.forward`", "a `# viewlint: hot` block"."""
        return self.contexts.hot_path_name_at(None)

    def hot_path_name_at(self, header_of: Optional[cst.CSTNode]) -> Optional[str]:
        """Like `hot_path_name`, for the header of the `if`/`while`/`for` statement `header_of`: its test runs
        in the enclosing context, not in the block it opens (`if step % 100 == 0:` is not itself cold)."""
        return self.contexts.hot_path_name_at(header_of)

    def sync_path_name(self, header_of: Optional[cst.CSTNode] = None) -> Optional[str]:
        """For the host-sync rules: the hot path (as `hot_path_name_at`), or None when the code is not hot or
        sits in a block that allows syncs (`with gpu_sync_allowed():`)."""
        if self.contexts.sync_allowed:
            return None
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
        if found.kind is Kind.UNKNOWN and "." not in name and name not in ("self", "cls"):
            used = self.usage_of(name) & sem.TENSOR_ONLY_METHODS
            if used:
                # `mask.masked_fill(...)`, `idx.long()` elsewhere in the function: only tensors have those.
                # Where it lives stays what the value said (`seq_lens_cpu[s] - query_lens_cpu[s]`: on the host).
                found = UNKNOWN_TENSOR.with_(why=f"`{name}` is used as a tensor (`.{sorted(used)[0]}`)", label=name,
                                             device=found.device, guessed_cpu=found.guessed_cpu)
        # Configured `cpu-names` win over what the walker inferred; `*_cpu` names are CPU tensors by convention.
        if name in self._cpu_names or name.split(".")[-1] in self._cpu_names:
            return found.with_(device=Device.CPU) if found.is_tensor else UNKNOWN_TENSOR.with_(device=Device.CPU) if found.kind is Kind.UNKNOWN else found
        if found.kind in (Kind.TENSOR, Kind.UNKNOWN) and found.device is Device.UNKNOWN and sem.looks_cpu_name(name):
            # A name guess, used only where the code says nothing of the device: `grid_thw = grid_thw.to(device)`
            # (evidence of a device) wins. An unknown value keeps its kind, but what is computed from it
            # (`grid_thw.reshape(-1, 2)`) is on the CPU.
            return found.with_(device=Device.CPU, guessed_cpu=not sem.named_host_side(name))
        return found

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
            found = self._usage_cache[id(scope)] = self._usage_from_ast(scope) or collect_usage(scope)
        return found.get(name, frozenset())

    def _usage_from_ast(self, scope: cst.CSTNode) -> Optional[dict[str, frozenset[str]]]:
        """The same, read off the module's `ast` (much cheaper) for a top-level function or method."""
        memo = self.index.memo  # one read per module and per function, shared by every summary walk of the file
        if isinstance(scope, cst.Module):
            # Module-level code: every statement of the file (what the prefilter blanked included).
            found = memo.get(("usage", None))
            if found is None:
                found = memo[("usage", None)] = _attribute_reads(n for nodes in self.index.segment_nodes.values() for n in nodes)
            return found  # type: ignore[return-value]
        if not isinstance(scope, cst.FunctionDef) or self.summaries is None:
            return None
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
            found = memo[("usage", id(info.node))] = _attribute_reads(nodes)
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
        """The abstract value of an expression at the current position."""
        return self.evaluator.value_of(node)

    def index_kind(self, node: cst.Subscript) -> IndexKind:
        """Basic (the result is a view) or advanced (a gathered copy), or unknown."""
        try:
            return self.evaluator.index_kind(node)
        except RecursionError:
            stack.ran_out()
            return IndexKind.UNKNOWN

    def may_be_on_device(self, value: Value) -> bool:
        """A known tensor not known to live on the CPU: reading its values on the host may be a sync.

        A bare `self.<attr>` that only looks like a parameter by its name (`self.use_bias`, `self.o_proj`)
        does not count: it is as often a flag or a submodule as a tensor.
        """
        if not value.is_tensor or value.cpu:
            return False
        return not (value.is_parameter and value.provenance is Provenance.UNKNOWN)

    def bind_target(self, target: cst.BaseExpression, value: Value) -> None:
        self.evaluator.forget_values()
        self.evaluator.bind_target_into(target, value, self._scopes[-1])

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

    def _annotated_locals(self) -> dict[str, str]:
        """The locals the current function annotates with a class (`outputs: BaseModelOutputWithPast = ...`),
        each bound only so."""
        function = self._scope_nodes[-1] if self._scope_nodes else None
        if not isinstance(function, cst.FunctionDef):
            return {}
        known = self._locals_annotated.get(id(function))
        if known is None or known[0] is not function:
            known = self._locals_annotated[id(function)] = (
                function, remembered("annotated locals", function, lambda: _annotated_locals(function)))
        return known[1]

    def pins_nothing_more(self, value: Value, view: Value) -> bool:
        """Storing `value` keeps nothing of `view`'s base that is not kept anyway: the entry also holds
        the base itself (`(raw, raw.narrow(...))`), other parts of it (`(table[:n], table[n:])`) or all
        the pieces of a split (`list(packed.chunk(4))`), or
        this function hands the base to its object (`self._cache_workspace(key, workspace)`)."""
        if view.base is None:
            return False
        if view.base in value.held_bases():
            return True
        if sum(1 for v in value.retained_views() if v.base == view.base) >= 2 or value.covers_base(view.base):
            return True
        return self._kept_by_self(re.split(r"[.\[(]", view.base, maxsplit=1)[0])

    def _kept_by_self(self, name: str) -> bool:
        """`name` is given to `self` in this function (assigned into it, passed to one of its methods) or
        read from a container `self` holds: its storage lives as long as the object."""
        context = self.contexts.function
        if context is None or context.node is None or not re.fullmatch(r"[A-Za-z_]\w*", name) or name == "self":
            return False
        info = self.index.classes.get(self.class_name or "")
        kept_by = set(info.retaining_methods) if info is not None else set()
        for node in descendants(context.node):
            if isinstance(node, cst.Assign):
                targets = [dotted_name(t.target.value if isinstance(t.target, cst.Subscript) else t.target) or "" for t in node.targets]
                if any(t.startswith("self.") for t in targets) and _holds_directly(node.value, name):
                    return True
                if any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets) \
                        and _reads_self_container(node.value):
                    return True
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and dotted_name(node.func.value) == "self" and node.func.attr.value in kept_by \
                    and any(_holds_directly(a.value, name) for a in node.args):
                return True  # `self._cache_workspace(key, workspace)`, a method that keeps its argument
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in sem.STORING_METHODS \
                    and (dotted_name(node.func.value) or "").startswith("self.") \
                    and any(_holds_directly(a.value, name) for a in node.args):
                return True  # `self._packed.append(packed)`: a container of the object keeps it
        return False

    def partitioned(self, value_node: cst.BaseExpression, base: Optional[str]) -> bool:
        """`layer.weight.data = w[i * rows:(i + 1) * rows]` in a loop, or `a.weight.data = w[:n]` and
        `b.weight.data = w[n:]`: parameters that between them hold every part of one tensor pin nothing extra."""
        if base is None or not isinstance(value_node, cst.Subscript):
            return False
        context = self.contexts.function
        scope = context.node if context is not None else None
        if scope is None:
            return False
        bounds = {n.value for n in descendants(value_node) if isinstance(n, cst.Name)} - {base}
        loops = [c.node for c in self.contexts.contexts if c.kind == "loop" and c.node is not None]
        if loops:
            bound_in_loop = set()
            for node in descendants(loops[-1]):
                if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.For)):
                    target = node.target
                    bound_in_loop.update(n.value for n in descendants(target) if isinstance(n, cst.Name))
            if bounds & bound_in_loop:
                return True
        slices = 0
        for node in descendants(scope):
            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Subscript) \
                    and dotted_name(node.value.value) == base \
                    and any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "data" for t in node.targets):
                slices += 1
        return slices >= 2

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
        if name.startswith("self.") and name[5:] in self.index.drained_attributes:
            return False  # `self.group.append(x)` where a method takes the group and sets it back to None
        if method in sem.CONTAINER_ONLY_METHODS:
            # Only containers have these: any self-held or module-level receiver is long-lived.
            if name.startswith("self.") or (name in self.index.module_names and not self._is_local(name)):
                return True
        if name.startswith("self.") and name.count(".") == 1 and method in sem.QUEUE_METHODS:
            info = self.index.classes.get(self.class_name or "")
            if info is not None and name[5:] in info.container_attributes:
                return True  # `self.write_queue.put(...)`: held until a consumer takes it
        last = name.split(".")[-1]
        if sem.looks_long_lived(last, self.settings.long_lived_names):
            # A receiver named like a cache/pool/store/registry keeps what it is given (also when it is passed
            # in: the caller owns it and keeps it), unless it is a container built in this function.
            configured = any(last.lower() == extra.lower() for extra in self.settings.long_lived_names)
            return configured or not self._is_local_container(name)
        return False

    def _accumulating_loop(self, receiver: cst.BaseExpression) -> Optional[cst.CSTNode]:
        """The innermost loop, when `receiver` is a list this function builds before it and returns (or yields):
        what each iteration adds to it outlives the iteration."""
        if not isinstance(receiver, cst.Name) or not self._is_local_container(receiver.value) \
                or self._is_parameter(receiver.value):
            return None
        loops = [c.node for c in self.contexts.contexts if c.kind == "loop" and c.node is not None]
        context = self.contexts.function
        if not loops or context is None or context.node is None:
            return None
        name = receiver.value
        for node in descendants(loops[-1]):
            if isinstance(node, (cst.AssignTarget, cst.AnnAssign)) and isinstance(node.target, cst.Name) \
                    and node.target.value == name:
                return None  # rebound on each iteration: it holds one iteration's values
        for node in descendants(context.node):
            if isinstance(node, (cst.Return, cst.Yield)) and isinstance(node.value, cst.BaseExpression) \
                    and _holds_directly(node.value, name):
                return loops[-1]
        return None

    def _pins_an_iteration(self, value: Value, loop: cst.CSTNode) -> bool:
        """What a loop adds to a list it fills holds a view of part of a tensor that iteration computed
        (`act = model(batch)`, then `act[:, 0]`): each entry keeps one iteration's whole tensor. Not so for
        views of a tensor read out of something that lives anyway (`buf = buffers[i]`), a leading index
        (`out[0]` of a batch of one is all of it), or parts of one tensor all added in the iteration
        (`x[0]` and `x[1]`)."""
        for view in value.retained_views():
            base = view.base
            if not (view.is_view and view.partial and base is not None and re.fullmatch(r"[A-Za-z_]\w*", base)):
                continue
            if re.fullmatch(r"\[[^,:\]]+\]", view.origin or ""):
                continue  # `x[0]`: a leading index, often all of a batch of one
            made = self.lookup(base)
            if made.kind is Kind.WRAPPER and made.origin == MODULE_OUTPUT:
                made = made.element()  # `act = model(batch)`: a tensor (or a tuple of them) the model made
            if not made.is_fresh or not self._bound_in(base, loop):
                continue
            adds = [n for n in descendants(loop) if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                    and n.func.attr.value in sem.ACCUMULATING_METHODS
                    and any(isinstance(m, cst.Name) and m.value == base for a in n.args for m in descendants(a.value))]
            if len(adds) > 1:
                continue  # several parts of the same tensor added: together they may cover it
            return True
        return False

    @staticmethod
    def _bound_in(name: str, loop: cst.CSTNode) -> bool:
        """`name` is assigned by the body of `loop` (on each iteration)."""
        for node in descendants(loop):
            if isinstance(node, cst.AssignTarget) and any(isinstance(n, cst.Name) and n.value == name
                                                          for n in descendants(node.target)):
                return True
        return False

    def _is_local_container(self, name: str) -> bool:
        """A name bound in this function to a container literal (it dies with the function), or a
        parameter annotated as a plain `dict`/`list` (a per-call container its caller owns)."""
        if "." in name or not self._is_local(name):
            return False
        value = self._scopes[-1].get(name, UNKNOWN)
        if self._is_parameter(name):
            return value.kind is Kind.WRAPPER and value.wrapper in ("dict", "list")
        return value.kind is Kind.WRAPPER

    def is_parameter(self, name: str) -> bool:
        return self._is_parameter(name)

    def _is_parameter(self, name: str) -> bool:
        """`name` is a parameter of the innermost enclosing function."""
        context = self.contexts.function
        if context is not None and isinstance(context.node, cst.FunctionDef):
            params = context.node.params
            every = [*params.posonly_params, *params.params, *params.kwonly_params]
            return any(p.name.value == name for p in every)
        return False

    def store_events(self, node: cst.CSTNode) -> list[StoreEvent]:
        """The values that `node` (an Assign or a Call) puts into a long-lived place.

        A parameter that this function keeps is left out: its callers' calls are the stores
        (`cache.set(key, piece)` is reported where `piece` is made, not inside `set`)."""
        return [e for e in self._store_events(node) if not self._kept_for_callers(e.value_node)]

    def _kept_for_callers(self, node: cst.BaseExpression) -> bool:
        while isinstance(node, (cst.Attribute, cst.Subscript)) or (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
            node = node.func.value if isinstance(node, cst.Call) else node.value  # type: ignore[union-attr]
        if not isinstance(node, cst.Name) or not self._is_parameter(node.value):
            return False
        context = self.contexts.function
        if context is None:
            return False
        if context.class_name is not None:
            info = self.index.classes.get(context.class_name)
            kept = info.retaining_keywords.get(context.name, set()) if info is not None else set()
        else:
            kept = self.index.retaining_function_keywords.get(context.name, set())
        return node.value in kept

    def _store_events(self, node: cst.CSTNode) -> list[StoreEvent]:
        events: list[StoreEvent] = []
        if isinstance(node, cst.Assign):
            for target in node.targets:
                t = target.target
                if isinstance(t, cst.Subscript) and self.is_long_lived_container(t.value):
                    events.append(StoreEvent(node, node.value, self.value_of(node.value), self.short_source(t.value) + "[...]"))
                elif isinstance(t, cst.Attribute) and t.attr.value == "data" and self._parameter_like(t.value):
                    # `layer.weight.data = piece`: the parameter now lives on the storage of `piece`.
                    events.append(StoreEvent(node, node.value, self.value_of(node.value), self.short_source(t)))
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            receiver = node.func.value
            # `list.append/extend/insert` take no keywords: `self.dispatcher.extend(q=q)` is some other method.
            container_call = method not in sem.CONTAINER_ONLY_METHODS or all(a.keyword is None for a in node.args)
            known = self.receiver_class(receiver)
            loop = self._accumulating_loop(receiver) if method in sem.ACCUMULATING_METHODS and container_call else None
            if known is not None and method in known.methods and known.name in self.index.classes \
                    and self.index.classes[known.name] is known:
                # The receiver's class is defined here: its method says what it keeps.
                events.extend(self._summary_store_events(node, method, receiver))
            elif loop is not None:
                for arg in node.args:
                    if isinstance(arg.value, (cst.ListComp, cst.GeneratorExp)):
                        continue  # `out.extend(x[i:i + n] for i in ...)`: pieces that together cover their base
                    value = self.value_of(arg.value)
                    if self._pins_an_iteration(value, loop):
                        events.append(StoreEvent(node, arg.value, value, f"{self.short_source(receiver)}.{method}(...)",
                                                 loop=loop))
            elif method in sem.STORING_METHODS and container_call and self._long_lived_receiver(receiver, method):
                if known is not None and method in known.methods:
                    # Imported from another module of the project: what its method keeps (a `set` that clones
                    # when the storage is larger than the payload keeps nothing extra) narrows the heuristic.
                    events.extend(e for e in self._arguments_at(
                        node, known.retaining_methods.get(method, set()), known.retaining_keywords.get(method, set()),
                        f"{self.short_source(receiver)}.{method}(...)"))
                    return events
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

    def _parameter_like(self, node: cst.BaseExpression) -> bool:
        """`layer.weight`, `self.proj.bias`, a parameter from `model.parameters()`: a module's tensor."""
        value = self.value_of(node)
        if value.is_parameter:
            return True
        return (dotted_name(node) or "").split(".")[-1] in sem.PARAMETER_ATTRIBUTE_NAMES

    def receiver_class(self, receiver: cst.BaseExpression) -> Optional[ClassInfo]:
        """The class of `receiver` when the code says it: `self`, an attribute built or annotated with a
        class, a module-level instance or annotated name, an annotated parameter. A class imported from
        another module of the project is read from that module."""
        name = dotted_name(receiver)
        if name is None:
            return None
        reference: Optional[str] = None
        if name == "self":
            reference = self.class_name
        elif name.startswith("self.") and name.count(".") == 1:
            info = self.index.classes.get(self.class_name or "")
            if info is not None:
                reference = info.attribute_classes.get(name[5:]) or info.attribute_annotations.get(name[5:])
        elif "." not in name:
            if self._is_parameter(name):
                reference = self._parameter_classes.get(name)
            elif not self._is_local(name):
                reference = self.index.module_instances.get(name) or self.index.module_annotations.get(name)
            else:
                reference = self._annotated_locals().get(name)  # `outputs: BaseModelOutput = self.model(...)`
        if reference is None:
            return None
        if self.summaries is not None:
            return self.summaries.class_named(reference)
        return self.index.classes.get(reference)

    def _summary_store_events(self, node: cst.Call, method: str, receiver: cst.BaseExpression) -> list[StoreEvent]:
        """Calls of methods (of classes in this module or the project) whose body keeps an argument in a long-lived place."""
        info = self.receiver_class(receiver)
        if info is not None and self.index.classes.get(info.name) is not info:
            return []  # imported: only ever narrows a store the heuristics found (see `_store_events`)
        if info is None and self.summaries is not None:
            # `token.set_embedding(...)` on a receiver of unknown type: the one class here that defines it.
            owner = self.summaries.unique_method_owner(method, self.value_of(receiver))
            info = self.index.classes.get(owner) if owner is not None else None
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

    def close(self) -> None:
        """Drop the references that close cycles (the evaluator and the recorder point back at these
        facts, the reports at the rules that hold them), once nothing more is asked: the file's trees
        are then freed by reference counting when it is done, not left to a garbage collection."""
        self.evaluator = None  # type: ignore[assignment]
        self.recorder = None
        self.reports = []

    # ------------------------------------------------------------------ walking hooks (called by Walker)
    def enter_module(self, node: cst.Module) -> None:
        self._scope_nodes.append(node)

    def enter_function(self, node: cst.FunctionDef) -> None:
        self.contexts.enter_function(node)
        scope: dict[str, Value] = {}
        params = [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]
        entry = self.entry_values
        actual = entry is not None  # a summary walk: the values one call passes
        if entry is not None:
            self.entry_values = None  # for this function only, not the ones nested in it
        elif self.summaries is not None and len(self._scopes) == 1 + (self.class_name is not None):
            entry = self.summaries.entry_values(self.class_name, node.name.value)
        docstring = node.get_docstring() if any(p.annotation is None for p in params) else None
        inputs = self._module_inputs(node)
        self._parameter_classes = self._annotated_classes(node, params)
        for param in params:
            name = param.name.value
            evidence = self.parameter_value(param, docstring)
            if evidence.is_tensor and isinstance(param.default, cst.Name) and param.default.value in ("True", "False"):
                evidence = HOST  # `output_attentions: torch.Tensor | None = False`: a flag, whatever the annotation says
            if evidence.kind is Kind.UNKNOWN and name in inputs:
                evidence = inputs[name]
            passed = entry.get(name) if entry is not None else None
            if passed is not None and not actual and param.annotation is not None and evidence.is_tensor \
                    and passed.kind is Kind.INT and node.name.value.startswith("_"):
                # A private helper every caller here passes a plain number (`self._lengths(mask.shape[-1])`):
                # what the callers pass beats the annotation.
                evidence, passed = passed, None
            if passed is not None and not actual and param.annotation is not None and evidence.kind is not Kind.UNKNOWN:
                # Annotated: the annotation says what it is; the callers only say where it lives.
                if evidence.is_tensor and evidence.device is Device.UNKNOWN and passed.device is not Device.UNKNOWN \
                        and passed.kind in (Kind.TENSOR, Kind.UNKNOWN):
                    evidence = evidence.with_(device=passed.device, guessed_cpu=passed.guessed_cpu)
                passed = None
            if passed is not None and passed.kind is Kind.UNKNOWN and passed.device is not Device.UNKNOWN \
                    and evidence.kind in (Kind.TENSOR, Kind.UNKNOWN) and evidence.device is Device.UNKNOWN:
                value = evidence.with_(device=passed.device, guessed_cpu=passed.guessed_cpu)  # every caller passes a `*_cpu` value
            elif passed is None or passed.kind is Kind.UNKNOWN:
                value = evidence
            elif actual or evidence.kind is Kind.UNKNOWN:
                value = passed
            else:
                value = join(evidence, passed)  # what the annotation says, and what this module's callers pass
            scope[name] = labelled(value, name)
        if node.params.star_arg is not None and isinstance(node.params.star_arg, cst.Param):
            scope[node.params.star_arg.name.value] = UNKNOWN
        self._scopes.append(scope)
        self._scope_nodes.append(node)

    def _module_inputs(self, node: cst.FunctionDef) -> dict[str, Value]:
        """The unannotated inputs of an `nn.Module`'s `forward` (or `forward_*`, `__call__`): activations,
        tensors on the module's device. Parameters with a non-`None` default (`use_cache=False`) or a
        flag's name (`return_dict`, `output_attentions`) are options, not inputs."""
        info = self.index.classes.get(self.class_name or "")
        name = node.name.value
        if info is None or not info.is_module or name not in ("forward", "__call__", "_forward"):
            return {}
        key = ("module inputs", id(node), self.class_name)  # read once per function, not per summary walk of it
        known = self.index.memo.get(key)
        if known is not None and known[0] is node:  # type: ignore[index]
            return dict(known[1])  # type: ignore[index]
        compared = _compared_with_constants(node)
        used = _used_as_tensors(node, self.index, info)
        found: dict[str, Value] = {}
        for param in [*node.params.params[1:], *node.params.kwonly_params]:
            pname = param.name.value
            no_default = param.default is None or (isinstance(param.default, cst.Name) and param.default.value == "None")
            if sem.is_module_input(pname, param.annotation is not None, no_default) and pname not in compared and pname in used:
                found[pname] = Value(kind=Kind.TENSOR, why=f"an input of `{self.class_name}.{name}`")
        self.index.memo[key] = (node, dict(found))  # type: ignore[index]
        return found

    def _annotated_classes(self, node: cst.FunctionDef, params: list[cst.Param]) -> dict[str, str]:
        """Parameter -> the class its annotation names, read off the module's `ast` when the function is one
        of its top-level functions or methods."""
        if not any(p.annotation is not None for p in params):
            return {}
        function = self.contexts.function
        info = None
        if self.summaries is not None and len(self._scopes) == 1 + (self.class_name is not None):
            info = self.summaries.functions.get(FunctionKey(function.class_name if function else None, node.name.value))
        if info is not None:
            arguments = info.node.args  # type: ignore[attr-defined]
            return {a.arg: found for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
                    if (found := annotation_class(a.annotation)) is not None}
        found: dict[str, str] = {}
        for param in params:
            if param.annotation is not None:
                reference = _annotation_class_of(param.annotation.annotation)
                if reference is not None:
                    found[param.name.value] = reference
        return found

    def parameter_value(self, param: cst.Param, docstring: Optional[str]) -> Value:
        """What a parameter is, from its annotation or its function's docstring."""
        if param.annotation is not None:
            value = annotation_value(param.annotation.annotation, self.index)
            if value.kind is not Kind.UNKNOWN:
                return value
        return docstring_value(docstring, param.name.value)

    def leave_function(self, node: cst.FunctionDef) -> None:
        self.contexts.pop()
        self._scopes.pop()
        self._scope_nodes.pop()

    def enter_class(self, node: cst.ClassDef) -> None:
        self.contexts.enter_class(node)
        self._scopes.append({})

    def leave_class(self, node: cst.ClassDef) -> None:
        self.contexts.leave_class()
        self._scopes.pop()

    def enter_loop(self, node: cst.CSTNode) -> None:
        self.contexts.enter_loop(node)
        if self._proves_layout():
            # The body runs again with what its last run bound: a name it rebinds is not known at its top.
            self.forget_layout(stored_names(node.body))  # type: ignore[attr-defined]
        self._loop_snapshots.append(dict(self._scopes[-1]))
        if isinstance(node, cst.For):
            element = self.evaluator.iterate(node.iter, {})
            if element.is_tensor and isinstance(node.target, cst.Name) and self.value_of(node.iter).whole_partition:
                element = element.with_(every_piece=True)  # `for page in pages:` over a whole split
            elif element.kind is Kind.WRAPPER and isinstance(node.iter, cst.Call) and dotted_name(node.iter.func) == "zip" \
                    and len(element.elements) == len(node.iter.args):
                # `for lin, piece in zip(linears, packed.split(rows)):` visits every piece of the split too.
                element = element.with_(elements=tuple(
                    item.with_(every_piece=True) if item.is_tensor and self.value_of(arg.value).whole_partition else item
                    for item, arg in zip(element.elements, node.iter.args)))
            self.bind_target(node.target, element)

    def leave_loop(self, node: cst.CSTNode) -> None:
        self.contexts.pop()
        before = self._loop_snapshots.pop()
        self._scopes[-1] = _join_scopes(before, self._scopes[-1])

    def enter_if(self, node: cst.If) -> None:
        self.contexts.enter_if(node)
        self._if_snapshots.append(dict(self._scopes[-1]))
        for name, value in self.evaluator.narrowings(node.test, True):
            self._scopes[-1][name] = value

    def enter_cold_block(self, node: cst.CSTNode) -> None:
        self.contexts.enter_cold_block(node)
        if isinstance(node, cst.ExceptHandler) and self._try_stores:
            self.forget_layout(self._try_stores[-1])  # entered after any statement of the `try` body

    def enter_with(self, node: cst.With) -> None:
        self.contexts.enter_with(node, self._sync_allowed)
        for item in node.items:
            if item.asname is not None:
                self.bind_target(item.asname.name, UNKNOWN)  # what `__enter__` returns

    def leave_with(self, node: cst.With) -> None:
        self.contexts.pop()

    def leave_cold_block(self, node: cst.CSTNode) -> None:
        self.contexts.pop()

    def if_body_done(self, node: cst.If) -> None:
        # Keep the body's result and restart from the state before the `if` for the else branch.
        before = self._if_snapshots[-1]
        self._if_snapshots[-1] = self._scopes[-1]
        self._scopes[-1] = dict(before)
        self.contexts.else_branch()
        for name, value in self.evaluator.narrowings(node.test, False):
            self._scopes[-1][name] = value

    def leave_if(self, node: cst.If) -> None:
        self.contexts.pop()
        after_body = self._if_snapshots.pop()
        if _leaves(node.body) or _never_eager(node.test):
            # `if torch.jit.is_scripting(): ...`: an eager run never takes the body; what it binds does not flow on.
            return  # `if isinstance(x, torch.Tensor): return ...`: after the `if`, only the other path goes on
        if isinstance(node.orelse, cst.Else) and _leaves(node.orelse.body):
            self._scopes[-1] = after_body
            return
        self._scopes[-1] = _join_scopes(after_body, self._scopes[-1])

    def push_statement(self, node: cst.CSTNode) -> None:
        self._statements.append(node)
        kind = type(node).__name__
        if kind in ("Try", "TryStar") and node.handlers:  # type: ignore[attr-defined]
            self._try_stores.append(stored_names(node.body) if self._proves_layout() else set())  # type: ignore[attr-defined]
        elif kind == "Match":
            for case in node.cases:  # type: ignore[attr-defined]
                for child in descendants(case.pattern):
                    for name in match_captures(child):
                        self.bind(name, UNKNOWN)

    def pop_statement(self) -> None:
        node = self._statements.pop()
        kind = type(node).__name__
        if kind in ("Try", "TryStar") and node.handlers:  # type: ignore[attr-defined]
            self._try_stores.pop()
            if self._proves_layout():
                self.forget_layout(stored_names(node))  # the body may have stopped half-way, then a handler ran
        elif kind == "Match" and self._proves_layout():
            self.forget_layout(stored_names(node))  # one case body ran, or none: not all of them in a row

    def after_named_expression(self, node: cst.NamedExpr) -> None:
        """`(x := expr)`: binds `x` in the function, on the paths that evaluate it."""
        if not isinstance(node.target, cst.Name):
            return
        value = self.value_of(node.value)
        name = node.target.value
        self.bind(name, join(self.lookup(name), value) if name in self._scopes[-1] else value)

    def after_assign(self, node: cst.BaseSmallStatement) -> None:
        if isinstance(node, cst.Assign):
            value = self.value_of(node.value)
            for target in node.targets:
                self._assign_to(target.target, value)
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            value = self.value_of(node.value)
            if value.origin == MODULE_OUTPUT or value.kind is Kind.UNKNOWN:
                # `outputs: BaseModelOutputWithPast = self.model(...)`: what a module gives was a guess; the
                # annotation says which object it is (a class: not a tensor).
                annotated = annotation_value(node.annotation.annotation, self.index)
                if annotated.kind is Kind.HOST and annotated.wrapper is not None:
                    value = annotated
            self._assign_to(node.target, value)
        elif isinstance(node, cst.AugAssign):
            target = node.target
            if isinstance(target, cst.Name):
                old = self.lookup(target.value)
                if old.is_tensor:
                    return  # `x += y` on a tensor is in place: x keeps its storage
                value = self.value_of(cst.BinaryOperation(left=target, operator=_BINARY[type(node.operator)](), right=node.value)) \
                    if type(node.operator) in _BINARY else UNKNOWN
                self.bind_target(target, value)

    def _assign_to(self, target: cst.BaseExpression, value: Value) -> None:
        if isinstance(target, cst.Subscript):
            self._add_to_container(target.value, value)
            return
        self.bind_target(target, value)
        if self.recorder is not None and isinstance(target, cst.Attribute):
            name = dotted_name(target)
            if name is not None and name.startswith("self.") and name.count(".") == 1:
                self.recorder.assigned(name[5:], value)

    def in_fallback_path(self, node: cst.CSTNode) -> bool:
        """Whether `node` runs only on a fallback path: in the branch taken when the callers give no host copy
        (`x_host if x_host is not None else x.tolist()`, `if seq_lens_cpu is None: n = seq_lens.cpu()`), or in a
        branch that logs a warning and gives up (an error path, like `raise`; the `if` test itself still runs on
        every call)."""
        ifs = [c.node for c in self.contexts.contexts if isinstance(c.node, cst.If)]
        statement = self.current_statement
        expressions = self._conditionals_in(statement) if statement is not None else []
        for branch in (*ifs, *expressions):
            if isinstance(branch, cst.If) and warns_and_leaves(branch):
                fallback: Optional[cst.CSTNode] = branch.body
            else:
                present = _host_copy_test(branch.test)
                if present is None:
                    continue
                fallback = branch.orelse if present else branch.body
            if fallback is not None and id(node) in self._ids_within(fallback):
                return True
        return False

    def _conditionals_in(self, statement: cst.CSTNode) -> list[cst.IfExp]:
        """The `a if c else b` expressions in a statement, found once per statement (rules ask at every node)."""
        found = self._subtree_cache.get(("conditionals", id(statement)))
        if found is None:
            found = self._subtree_cache[("conditionals", id(statement))] = (
                statement, [n for n in descendants(statement) if isinstance(n, cst.IfExp)])
        return found[1]  # type: ignore[return-value]

    def _ids_within(self, node: cst.CSTNode) -> frozenset[int]:
        """The ids of `node` and of every node under it, collected once per node."""
        found = self._subtree_cache.get(("within", id(node)))
        if found is None:
            found = self._subtree_cache[("within", id(node))] = (node, frozenset(id(n) for n in descendants(node)))
        return found[1]  # type: ignore[return-value]

    def after_assert(self, node: cst.Assert) -> None:
        """`assert x.is_contiguous()`, `assert isinstance(x, torch.Tensor)`: what holds after it."""
        for name, value in self.evaluator.narrowings(node.test, True):
            self._scopes[-1][name] = value

    def after_expression(self, node: cst.Expr) -> None:
        """`pieces.append(p)`, `self.queue.put(entry)`: what the container may hold now."""
        call = node.value
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in sem.ADDING_METHODS:
            for arg in call.args:
                if arg.keyword is None and not arg.star:
                    value = self.value_of(arg.value)
                    if call.func.attr.value in ("extend", "update") and value.is_container:
                        value = value.element()
                    self._add_to_container(call.func.value, value)

    def _add_to_container(self, container: cst.BaseExpression, value: Value) -> None:
        """Record that `container` (or the container it is an item of: `d["k"][i] = v`) may hold `value`."""
        while isinstance(container, cst.Subscript):
            container = container.value
        name = dotted_name(container)
        if name is None:
            return
        if name.startswith("self.") and name.count(".") == 1 and self.recorder is not None:
            self.recorder.added(name[5:], value)
        if name in self._scopes[-1]:
            current = self._scopes[-1][name]
            if current.kind is Kind.WRAPPER:
                self._scopes[-1][name] = current.with_element(value)


def _holds_directly(node: cst.BaseExpression, name: str) -> bool:
    """`name`, or a tuple, list, dict or constructor call with `name` itself among its items."""
    if isinstance(node, cst.Name):
        return node.value == name
    if isinstance(node, (cst.Tuple, cst.List)):
        return any(_holds_directly(e.value, name) for e in node.elements)
    if isinstance(node, cst.Dict):
        return any(isinstance(e, cst.DictElement) and _holds_directly(e.value, name) for e in node.elements)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value[:1].isupper():
        return any(_holds_directly(a.value, name) for a in node.args)
    return False


def _reads_self_container(node: cst.BaseExpression) -> bool:
    """`self.cache.get(key)`, `self.cache[key]`: an item a container of `self` holds."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("get", "pop", "setdefault"):
        node = node.func.value
    elif isinstance(node, cst.Subscript):
        node = node.value
    else:
        return False
    name = dotted_name(node) or ""
    return name.startswith("self.") and name.count(".") == 1


def _annotation_class_of(annotation: cst.BaseExpression) -> Optional[str]:
    """The class a parameter's annotation names (read with `ast`, as the module index reads them)."""
    try:
        return annotation_class(ast.parse(cst.Module(body=[]).code_for_node(annotation), mode="eval").body)
    except SyntaxError:
        return None


def _used_as_tensors(function: cst.FunctionDef, index: ModuleIndex, info: ClassInfo) -> set[str]:
    """Names a function uses the way tensors are used: an array method or attribute (`x.shape`, `mask.any()`),
    an argument of a `torch` function, of a submodule (`self.proj(x)`) or of a function of this module,
    tensor-style indexing (`x[:, 0]`), a matrix product."""
    by_shape, calls = remembered("tensor uses", function, lambda: _tensor_uses(function))
    found: set[str] = set(by_shape)
    for node in calls:
        func = node.func
        qualified = index.qualify(func) or ""
        receiver = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
        callee = dotted_name(func) or ""
        if qualified.startswith("torch.") or receiver == "self" and (
                func.attr.value in info.submodule_attributes or func.attr.value in info.assigned_attributes) \
                or callee in index.defined_functions:
            found.update(a.value.value for a in node.args if isinstance(a.value, cst.Name))  # type: ignore[attr-defined]
    return found


def _tensor_uses(function: cst.FunctionDef) -> tuple[frozenset[str], tuple[cst.Call, ...]]:
    """What `_used_as_tensors` reads off the function's tree alone: the names used the way tensors are by their
    shape (`x.shape`, `x[:, 0]`, `a @ b`), and the calls, whose callees the module index judges."""
    found: set[str] = set()
    calls: list[cst.Call] = []
    Attribute, Call, Name, Subscript, BinaryOperation = cst.Attribute, cst.Call, cst.Name, cst.Subscript, cst.BinaryOperation
    for node in subtree(function):
        kind = type(node)  # exact types: libcst's `isinstance` runs Python code for its ABCs
        if kind is Name:
            continue
        if kind is Attribute and type(node.value) is Name and node.attr.value in sem.ARRAY_METHODS:  # type: ignore[attr-defined]
            found.add(node.value.value)  # type: ignore[attr-defined]
        elif kind is Call:
            calls.append(node)  # type: ignore[arg-type]
        elif kind is Subscript and type(node.value) is Name and len(node.slice) > 1:  # type: ignore[attr-defined]
            found.add(node.value.value)  # type: ignore[attr-defined]
        elif kind is BinaryOperation and type(node.operator) is cst.MatrixMultiply:  # type: ignore[attr-defined]
            found.update(n.value for n in (node.left, node.right) if isinstance(n, cst.Name))  # type: ignore[attr-defined]
    return frozenset(found), tuple(calls)


def _compared_with_constants(function: cst.FunctionDef) -> frozenset[str]:
    """Names compared with a string or an enum member (`mode == "train"`, `cache[i] == "Rep"`,
    `method == Kind.MHA`): options or containers of them, not tensors."""
    return remembered("compared with constants", function, lambda: _find_compared_with_constants(function))


def _find_compared_with_constants(function: cst.FunctionDef) -> frozenset[str]:
    found: set[str] = set()
    for node in descendants(function):
        if type(node) is cst.Comparison:
            left = node.left  # type: ignore[attr-defined]
            while isinstance(left, cst.Subscript):
                left = left.value
            if not isinstance(left, cst.Name):
                continue
            for target in node.comparisons:
                other = target.comparator
                if isinstance(other, (cst.SimpleString, cst.ConcatenatedString)) or (
                        isinstance(other, cst.Attribute) and isinstance(other.value, cst.Name) and other.value.value[:1].isupper()):
                    found.add(left.value)
    return frozenset(found)


_BINARY = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
    cst.BitAndAssign: cst.BitAnd, cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor,
    cst.MatrixMultiplyAssign: cst.MatrixMultiply, cst.PowerAssign: cst.Power,
}


def _annotated_locals(function: cst.FunctionDef) -> dict[str, str]:
    """Local name -> the class its `name: Class = ...` annotation names, for names no other statement of the
    function annotates differently."""
    found: dict[str, Optional[str]] = {}
    for node in descendants(function.body):
        if type(node) is cst.AnnAssign and type(node.target) is cst.Name:  # type: ignore[attr-defined]
            annotated = dotted_name(node.annotation.annotation)  # type: ignore[attr-defined]
            name = node.target.value  # type: ignore[attr-defined]
            reference = annotated.split(".")[-1] if annotated and annotated.split(".")[-1][:1].isupper() else None
            found[name] = reference if found.get(name, reference) == reference else None
    return {name: reference for name, reference in found.items() if reference is not None}


def _never_eager(test: cst.BaseExpression) -> bool:
    """A test that holds only while the code is traced, scripted or exported (`torch.jit.is_scripting()`,
    `a() or b()` of such calls), never in an eager run."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return _never_eager(test.left) and _never_eager(test.right)
    if isinstance(test, cst.BooleanOperation):
        return _never_eager(test.left) or _never_eager(test.right)
    if isinstance(test, cst.Call) and not test.args:
        name = dotted_name(test.func) or ""
        return name.rsplit(".", 1)[-1].lstrip("_") in sem.NEVER_EAGER_CALLS
    return False


def _join_scopes(a: dict[str, Value], b: dict[str, Value]) -> dict[str, Value]:
    """The names after two paths: bound on one path only, a name keeps that path's value (using it
    on the other path would raise); bound on both, the values join."""
    joined = dict(a)
    for key, value in b.items():
        if key not in a:
            joined[key] = value
            continue
        merged = join(a[key], value)
        if merged.kind is Kind.TENSOR and merged.label is None and key.isidentifier():
            # The paths bound tensors known by different names (or one by none): after the join it is known by
            # this name, as the views taken of it are, so that storing it next to one of them stores their base.
            merged = labelled(merged, key)
        joined[key] = merged
    return joined


def _collect_reads(fn: cst.CSTNode) -> tuple[dict[str, list[cst.Name]], dict[int, int]]:
    """Every name under a function's body (or under `fn`), and each node's place in source order."""
    reads: dict[str, list[cst.Name]] = {}
    order: dict[int, int] = {}
    for counter, node in enumerate(descendants(fn.body if isinstance(fn, cst.FunctionDef) else fn), start=1):
        order[id(node)] = counter
        if type(node) is cst.Name:
            reads.setdefault(node.value, []).append(node)  # type: ignore[attr-defined]
    return reads, order


def _attribute_reads(nodes: Iterable[ast.AST]) -> dict[str, frozenset[str]]:
    """For each plain name, the attributes read off it (`mask.any()` -> {"any"}), from `ast` nodes."""
    found: dict[str, set[str]] = {}
    for node in nodes:
        if type(node) is ast.Attribute and type(node.value) is ast.Name:  # type: ignore[attr-defined]
            found.setdefault(node.value.id, set()).add(node.attr)  # type: ignore[attr-defined]
    return {name: frozenset(attrs) for name, attrs in found.items()}


def _leaves(block: cst.BaseSuite) -> bool:
    """The block always ends in `return`, `raise`, `continue` or `break` (its last statement does)."""
    statements = block.body if isinstance(block, cst.IndentedBlock) else (block,)
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return any(isinstance(s, (cst.Return, cst.Raise, cst.Continue, cst.Break)) for s in last.body)
    return False


def _host_copy_test(test: cst.BaseExpression) -> Optional[bool]:
    """`seq_lens_cpu is not None` -> True, `cu_seqlens_host is None` -> False: a test of whether a host copy (a
    `*_cpu`/`*_host` name) was given; None for any other test."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None"
            and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))):
        return None
    if not sem.named_host_side(dotted_name(test.left) or ""):
        return None
    return isinstance(test.comparisons[0].operator, cst.IsNot)
