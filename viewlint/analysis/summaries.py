"""What the functions of one module do with values: the module's call graph, read as evidence.

Real code rarely annotates, but it calls its own helpers: `pieces = self._split(batch)`,
`token.set_embedding(name, row)`, `self.write_queue.put(entry)` in one method and
`self.write_queue.get()` in another. `ModuleSummaries` answers, on demand and once each:

- what a call of a function or method defined in this module returns, given the values of
  its arguments (`call_value`): the callee is walked (without rules) with those values bound
  to its parameters, and views of a parameter come back as views of the argument;
- what the callers in this module pass to a function (`entry_values`): each caller is walked
  once, with what its own callers pass (up to `CALLER_LEVELS` calls up), and the arguments of
  its calls are recorded, in the callee's names where one argument is a view of another
  (`f(k=buffer[:, :n], qkv=buffer)`: inside `f`, `k` is a view of `qkv`);
- what a class keeps in `self.<attr>` across its methods (`attribute_value`): what they
  assign and what they add to it (`self.queue.put(x)`).

Calls resolve through names only: a module-level function, `self.method` in its class,
`Class.method`, `Class(...)` (its `__init__`), `self.attr.method` when `attr` holds an
instance of a class defined here, `self.attr(...)` and the loop variable over a `ModuleList`
of such instances (their `forward`), and `obj.method` when exactly one class here defines a
method of that name. Functions not parsed with libcst yet (the prefilter keeps only what
rules can fire in) are parsed on demand, alone, so both paths give the same facts.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Optional

import libcst as cst

from viewlint.analysis import stack
from viewlint.analysis.annotations import UNTYPED_CONTAINERS, annotation_value
from viewlint.analysis.callgraph import (CALLER_LEVELS, MAIN_BLOCK, MAX_CALLER_LINES, MAX_CALLERS, MAX_SUMMARY_LINES, MAX_TUPLE_SUMMARY_LINES,
                                         CallGraph, FunctionInfo, FunctionKey)
from viewlint.analysis.renaming import as_called, normalize, rebase, related
from viewlint.analysis.returns import assigned_locals, host_annotation, made_inside
from viewlint.analysis.contexts import Context
from viewlint.analysis.dispatch import is_abstract
from viewlint.analysis.evaluator import Evaluator
from viewlint.analysis.module_index import ClassInfo, ModuleIndex
from viewlint.analysis.project import Project
from viewlint.analysis.nodes import dotted
from viewlint.analysis.tree import descendants, dotted_name, parse_module
from viewlint.analysis.twins import register as register_twins
from viewlint.analysis.bindings import tensor_annotation
from viewlint.analysis import semantics as sem
from viewlint.analysis.value_ops import MODULE_OUTPUT, Locals
from viewlint.analysis.values import (HOST, INT, INTERFACE, UNKNOWN, UNKNOWN_TENSOR, Device, Kind, Provenance, Value,
                                      join, join_all, rank_floor, referenced_function, shape_of)

if TYPE_CHECKING:
    from viewlint.analysis.facts import Facts
    from viewlint.settings import Settings


@dataclass
class RunResult:
    """What one walk of a function found."""

    returns: Value = UNKNOWN
    returned: bool = False
    # self.<attr> -> what the function assigns to it / adds to it (`self.x.append(v)`, `self.x[k] = v`)
    assigned: dict[str, Value] = field(default_factory=dict)
    added: dict[str, Value] = field(default_factory=dict)
    # callee -> one {parameter: argument value} per call
    calls: dict[FunctionKey, list[dict[str, Value]]] = field(default_factory=dict)


_EMPTY = RunResult()


def _through_interface(call: cst.Call, evaluator: Evaluator, local: Locals) -> bool:
    """`call` calls a name that holds one implementation of an interface (`attention_interface(...)`)."""
    func = call.func
    if not isinstance(func, cst.Name):
        return False
    held = local[func.value] if func.value in local else evaluator.env.lookup(func.value)
    return held.host_type == INTERFACE


def _container_read(node: cst.BaseExpression) -> Optional[str]:
    """`self._cache` for `self._cache[key]`, `_CACHE` for `_CACHE[key]`; None for anything else."""
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        return dotted_name(node.value)
    return None


def memo_containers(function: cst.FunctionDef) -> frozenset[str]:
    """The containers (`self._cache`, a module-level dict) the function looks a key up in and stores a value
    into by key (`if key in self._cache: ...`, `self._cache[key] = result`): a `return self._cache[key]` in it
    hands back such a stored value. (A tensor buffer is written by index, never asked `key in buffer`.)"""
    stored, asked = set(), set()
    for node in descendants(function.body):
        kind = type(node)
        if kind is cst.AssignTarget:
            name = _container_read(node.target)  # type: ignore[attr-defined]
            if name is not None:
                stored.add(name)
        elif kind is cst.ComparisonTarget and type(node.operator) in (cst.In, cst.NotIn):  # type: ignore[attr-defined]
            name = dotted_name(node.comparator)  # type: ignore[attr-defined]
            if name is not None:
                asked.add(name)
    return frozenset(stored & asked)


class Recorder:
    """Rides along a summary walk like a rule: records returns, `self` stores and calls."""

    code = "summary"

    def __init__(self, summaries: "ModuleSummaries", facts: "Facts") -> None:
        self.summaries = summaries
        self.facts = facts
        self.result = RunResult()
        self._depth = 0
        self._yields: Optional[Value] = None
        self.record_calls = False  # only the walks that tell callees what they are passed
        self._memos: frozenset[str] = frozenset()  # containers the function stores into by key (its memo)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._depth += 1
        if self._depth == 1:
            memo = self.summaries.index.memo  # once per module: every walk of the function asks again
            key = ("memo containers", id(node))
            found = memo.get(key)
            if found is None or found[0] is not node:  # type: ignore[index]
                found = memo[key] = (node, memo_containers(node))
            self._memos = found[1]  # type: ignore[index]

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._depth -= 1

    def visit_Return(self, node: cst.Return) -> None:
        if self._depth != 1 or self.facts.contexts.never_eager:
            return  # a nested function's return; one an eager run never reaches (`if is_compiling(): return x`)
        if node.value is not None and self._memos and _container_read(node.value) in self._memos:
            # `if key in self._cache: return self._cache[key]`: what an earlier call of this function stored
            # there, which its other returns say.
            return
        value = self.facts.value_of(node.value) if node.value is not None else HOST
        result = self.result
        result.returns = value if not result.returned else join(result.returns, value)
        result.returned = True

    def visit_Yield(self, node: cst.Yield) -> None:
        if self._depth != 1 or node.value is None:
            return  # (`yield from items` yields what iterating `items` gives)
        value = self.facts.evaluator.iterate(node.value.item, {}) if isinstance(node.value, cst.From) else self.facts.value_of(node.value)
        self._yields = value if self._yields is None else join(self._yields, value)
        generator = Value(kind=Kind.WRAPPER, wrapper="iterator", elements=(self._yields,))
        self.result.returns, self.result.returned = generator, True

    def visit_Call(self, node: cst.Call) -> None:
        if not self.record_calls:
            return
        info = self.summaries.resolve(node, self.facts.evaluator, {})
        function = self.facts.contexts.function
        graph = self.summaries.callgraph
        if info is not None:
            keys = [info.key, *graph.overrides(info.key)]
        elif function is None:
            keys = []
        elif isinstance(node.func, cst.Name):  # `run = _a if c else _b; run(x)`
            keys = graph.chosen_functions(FunctionKey(function.class_name, function.name), node.func.value)
        elif isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name) and node.func.value.value == "self":
            # `self.metric_fn(...)` of `self.metric_fn = metric_fn`, which the constructions set to one function or
            # another: the call hands its arguments to each.
            keys = graph.held_functions(function.class_name, node.func.attr.value) \
                or [chosen.key for chosen in self.summaries.chosen_instances(node, self.facts.evaluator)]
        else:
            keys = []
        targets = [self.summaries.functions.get(key) for key in keys]
        for target in targets:
            if target is not None:
                arguments = self.summaries.bind_arguments(node, target, self.facts.evaluator, {})
                self.result.calls.setdefault(target.key, []).append(related(arguments, self.facts.outlives_function))

    def assigned(self, attribute: str, value: Value) -> None:
        found = self.result.assigned
        found[attribute] = join(found[attribute], value) if attribute in found else value

    def added(self, attribute: str, value: Value) -> None:
        found = self.result.added
        found[attribute] = join(found[attribute], value) if attribute in found else value


class ModuleSummaries:
    """On-demand, memoized facts about the functions and classes of one module."""

    def __init__(self, index: ModuleIndex, module: cst.Module, settings: "Settings",
                 callgraph: Optional[CallGraph] = None, project: Optional[Project] = None) -> None:
        self.index = index
        self.project = project if project is not None else Project(None)
        self.module = module
        self.settings = settings
        self.callgraph = callgraph if callgraph is not None else CallGraph(index)
        self.functions = self.callgraph.functions
        self._cst_nodes: Optional[dict[FunctionKey, cst.FunctionDef]] = None
        # (function, arguments, shallow, what a caller's callers pass) -> the walk's result
        self._runs: dict[tuple[FunctionKey, tuple[tuple[str, Value], ...], bool,
                               Optional[tuple[tuple[str, Value], ...]]], RunResult] = {}
        self._active: list[FunctionKey] = []
        self._entries: dict[tuple[FunctionKey, int], Optional[dict[str, Value]]] = {}
        self._attributes: dict[tuple[str, str], Optional[Value]] = {}
        self._lines: Optional[list[str]] = None
        self._tuples: dict[FunctionKey, bool] = {}

    # ------------------------------------------------------------------ resolving calls
    def resolve(self, call: cst.Call, evaluator: Evaluator, local: Locals) -> Optional[FunctionInfo]:
        """The function or method of this module that `call` calls, when its names say so."""
        func = call.func
        functions = self.functions
        if isinstance(func, cst.Name):
            name = func.value
            held = local[name] if name in local else evaluator.env.lookup(name)
            reference = referenced_function(held)
            if reference is not None:
                return functions.get(FunctionKey(*reference))  # `fn = helper; fn(x)`: runs `helper`
            if held.kind is not Kind.UNKNOWN or name in local:
                # A local name shadows the module's function; an instance of a class of this module
                # (`extractor = Extractor(); extractor(x)`) runs its `forward` (or `__call__`).
                return self._called_instance(self.instance_class(held))
            info = functions.get(FunctionKey(None, name))
            if info is not None:
                return info
            if name in self.index.classes or (name == "cls" and evaluator.env.class_name):  # `cls(...)`: this class's
                return functions.get(FunctionKey(evaluator.env.class_name if name == "cls" else name, "__init__"))
            return None
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        receiver = dotted_name(func.value)
        owner: Optional[str] = None
        if receiver in ("self", "cls"):
            owner = self.callgraph.defining_class(evaluator.env.class_name, method)
            held = self.callgraph.held_functions(evaluator.env.class_name, method) if owner is None else []
            if len(held) == 1 and receiver == "self":
                return self.functions.get(held[0])  # `self.attn_fn(self, q, k, v)` of `self.attn_fn = attn_fn`
            if owner is None and receiver == "self":
                # `self.encoder(x)`: a submodule of a class of this module runs its `forward`.
                info = self.index.classes.get(evaluator.env.class_name or "")
                return self._called_instance(info.attribute_classes.get(method) if info is not None else None)
        elif receiver is not None and receiver in self.index.classes:
            owner = self.callgraph.defining_class(receiver, method)  # `DistSpecManager._shard_as(...)`
        elif receiver is not None and receiver.startswith("self.") and receiver.count(".") == 1:
            info = self.index.classes.get(evaluator.env.class_name or "")
            held = info.attribute_classes.get(receiver[5:]) if info is not None else None
            owner = self.callgraph.defining_class(held, method) if held else None
        elif receiver is not None and "." not in receiver and receiver in self.index.module_instances:
            owner = self.callgraph.defining_class(self.index.module_instances[receiver], method)
        if owner is None and receiver not in ("self", "cls"):
            held = evaluator.evaluate(func.value, local)
            instance = self.instance_class(held)
            owner = self.callgraph.defining_class(instance, method) if instance is not None \
                else self.unique_method_owner(method, held, receiver)
        return functions.get(FunctionKey(owner, method)) if owner is not None else None

    def _called_instance(self, class_name: Optional[str]) -> Optional[FunctionInfo]:
        """What calling an instance of `class_name` runs: a module's `forward`, another object's `__call__`."""
        key = self.callgraph.called_instance(class_name)
        return self.functions.get(key) if key is not None else None

    def _annotated_return(self, info: FunctionInfo) -> Optional[Value]:
        """What a function's return annotation says it returns (None without one, or when it says nothing)."""
        if info.returns is None:
            return None
        try:
            annotation = cst.parse_expression(ast.unparse(info.returns))
        except Exception:  # an annotation libcst cannot read back
            return None
        value = annotation_value(annotation, self.index)
        return value if value.kind is not Kind.UNKNOWN else None

    def instance_class(self, value: Value) -> Optional[str]:
        """The class of this module `value` is an instance of (`d = Dumper()`, `m: Extractor`), or None."""
        name = value.wrapper if value.kind in (Kind.WRAPPER, Kind.HOST) else None
        return name if name is not None and name in self.index.classes else None

    def class_named(self, reference: str) -> Optional[ClassInfo]:
        """The class a name in this module refers to: one defined here, or one imported from another
        module of the project (read from that module)."""
        found = self.class_and_index(reference)
        return found[0] if found is not None else None

    def class_and_index(self, reference: str) -> Optional[tuple[ClassInfo, ModuleIndex]]:
        """`class_named`'s class, with the index of the module that defines it (where its annotations are read)."""
        local = self.index.classes.get(reference)
        if local is not None:
            return local, self.index
        if "." in reference:
            return None
        return self.project.imported_class(self.index, reference)

    def nth_field_value(self, class_name: str, n: int) -> Optional[Value]:
        """What item `n` of an instance of a dataclass-like class (of this module or imported) is, as the class annotates
        its `n`-th field (`outputs[0]` of `outputs: Seq2SeqModelOutput`: `last_hidden_state: torch.FloatTensor | None`);
        None when the class or the field is not known, or the annotation says nothing."""
        found = self.class_and_index(class_name)
        if found is None:
            return None
        info, index = found
        if not info.is_dataclass_like or n >= len(info.fields) or info.fields[n] not in info.field_annotations:
            return None
        try:
            value = annotation_value(cst.parse_expression(info.field_annotations[info.fields[n]]), index)
        except Exception:  # noqa: BLE001 - an annotation libcst cannot read back
            return None
        return value if value.kind is not Kind.UNKNOWN else None

    def unique_method_owner(self, method: str, receiver: Value, name: Optional[str] = None) -> Optional[str]:
        """The one class of this module that defines `method`, for a receiver of unknown type (named `name`, when
        it is a name: see `CallGraph.unique_method_owner`)."""
        return self.callgraph.unique_method_owner(method, name) if receiver.kind is Kind.UNKNOWN else None

    def bind_arguments(self, call: cst.Call, info: FunctionInfo, evaluator: Evaluator, local: Locals) -> dict[str, Value]:
        """{parameter: value} for one call; parameters left to their defaults get the default's value."""
        bound: dict[str, Value] = {}
        positional = [a for a in call.args if a.keyword is None]
        for i, arg in enumerate(positional):
            if arg.star:
                break  # `f(*args)`: the rest is unknown
            if i < len(info.positional):
                bound[info.positional[i]] = _argument_value(arg.value, evaluator, local)
                _hand_on_fields(bound, info.positional[i], arg.value, evaluator)
        names = set(info.positional) | set(info.keyword_only)
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in names:
                bound[arg.keyword.value] = _argument_value(arg.value, evaluator, local)
                _hand_on_fields(bound, arg.keyword.value, arg.value, evaluator)
        if not any(a.star for a in call.args):
            for name, default in info.defaults.items():
                if name not in bound:
                    bound[name] = _default_value(default)
        return bound

    # ------------------------------------------------------------------ what calls return
    def call_value(self, call: cst.Call, evaluator: Evaluator, local: Locals) -> Optional[Value]:
        """The value a call of a function of this module returns, or None when it calls something else."""
        info = self.resolve(call, evaluator, local)
        if info is not None:
            return self._call_of(info, call, evaluator, local)
        chosen = self.chosen_instances(call, evaluator) or self.chosen_methods(call, evaluator, local)
        found = [self._call_of(info, call, evaluator, local) for info in chosen]
        # `self.attn(x)` of an attribute built from a choice of classes: what any of their `forward`s returns.
        return join_all(found) if found and all(f is not None for f in found) else None  # type: ignore[arg-type]

    def chosen_methods(self, call: cst.Call, evaluator: Evaluator, local: Locals) -> list[FunctionInfo]:
        """What `layer.update(k, v)` may run when `layer` is an instance of one of several classes of this module
        (`layers: list[CacheLayer | LinearLayer]`, `self.layers[i]`): the method of each that has one. A class
        without it is not the one (the call would raise); a class this module cannot read leaves it unknown."""
        func = call.func
        if not isinstance(func, cst.Attribute) or dotted_name(func.value) in ("self", "cls", "super"):
            return []
        held = evaluator.evaluate(func.value, local)
        classes = (held.wrapper or "").split("|") if held.kind is Kind.HOST else []
        if len(classes) < 2 or not all(c in self.index.classes for c in classes):
            return []
        method = func.attr.value
        found: list[FunctionInfo] = []
        for class_name in classes:
            owner = self.callgraph.defining_class(class_name, method)
            if owner is not None:
                found.append(self.functions[FunctionKey(owner, method)])
            elif not self.callgraph.lacks_method(class_name, method):
                return []
        return list({id(info): info for info in found}.values())

    def chosen_instances(self, call: cst.Call, evaluator: Evaluator) -> list[FunctionInfo]:
        """What `self.<attr>(...)` may run when the class built `self.<attr>` from a choice of its module's classes
        (`attention_class = A if cross else B; self.attn = attention_class(config)`): each one's `forward`."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return []
        info = self.index.classes.get(evaluator.env.class_name or "")
        choices = info.attribute_class_choices.get(func.attr.value, ()) if info is not None else ()
        found = [self._called_instance(choice) for choice in choices]
        return found if all(found) else []  # type: ignore[return-value]  # each one's, or none known

    def instance_call_value(self, call: cst.Call, class_name: str, evaluator: Evaluator, local: Locals) -> Optional[Value]:
        """What calling an instance of `class_name`, a class of this module, returns (its `forward`), or None."""
        if class_name not in self.index.classes:
            return None
        info = self._called_instance(class_name)
        return self._call_of(info, call, evaluator, local) if info is not None else None

    def _call_of(self, info: FunctionInfo, call: cst.Call, evaluator: Evaluator, local: Locals) -> Optional[Value]:
        if info.key.name == "__init__":
            return None  # a constructor: the evaluator reads the object it builds
        found = [self._call_of(self.functions[k], call, evaluator, local) for k in self.callgraph.overrides(info.key)]
        if found:  # a stub of a base class: `self.m(...)` runs a subclass's `m`, one of them
            return join_all(found) if all(f is not None for f in found) else None  # type: ignore[arg-type]
        if not info.returns_value and info.returns is not None and not host_annotation(info.returns):
            # An abstract method (`def update(...) -> tuple[torch.Tensor, torch.Tensor]: ...`, or one that raises
            # `NotImplementedError`): what its subclasses return, as it is annotated.
            annotated = self._annotated_return(info)
            if annotated is not None:
                return annotated
        if not info.returns_value or host_annotation(info.returns):
            # No `return <value>` or `yield`, or annotated to return a plain Python value; a stub others implement
            # returns what they do.
            return UNKNOWN if info.key.owner is not None and not host_annotation(info.returns) and is_abstract(info.node) else HOST
        if info.key in self.callgraph.recursive:
            return UNKNOWN  # recursion: not followed
        arguments = self.bind_arguments(call, info, evaluator, local)
        normalized, bases = normalize(arguments)
        shallow = bool(getattr(evaluator.env, "shallow", False))
        result = self.run(info, normalized, shallow=shallow)
        if not result.returned and not shallow and MAX_SUMMARY_LINES < info.lines <= MAX_CALLER_LINES:
            # Too long to walk once per call (a layer's `forward`): what it returns on its one walk of its own, with
            # what its annotations and its callers here say of its parameters (the walk that records its calls).
            # Only how many dimensions the call's tensors have goes in (a layer's output rank is its input's): one walk
            # per shape of call, not one per call.
            ranks = {p: Value(kind=Kind.TENSOR, **shape_of(v)) for p, v in normalized.items() if v.is_tensor and rank_floor(v)}
            walked = self.run(info, {}, entry=ranks or None)
            if walked.returned:
                walked = RunResult(returns=as_called(walked.returns, bases, {*info.positional, *info.keyword_only}), returned=True)
            result = walked
        if result.returned:
            result = replace(result, returns=self.made_inside(info, result.returns))
        if result.returned and _through_interface(call, evaluator, local):
            # One implementation of an interface (`attention_interface(...)`, eager or a kernel's): the first
            # thing it returns is what every implementation returns; the rest (weights or `None`) is not claimed.
            # That it is a tensor is all: where it lives, its layout and whether it is a view are each
            # implementation's own business (a kernel's takes a `device=`, pads to an alignment).
            returned = result.returns
            name = call.func.value  # type: ignore[attr-defined]
            claimed = UNKNOWN_TENSOR.with_(why=f"returned by `{name}(…)` (as by `{info.key.name}`)")
            if returned.kind is Kind.WRAPPER and returned.wrapper == "tuple" and returned.elements:
                first = claimed if returned.elements[0].kind is Kind.TENSOR else UNKNOWN
                return Value(kind=Kind.WRAPPER, wrapper="tuple", elements=(first, *(UNKNOWN for _ in returned.elements[1:])))
            return claimed if returned.kind is Kind.TENSOR else UNKNOWN
        if not result.returned:
            owner = self.index.classes.get(info.key.owner or "")
            if info.key.name == "forward" and owner is not None:
                # A module's `forward` too long to summarise: what its return annotation says (a `ModelOutput`
                # class, a tuple: not a tensor), else what any module gives (the evaluator's).
                annotated = self._annotated_return(info)
                return annotated if annotated is not None and annotated.kind is not Kind.TENSOR else None
            # Any other function too long to walk once per call: a tensor (or a tuple) where its annotation says so.
            annotated = self._annotated_return(info)
            return annotated if annotated is not None and (annotated.is_tensor or annotated.wrapper == "tuple") else UNKNOWN
        return self.as_annotated(info, rebase(result.returns, bases))

    def made_inside(self, info: FunctionInfo, returned: Value) -> Value:
        """`returned` with the views of what `info`'s function made itself named for it (`returns.made_inside`)."""
        memo_key = ("assigned", info.key)
        bound = self.callgraph.memo.get(memo_key)
        if bound is None:
            bound = self.callgraph.memo[memo_key] = assigned_locals(info)
        what = f"{info.key.owner}.{info.key.name}" if info.key.owner else info.key.name
        return made_inside(returned, bound, what)

    def as_annotated(self, info: FunctionInfo, returned: Value) -> Value:
        """What a walk found a function returns, where its return annotation says more: `-> torch.Tensor` of a
        function that returns what a caller's `kwargs` held on one path and a tensor it makes on the other is a
        tensor on every path (what the walk knows of it, its views and layout, stays)."""
        if info.returns is None or not (returned.optional or returned.kind is Kind.UNKNOWN
                                         or returned.kind is Kind.WRAPPER and returned.elements):
            return returned
        annotated = self._annotated_return(info)
        if annotated is None or any(isinstance(n, ast.Constant) and n.value is None
                                    or isinstance(n, (ast.Name, ast.Attribute)) and (n.id if isinstance(n, ast.Name) else n.attr) == "Optional"
                                    for n in ast.walk(info.returns)):
            return returned  # none, or one that admits `None`

        def settled(found: Value, said: Value) -> Value:
            # Not where the walk saw `None` or a number on a path (`encoder_hidden_states = None` in a block's last
            # layer, under `-> tuple[Tensor, Tensor]`): the code says more than the annotation there.
            settles = said.is_tensor and found.is_tensor and (not found.optional or found.beyond_none)
            return found.with_(optional=False, beyond_none=False) if settles else found

        if annotated.is_tensor:
            return annotated if returned.kind is Kind.UNKNOWN else settled(returned, annotated)
        if annotated.kind is Kind.WRAPPER and annotated.wrapper == "tuple" and returned.kind is Kind.WRAPPER \
                and returned.wrapper == "tuple" and len(returned.elements) == len(annotated.elements):
            # Item by item, and only where the walk found a tensor on some path: `-> tuple[Tensor, Tensor]` of an
            # attention that returns `None` weights from most kernels says nothing of the weights.
            return returned.with_(elements=tuple(settled(f, a) for f, a in zip(returned.elements, annotated.elements)))
        return returned

    def run(self, info: FunctionInfo, arguments: dict[str, Value], shallow: bool = False,
            entry: Optional[dict[str, Value]] = None) -> RunResult:
        """Walk `info`'s function (no rules) with `arguments` bound to its parameters; memoized.
        A caller's walk (no arguments) may be given `entry`: what its own callers pass, which its
        parameters take as its own walk takes them.

        Each walk depends only on the function, the arguments, `entry` and `shallow` (a walk that
        answers `attribute_value` does not ask for other attributes' values), never on what was
        asked before, so the prefilter's path and the full path learn the same facts."""
        given = tuple(sorted(entry.items(), key=lambda item: item[0])) if entry else None
        key = (info.key, tuple(sorted(arguments.items(), key=lambda item: item[0])), shallow, given)
        found = self._runs.get(key)
        if found is not None:
            return found
        if info.key in self._active:
            return _EMPTY  # recursion the module's call graph did not show (a safety net)
        limit = MAX_CALLER_LINES if not arguments and not shallow else MAX_SUMMARY_LINES
        if info.lines > limit and not (limit == MAX_SUMMARY_LINES and not shallow
                                       and info.lines <= MAX_TUPLE_SUMMARY_LINES and self._returns_tuples(info)):
            self._runs[key] = _EMPTY
            return _EMPTY
        node = self.cst_function(info)
        if node is None:
            self._runs[key] = _EMPTY
            return _EMPTY
        from viewlint.analysis.facts import Facts
        from viewlint.analysis.walker import Walker

        facts = Facts(self.module, self.settings, self.index, summaries=self)
        facts.entry_values = dict(arguments)
        facts.callers_pass = dict(entry) if entry and not arguments else None
        facts.shallow = shallow
        recorder = Recorder(self, facts)
        recorder.record_calls = not arguments and not shallow
        facts.recorder = recorder
        if info.key.owner is not None:
            facts.contexts.classes.append(info.key.owner)
            facts.contexts.contexts.append(Context(kind="class", name=info.key.owner))
            facts._scopes.append({})
        self._active.append(info.key)
        register_twins(self.index.memo, node, info.node)
        try:
            Walker(facts, [recorder]).walk(node)  # type: ignore[list-item]
        except RecursionError:
            stack.ran_out()
        finally:
            self._active.pop()
            facts.close()
        self._runs[key] = recorder.result
        return recorder.result

    def _returns_tuples(self, info: FunctionInfo) -> bool:
        found = self._tuples.get(info.key)
        if found is None:
            found = self._tuples[info.key] = _returns_tuples(info)
        return found

    # ------------------------------------------------------------------ what callers pass
    def entry_values(self, owner: Optional[str], name: str) -> Optional[dict[str, Value]]:
        """{parameter: the join of what this module's callers pass}, for a function's own walk.

        Evidence travels down chains of calls (`forward` -> `self.attn(x, lens)` -> a method -> a helper):
        each caller is walked with what its own callers pass, up to CALLER_LEVELS calls up. Level by level
        (`_entry(key, level)` asks only level - 1), so what a function learns never depends on the order
        the questions came in."""
        return self._entry(FunctionKey(owner, name), CALLER_LEVELS)

    def _entry(self, key: FunctionKey, level: int) -> Optional[dict[str, Value]]:
        if level <= 0:
            return None
        memo = (key, level)
        if memo in self._entries:
            return self._entries[memo]
        info = self.functions.get(key)
        self._entries[memo] = None
        # Parameters without an annotation take what the callers pass; annotated ones only the device it is on
        # (an annotation is not a device: `sigma: torch.Tensor` that every caller builds on the host).
        if info is None or not (set(info.positional) | set(info.keyword_only)):
            return None
        if not (set(info.positional) | set(info.keyword_only)) - info.annotated and not _tensor_annotated(info.node, self.index):
            return None  # every parameter annotated, none as a tensor: the callers add nothing
        values: dict[str, Value] = {}
        bases: dict[str, set[str]] = {}
        calls = 0
        fields_set: dict[str, int] = {}  # `item.embeddings`: in how many calls the caller set that field
        for caller_key in self.callgraph.callers.get(key, [])[:MAX_CALLERS]:
            caller = self.functions.get(caller_key)
            if caller is None or caller_key == key:
                continue
            # A recursive caller is walked as it stands: what reaches it through its own cycle is not level by level.
            passed = self._entry(caller_key, level - 1) if caller_key not in self.callgraph.recursive else None
            for arguments in self.run(caller, {}, entry=passed).calls.get(key, ()):
                calls += 1
                for parameter, value in arguments.items():
                    if "." in parameter:
                        fields_set[parameter] = fields_set.get(parameter, 0) + 1
                    if self._demo(caller_key):
                        # A script's demo runs on whatever device it has at hand: what it passes says what the
                        # values are (tensors, views), not where the function's real callers keep them.
                        value = _device_unknown(value)
                    elif value.guessed_cpu:
                        # On the CPU only by a guess from a name of the caller's (`grid_thw`, and what is computed
                        # from it): the guess is the name's, and the parameter has its own (its walk guesses again).
                        value = value.with_(device=Device.UNKNOWN, guessed_cpu=False)
                    values[parameter] = join(values[parameter], value) if parameter in values else value
                    if value.kind is Kind.TENSOR and value.base is not None:
                        bases.setdefault(parameter, set()).add(value.base)
        for field_name, count in fields_set.items():
            if count < calls:
                del values[field_name]  # a field some caller leaves as it was: nothing known of it
        parameters = set(info.positional) | set(info.keyword_only)
        for parameter, seen in bases.items():
            # A view of another parameter from one call (`_related`), of some other tensor from another: the join
            # kept one base; keep the other, or storing the view next to that parameter would look harmless.
            value = values.get(parameter)
            if value is None:
                continue  # a field some caller left as it was (dropped above)
            others = sorted(seen - parameters)
            if len(seen) > 1 and value.base in parameters and others:
                values[parameter] = value.with_(base=others[0])
        if not key.name.startswith("_") or key.name == "__call__":
            # A public function may be called from other modules too (`LinearMethod.apply(layer, x)` by the framework,
            # with any layout): the layout its callers here give it (a warm-up's `torch.zeros`) is no proof.
            values = {p: v.with_(contiguous=None) if v.kind is Kind.TENSOR and v.contiguous else v for p, v in values.items()}
        self._entries[memo] = values or None
        return self._entries[memo]

    def _demo(self, key: FunctionKey) -> bool:
        """The script's entry block, or a function only it calls (`if __name__ == "__main__": run(...)`, with `run`
        building the inputs): the demo that exercises the module, on whatever device it has at hand."""
        if key.name == MAIN_BLOCK:
            return True
        callers = self.callgraph.callers.get(key, [])
        # (A method the demo calls is the object's own, serving its real callers: `server.exposed_encode(images)`.)
        return key.owner is None and bool(callers) and all(caller.name == MAIN_BLOCK for caller in callers)

    # ------------------------------------------------------------------ what classes keep in `self`
    def attribute_value(self, owner: str, attribute: str) -> Optional[Value]:
        """What container `self.<attribute>` of class `owner` may hold: what its methods assign to it
        and add to it (`self.queue.put(entry)`). Other attributes: None (the index's facts do)."""
        key = (owner, attribute)
        if key in self._attributes:
            return self._attributes[key]
        info = self.index.classes.get(owner)
        if info is None or attribute not in info.container_attributes:
            self._attributes[key] = None
            return None
        value: Optional[Value] = None
        added: Optional[Value] = None
        for function_key in self.callgraph.self_touches.get(key, []):
            function = self.functions.get(function_key)
            if function is None:
                continue
            result = self.run(function, {}, shallow=True)
            if attribute in result.assigned:
                assigned = result.assigned[attribute]
                value = assigned if value is None else join(value, assigned)
            if attribute in result.added:
                item = result.added[attribute]
                added = item if added is None else join(added, item)
        if value is not None and added is not None and value.kind is Kind.WRAPPER:
            value = value.with_element(added)
        self._attributes[key] = value
        return value

    # ------------------------------------------------------------------ libcst nodes of functions
    def cst_function(self, info: FunctionInfo) -> Optional[cst.FunctionDef]:
        if self._cst_nodes is None:
            self._cst_nodes = {}
            for statement in self.module.body:
                if isinstance(statement, cst.FunctionDef):
                    self._cst_nodes[FunctionKey(None, statement.name.value)] = statement
                elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
                    for member in statement.body.body:
                        if isinstance(member, cst.FunctionDef):
                            self._cst_nodes[FunctionKey(statement.name.value, member.name.value)] = member
        found = self._cst_nodes.get(info.key)
        if found is None:
            found = self._parse_alone(info)
            if found is not None:
                self._cst_nodes[info.key] = found
        return found

    def _parse_alone(self, info: FunctionInfo) -> Optional[cst.FunctionDef]:
        """Parse one function from the module's text (a method keeps its indentation, inside a class)."""
        node = info.node
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])  # type: ignore[attr-defined]
        last = node.end_lineno or node.lineno  # type: ignore[attr-defined]
        if self._lines is None:
            from viewlint.prefilter import split_lines  # the prefilter imports the call graph this module uses

            # Rows as CPython counts them: str.splitlines also breaks at \x1c-\x1e, \x85, \u2028, \u2029.
            self._lines = [content + ending for content, ending in split_lines(self.index.source)]
        text = "".join(self._lines[first - 1:last])
        if not text.endswith(("\n", "\r")):
            text += "\n"
        indented = text[:1] in (" ", "\t")
        try:
            module = parse_module("class _:\n" + text if indented else text)
        except Exception:  # libcst cannot parse some valid code; nothing is known of it then
            return None
        statement = module.body[0] if module.body else None
        if info.key.name == MAIN_BLOCK and isinstance(statement, cst.If):
            # The `if __name__ == "__main__":` the call graph found (`guards.main_guard`), at its own lines.
            return _main_block_function(statement)
        if indented and isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            statement = statement.body.body[0] if statement.body.body else None
        return statement if isinstance(statement, cst.FunctionDef) else None


def _returns_tuples(info: FunctionInfo) -> bool:
    """Every `return` with a value in the function (nested ones too: a superset is enough) returns a tuple
    display or `None`, and one returns a tuple; it does not yield."""
    found = False
    for node in ast.walk(info.node):
        kind = type(node)
        if kind is ast.Return:
            value = node.value  # type: ignore[attr-defined]
            if type(value) is ast.Tuple:
                found = True
            elif value is not None and not (type(value) is ast.Constant and value.value is None):
                return False
        elif kind is ast.Yield or kind is ast.YieldFrom:
            return False
    return found


def _default_value(node: ast.AST) -> Value:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or node.value is None or isinstance(node.value, (str, float, bytes)):
            return HOST
        if isinstance(node.value, int):
            return INT
    return UNKNOWN


def _hand_on_fields(bound: dict[str, Value], parameter: str, node: cst.BaseExpression, evaluator: Evaluator) -> None:
    """An object passed by name goes with the fields the caller set on it: `item.embeddings = emb[0]` and then
    `self._remember(item)` binds `item.embeddings` (in the callee's name for the object) too."""
    if isinstance(node, cst.Name):
        for attr, value in evaluator.env.fields_of(node.value).items():
            bound[f"{parameter}.{attr}"] = value


def _argument_value(node: cst.BaseExpression, evaluator: Evaluator, local: Locals) -> Value:
    """What a call passes; a `*_cpu` name the code says nothing more of is a host value (the convention)."""
    value = evaluator.evaluate(node, local)
    if value.label is None and not isinstance(node, (cst.Name, cst.Attribute)) and (
            value.kind is Kind.TENSOR and value.provenance is not Provenance.VIEW
            or value.kind is Kind.WRAPPER and value.origin == MODULE_OUTPUT):
        # An unnamed tensor (`helper(model(batch))`): a view the callee returns of it is of what the call spells, as
        # of a name it were bound to first (`labelled`).
        value = value.with_(label=evaluator.short_source(node))
    if value.kind in (Kind.TENSOR, Kind.UNKNOWN) and value.device is Device.UNKNOWN:
        name = dotted_name(node)
        if name is not None and sem.looks_cpu_name(name):
            return value.with_(device=Device.CPU, guessed_cpu=not sem.named_host_side(name))
    return value


def _tensor_annotated(node: ast.AST, index: ModuleIndex) -> bool:
    """Some parameter of the function is annotated with a tensor type (whose device only callers can tell), a bare
    container (`per_category: dict`: what it holds only callers can tell), a dataclass of this module (`item:
    EmbeddingItem`: which of its fields are views, only callers can tell), or anything (`Any`, `object`)."""
    arguments = getattr(node, "args", None)
    if arguments is None:
        return False
    for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
        annotation = argument.annotation
        name = (dotted(annotation) or "").split(".")[-1] if annotation is not None else ""
        if annotation is not None and (tensor_annotation(annotation, arrays=False, index=index) or name in UNTYPED_CONTAINERS or name in ("Any", "object")
                                       or (name in index.classes and index.classes[name].is_dataclass_like)):
            return True
    return False


def _main_block_function(statement: cst.If) -> cst.FunctionDef:
    """`if __name__ == "__main__":`'s body, walked as the function the call graph made of it (MAIN_BLOCK)."""
    return cst.FunctionDef(name=cst.Name("_main_block"), params=cst.Parameters(), body=statement.body)


def _device_unknown(value: Value, depth: int = 3) -> Value:
    """`value` (and what it holds) with the CPU device it was built on forgotten."""
    elements = tuple(_device_unknown(e, depth - 1) for e in value.elements) if depth > 0 else value.elements
    if value.device is Device.CPU:
        return value.with_(device=Device.UNKNOWN, guessed_cpu=False, elements=elements)
    return value.with_(elements=elements) if elements != value.elements else value
