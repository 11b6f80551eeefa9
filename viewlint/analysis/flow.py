"""The flow's hooks: how `Facts` follows the walker through a function, statement by statement.

The walker (`viewlint.analysis.walker`) calls these `enter_*`/`leave_*`/`after_*` hooks in statement
order: they bind names at assignments, snapshot and join the environment around branches and loops,
enter hot and cold contexts, and seed a function's parameters from their annotations, docstrings,
callers and uses. The part of `Facts` (`viewlint.analysis.facts`) the walker drives, a class of its
own only to keep each file readable: `Facts` inherits it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Optional

import libcst as cst

from viewlint.analysis import semantics as sem
from viewlint.analysis.annotations import admits_none, annotation_value, docstring_rank, docstring_value
from viewlint.analysis.callgraph import FunctionKey
from viewlint.analysis.contexts import ContextStack, warns_and_leaves
from viewlint.analysis.hooks import hook_inputs, registered_hooks
from viewlint.analysis.host_detour import required_on_host
from viewlint.analysis.evaluator import Evaluator
from viewlint.analysis.annotation_classes import annotation_class, cst_annotation_class
from viewlint.analysis.module_index import ClassInfo, ModuleIndex
from viewlint.analysis.module_inputs import compared_with_constants, used_as_tensors
from viewlint.analysis.narrowing import none_test
from viewlint.analysis.rebinding import match_captures, stored_names
from viewlint.analysis.ranks import unpacked_ranks
from viewlint.analysis.tree import descendants, dotted_name, keyed_reference, own_nodes, stored_key, string_key
from viewlint.analysis.value_ops import ATTRIBUTE_CONTAINER, MODULE_OUTPUT, conditional_key, fields_mark, labelled, local_call_key, local_parameters_key, \
    never_eager
from viewlint.analysis.values import ARRAY_ITEM, HOST, UNKNOWN, UNKNOWN_TENSOR, Device, Kind, Value, join, join_all, rank_floor, shape_of

if TYPE_CHECKING:
    from viewlint.analysis.summaries import ModuleSummaries


class FlowHooks:
    """`Facts`' walking hooks (a mixin: `Facts` is the only class that inherits it)."""

    index: ModuleIndex
    summaries: Optional[ModuleSummaries]
    evaluator: Evaluator
    contexts: ContextStack
    recorder: Optional[Any]
    entry_values: Optional[dict[str, Value]]
    callers_pass: Optional[dict[str, Value]]
    _scopes: list[dict[str, Value]]
    _scope_nodes: list[cst.CSTNode]
    _statements: list[cst.CSTNode]
    _if_snapshots: list[dict[str, Value]]
    _loop_snapshots: list[dict[str, Value]]
    _parameter_classes: dict[str, str]
    _outer_parameter_classes: list[dict[str, str]]
    _subtree_cache: dict[tuple[str, int], tuple[cst.CSTNode, Any]]
    _sync_allowed: tuple[str, ...]
    _try_stores: list[set[str]]

    if TYPE_CHECKING:  # the rest of `Facts`, which this part calls
        @property
        def class_name(self) -> Optional[str]: ...
        def current_statement(self) -> Optional[cst.CSTNode]: ...
        def lookup(self, name: str) -> Value: ...
        def bind(self, name: str, value: Value) -> None: ...
        def bind_target(self, target: cst.BaseExpression, value: Value) -> None: ...
        def value_of(self, node: cst.BaseExpression) -> Value: ...
        def qualify(self, node: cst.BaseExpression) -> Optional[str]: ...
        def forget_layout(self, names: Iterable[str]) -> None: ...
        def _proves_layout(self) -> bool: ...

    # ------------------------------------------------------------------ walking hooks (called by Walker)
    def enter_module(self, node: cst.Module) -> None:
        self._scope_nodes.append(node)

    def enter_function(self, node: cst.FunctionDef) -> None:
        self.contexts.enter_function(node)
        scope: dict[str, Value] = {}
        params = [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]
        entry = self.entry_values
        actual = bool(entry)  # a summary walk: the values one call passes
        if actual:
            self.entry_values = None  # for this function only, not the ones nested in it
        elif self.callers_pass is not None:
            entry, self.callers_pass = self.callers_pass, None  # a caller's walk: what its own callers pass
        elif entry is None and self.summaries is not None and len(self._scopes) == 1 + (self.class_name is not None):
            entry = self.summaries.entry_values(self.class_name, node.name.value)
        docstring = node.get_docstring()  # types of the parameters not annotated, and shapes (`of shape `(b, s, d)``)
        inputs = self._module_inputs(node) or self._hook_inputs(node)
        self._outer_parameter_classes.append(self._parameter_classes)  # a nested function's own, while it is walked
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
                    and _never_a_tensor(passed) and (node.name.value.startswith("_") or (
                        self.class_name is not None and (passed.kind is Kind.ARRAY or passed.host_type == ARRAY_ITEM.host_type))):
                # A private helper every caller here passes a plain number, a tuple of numbers, an array
                # (`self._lengths(mask.shape[-1])`, `kernel=(1, 3, 3, 1)`), or a method its class's callers hand a
                # NumPy array (`log_probs.cpu().numpy()`, rows of it): what the callers pass beats the annotation.
                evidence, passed = passed, None
            if passed is not None and not actual and param.annotation is not None and evidence.kind is Kind.WRAPPER \
                    and evidence.wrapper in ("tuple", "list") and not evidence.optional and passed.is_tensor and not passed.optional \
                    and all(e.is_tensor or e.kind is Kind.UNKNOWN for e in evidence.elements):
                # `hidden_states: tuple[torch.Tensor] | None` that every caller here passes a tensor: a wrong annotation
                # real code has (the body normalises it as a tensor, too).
                evidence, passed = passed.with_(why=CALLERS_PASS), None
            if passed is not None and not actual and param.annotation is not None and evidence.is_tensor \
                    and passed.kind is Kind.WRAPPER and passed.wrapper in ("tuple", "list") and passed.elements \
                    and not passed.optional and passed.origin != MODULE_OUTPUT and all(e.is_tensor for e in passed.elements):
                # `position_embeddings: torch.Tensor = None` that every caller here passes a `(cos, sin)` tuple: the
                # other wrong annotation real code has (Gemma 3, SegFormer's decode head).
                evidence, passed = passed.with_(why=CALLERS_PASS), None
            if passed is not None and not actual and param.annotation is not None and evidence.kind is Kind.WRAPPER \
                    and not evidence.elements and not evidence.fields and passed.kind is Kind.WRAPPER and passed.elements \
                    and passed.wrapper in (None, evidence.wrapper):
                # `per_category: dict` says what holds the values; the callers here say what they are (row views).
                evidence, passed = passed.with_(why=CALLERS_PASS), None
            if passed is not None and not actual and param.annotation is not None and evidence.kind is not Kind.UNKNOWN:
                # Annotated: the annotation says what it is; the callers only say where it lives.
                if evidence.is_tensor and evidence.device is Device.UNKNOWN and passed.device is not Device.UNKNOWN \
                        and passed.kind in (Kind.TENSOR, Kind.UNKNOWN):
                    evidence = evidence.with_(device=passed.device, guessed_cpu=passed.guessed_cpu)
                evidence = self._shaped_as_passed(_sharing_as_passed(evidence, passed), passed, node)
                passed = None
            if passed is not None and passed.kind is Kind.UNKNOWN and passed.device is not Device.UNKNOWN \
                    and evidence.kind in (Kind.TENSOR, Kind.UNKNOWN) and evidence.device is Device.UNKNOWN:
                value = evidence.with_(device=passed.device, guessed_cpu=passed.guessed_cpu)  # every caller passes a `*_cpu` value
            elif passed is None or passed.kind is Kind.UNKNOWN:
                value = evidence
            elif actual:
                value = passed
            elif evidence.kind is Kind.UNKNOWN:
                value = passed.with_(why=CALLERS_PASS) if passed.is_tensor else passed
            else:
                # What the annotation (or the docstring, or the module's own use of it) says, and what this module's
                # callers pass; a type says nothing of where the tensor lives, so the callers say that (`loss` of
                # `update_average(loss, avg)` given every call's `fit_batch(batch)`, which returns `loss.detach().cpu()`).
                # (Not a module's input, which the model moves with the others, nor a guess from a name: what is computed
                # from `grid_thw` on the host is handed to the blocks on the device.)
                if evidence.is_tensor and evidence.device is Device.UNKNOWN and passed.is_tensor and not passed.guessed_cpu \
                        and name not in inputs:
                    evidence = evidence.with_(device=passed.device)
                value = self._shaped_as_passed(join(evidence, passed), passed, node)
            given = entry.get(name) if entry is not None else None
            if value.is_tensor and not actual and param.annotation is not None and admits_none(param.annotation.annotation) \
                    and not (given is not None and given.is_tensor and not given.optional and not given.may_be_none):
                # `mask: Tensor | None = None` that no caller here is seen to pass a tensor: a copy of it may be `None`.
                value = value.with_(may_be_none=True)
            scope[name] = labelled(value, name)
        for key, value in (entry or {}).items():
            head = key.split(".")[0]
            if "." in key and head in scope:
                scope[key] = value  # a field the callers set on the object they pass (`item.embeddings`)
                scope[fields_mark(head)] = UNKNOWN
        if node.params.star_arg is not None and isinstance(node.params.star_arg, cst.Param):
            scope[node.params.star_arg.name.value] = UNKNOWN
        self._scopes.append(scope)
        self._scope_nodes.append(node)

    def _module_inputs(self, node: cst.FunctionDef) -> dict[str, Value]:
        """The unannotated inputs of an `nn.Module`'s `forward` (or `forward_*`, `__call__`) or of an autograd
        `Function`'s `forward` and `backward`: activations, tensors on the module's device. Parameters with a non-`None` default (`use_cache=False`) or a
        flag's name (`return_dict`, `output_attentions`) are options, not inputs."""
        info = self.index.classes.get(self.class_name or "")
        name = node.name.value
        if info is None or not (info.is_module and name in ("forward", "__call__", "_forward")
                                or info.is_autograd_function and name in ("forward", "backward")):
            return {}  # (an autograd `Function`'s `forward(ctx, ...)`: what `.apply(...)` is given, after the context)
        key = ("module inputs", id(node), self.class_name)  # read once per function, not per summary walk of it
        known = self.index.memo.get(key)
        if known is not None and known[0] is node:  # type: ignore[index]
            return dict(known[1])  # type: ignore[index]
        compared = compared_with_constants(node)
        used = used_as_tensors(node, self.index, info, self._submodule_forward, self._module_function)
        found: dict[str, Value] = {}
        for param in [*node.params.params[1:], *node.params.kwonly_params]:
            pname = param.name.value
            no_default = param.default is None or (isinstance(param.default, cst.Name) and param.default.value == "None")
            if sem.is_module_input(pname, param.annotation is not None, no_default) and pname not in compared and pname in used:
                found[pname] = Value(kind=Kind.TENSOR, why=f"an input of `{self.class_name}.{name}`")
        self.index.memo[key] = (node, dict(found))  # type: ignore[index]
        return found

    def _hook_inputs(self, node: cst.FunctionDef) -> dict[str, Value]:
        """What PyTorch passes a function the module registers as a hook (`hooks.hook_inputs`)."""
        hooks = registered_hooks(self.index.tree, self.index.memo, self.index.source)
        if not hooks:
            return {}
        owner = self.class_name if self.class_name is not None and len(self._scopes) == 2 else None
        info = self.index.classes.get(owner or "") or ClassInfo(name="")
        return hook_inputs(node, owner, hooks, lambda: used_as_tensors(node, self.index, info, self._submodule_forward,
                                                                         self._module_function))

    def _submodule_forward(self, class_name: str) -> Optional[cst.FunctionDef]:
        """The `forward` of a module class of this module (what `self.<attr>(x)` runs), if the summaries have it."""
        info = self.summaries.functions.get(FunctionKey(class_name, "forward")) if self.summaries is not None else None
        return self.summaries.cst_function(info) if info is not None else None  # type: ignore[union-attr]

    def _module_function(self, name: str) -> Optional[cst.FunctionDef]:
        """A top-level function of this module (what `name(x)` runs), if the summaries have it."""
        info = self.summaries.functions.get(FunctionKey(None, name)) if self.summaries is not None else None
        return self.summaries.cst_function(info) if info is not None else None  # type: ignore[union-attr]

    def _annotated_classes(self, node: cst.FunctionDef, params: list[cst.Param]) -> dict[str, str]:
        """Parameter -> the class its annotation names, read off the function's `ast` twin when it has one."""
        if not any(p.annotation is not None for p in params):
            return {}
        own = self.contexts.ast_of(node)  # its `ast` twin
        if own is not None:
            arguments = own.args  # type: ignore[attr-defined]
            return {a.arg: found for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
                    if (found := annotation_class(a.annotation)) is not None}
        found: dict[str, str] = {}
        for param in params:
            if param.annotation is not None:
                reference = cst_annotation_class(param.annotation.annotation)
                if reference is not None:
                    found[param.name.value] = reference
        return found

    def _shaped_as_passed(self, evidence: Value, passed: Value, node: cst.FunctionDef) -> Value:
        """`evidence` (a parameter's own: its annotation, or its module's input) with the rank and the layout its
        callers here give it.

        Both describe the same value, so what the callers show is not lost in a join with a tensor of no known rank or
        layout. Only for a method (its callers here are what build its object) or a private function (its callers are
        all here): a public function of the module is an API other modules call too, with other shapes."""
        if not (evidence.is_tensor and passed.is_tensor and (self.class_name is not None or node.name.value.startswith("_"))):
            return evidence
        if evidence.rank is None and rank_floor(passed) > 0:
            evidence = evidence.with_(**shape_of(passed))
        if evidence.contiguous is None and passed.contiguous is not None:
            evidence = evidence.with_(contiguous=passed.contiguous)
        return evidence

    def parameter_value(self, param: cst.Param, docstring: Optional[str]) -> Value:
        """What a parameter is, from its annotation or its function's docstring."""
        value = UNKNOWN
        if param.annotation is not None:
            value = annotation_value(param.annotation.annotation, self.index)
        if value.kind is Kind.UNKNOWN:
            value = docstring_value(docstring, param.name.value)
        if value.is_tensor and value.rank is None:
            rank = docstring_rank(docstring, param.name.value)  # `of shape `(batch, seq_len, embed_dim)``
            if rank is not None:
                value = value.with_(rank=rank)
        return value

    def leave_function(self, node: cst.FunctionDef) -> None:
        returned = self._local_function_returns(node)
        if self._outer_parameter_classes:
            self._parameter_classes = self._outer_parameter_classes.pop()
        self.contexts.pop()
        self._scopes.pop()
        self._scope_nodes.pop()
        if returned is not None:
            # `def closure(): ...; return loss` inside a function: what a call of the name there returns.
            self._scopes[-1][local_call_key(node.name.value)] = returned
            params = node.params
            names = tuple(p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params))
            if names:
                # `def row(value): return value[i : i + 1]`: its calls rename what it returned of its parameters.
                self._scopes[-1][local_parameters_key(node.name.value)] = Value(kind=Kind.WRAPPER, wrapper="parameters",
                                                                                fields=names)

    def _local_function_returns(self, node: cst.FunctionDef) -> Optional[Value]:
        """For a function defined inside another one (not a generator, not `async`, no `*args` or `**kwargs`): the
        join of what its returns give, read where its walk ends. Its parameters hold there only what their
        annotations say: what it returns of them (a view of `value`, `value` itself) each call renames to what it
        passes (`calls`), and what depends on what a call passes is not known (`def sigma_fn(t): return
        t.neg().exp()` is on the device of its argument)."""
        # (`_scope_nodes` starts at the module in a module's walk, at the function in a summary's)
        if len(self._scope_nodes) < 2 or not isinstance(self._scope_nodes[-2], cst.FunctionDef) or node.asynchronous:
            return None
        params = node.params
        if params.star_kwarg is not None or isinstance(params.star_arg, cst.Param):
            return None
        returns: list[cst.Return] = []
        for child in own_nodes(node):
            if isinstance(child, (cst.Yield, cst.Await)):
                return None
            if isinstance(child, cst.Return):
                returns.append(child)
        return join_all([self.value_of(r.value) if r.value is not None else HOST for r in returns] or [HOST])

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
            if "[" not in name:  # `d["k"]` is narrowed inside one expression only: a store into `d` would not undo it
                self._scopes[-1][name] = value
        self.not_none(node.test, True)

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
            if "[" not in name:
                self._scopes[-1][name] = value
        self.not_none(node.test, False)

    def not_none(self, test: cst.BaseExpression, holds: bool) -> None:
        """Where `x is not None` holds (or `x is None` does not), a parameter annotated `Tensor | None` is not `None`:
        its `may_be_none` goes, and nothing else of what the scope holds changes (no rule reads the flag)."""
        checked = none_test(test)
        if checked is None or holds != checked[1] or type(checked[0]) is not cst.Name:
            return
        name = checked[0].value  # type: ignore[attr-defined]
        bound = self._scopes[-1].get(name)
        if bound is not None and bound.may_be_none:
            self._scopes[-1][name] = bound.with_(may_be_none=False)

    def leave_if(self, node: cst.If) -> None:
        self.contexts.pop()
        after_body = self._if_snapshots.pop()
        if _leaves(node.body) or never_eager(node.test):
            # `if torch.jit.is_scripting(): ...`: an eager run never takes the body; what it binds does not flow on.
            return  # `if isinstance(x, torch.Tensor): return ...`: after the `if`, only the other path goes on
        if isinstance(node.orelse, cst.Else) and _leaves(node.orelse.body):
            self._scopes[-1] = after_body
            return
        self._fill_in_absent(node, after_body)
        self._scopes[-1] = _join_scopes(after_body, self._scopes[-1])

    def _fill_in_absent(self, node: cst.If, after_body: dict[str, Value]) -> None:
        """`if position_bias is None: position_bias = torch.zeros(...)`: the body puts a tensor where the value is
        missing, so where it is not missing it is a tensor too (the code goes on using either the same way). Read only
        where nothing else is known of the value the `if` skips."""
        checked = none_test(node.test)
        if checked is None or checked[1] or type(checked[0]) is not cst.Name:
            return
        name = checked[0].value  # type: ignore[attr-defined]
        skipped, filled = self._scopes[-1].get(name), after_body.get(name)
        if skipped is None or filled is None or skipped.kind is not Kind.UNKNOWN or skipped.wrapper is not None \
                or skipped.elements or not filled.is_tensor or filled.optional:
            return
        self._scopes[-1][name] = labelled(UNKNOWN_TENSOR.with_(why=f"a tensor is put in `{name}` where it is `None`"), name)

    def push_statement(self, node: cst.CSTNode) -> None:
        self._statements.append(node)
        kind = type(node).__name__
        if kind in ("Try", "TryStar") and node.handlers:  # type: ignore[attr-defined]
            # (Whatever is known at the `try`: the body itself may prove a layout the handler cannot count on.)
            self._try_stores.append(stored_names(node.body))  # type: ignore[attr-defined]
        elif kind == "Match":
            for case in node.cases:  # type: ignore[attr-defined]
                for child in descendants(case.pattern):
                    for name in match_captures(child):
                        self.bind(name, UNKNOWN)

    def leave_block(self) -> None:
        block = self._blocks.pop()
        while self._cold_rests and self._cold_rests[-1] == id(block):
            self._cold_rests.pop()
            self.contexts.pop()

    def pop_statement(self) -> None:
        node = self._statements.pop()
        kind = type(node).__name__
        if kind in ("Try", "TryStar") and node.handlers:  # type: ignore[attr-defined]
            self._try_stores.pop()
            if self._proves_layout():
                self.forget_layout(stored_names(node))  # the body may have stopped half-way, then a handler ran
            if self._blocks and _leaves(node.body):  # type: ignore[attr-defined]
                # `try: return self._forward(x)` / `except RuntimeError: ...`: the rest of the block runs only after
                # a handler caught an error (an out-of-memory retry, a cache miss): the error path, as the handler is.
                self.contexts.enter_cold_block(node)
                self._cold_rests.append(id(self._blocks[-1]))
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
                if isinstance(target.target, cst.Name):
                    self._note_conditional(target.target.value, node.value)
                if not isinstance(target.target, (cst.Tuple, cst.List)):
                    continue
                # A name unpacked that may hold a shape (not a tuple of values): each of its bindings says whose.
                scope = self._scope_nodes[-1] if value.kind in (Kind.HOST, Kind.UNKNOWN) else None
                for shaped_name, rank in unpacked_ranks(target.target, node.value, scope):
                    # `b, s, _ = x.shape`: `x` is 3-D.
                    shaped = self.lookup(shaped_name) if "." not in shaped_name else UNKNOWN
                    if shaped.is_tensor and shaped.rank is None:
                        self.bind(shaped_name, shaped.with_(rank=rank))
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            value = self.value_of(node.value)
            if value.origin == MODULE_OUTPUT or value.kind is Kind.UNKNOWN:
                # `outputs: BaseModelOutputWithPast = self.model(...)`: what a module gives was a guess; the
                # annotation says which object it is (a class: not a tensor).
                annotated = annotation_value(node.annotation.annotation, self.index)
                if annotated.kind is Kind.HOST and annotated.wrapper is not None:
                    value = annotated
            elif value.kind is Kind.WRAPPER and value.wrapper in ("list", "dict") and not value.elements:
                # `rows: List[int] = []`, `by_size: Dict[Tuple[int, int], List[int]] = {}`, filled later: what the
                # annotation says they hold (lists of ints are indices that gather).
                annotated = annotation_value(node.annotation.annotation, self.index)
                ints = annotated.kind is Kind.INT_LIST and value.wrapper == "list"
                ints_by_key = annotated.kind is Kind.WRAPPER and annotated.wrapper == value.wrapper \
                    and any(e.kind is Kind.INT_LIST for e in annotated.elements)
                if ints or ints_by_key:
                    value = annotated
            self._assign_to(node.target, value)
        elif isinstance(node, cst.AugAssign):
            target = node.target
            if isinstance(target, cst.Name):
                old = self.lookup(target.value)
                if old.is_tensor and not old.optional:
                    return  # `x += y` on a tensor is in place: x keeps its storage
                value = self.value_of(cst.BinaryOperation(left=target, operator=_BINARY[type(node.operator)](), right=node.value)) \
                    if type(node.operator) in _BINARY else UNKNOWN
                if old.is_tensor:
                    # A tensor on some paths, a number on the others (`buckets = 0`, then `buckets += t` on one
                    # path): in place on the first (it keeps its storage), a new value on the others; with a tensor
                    # added, a tensor on every path now.
                    value = join(old.with_(optional=False), value) if value.is_tensor and not value.optional else join(old, value)
                self.bind_target(target, value)

    def _note_conditional(self, name: str, expression: cst.BaseExpression) -> None:
        """`x = a if flag else b`: what `x` holds where `flag` holds and where it does not, for a later `if flag:`
        (`TypeTests.narrowings` reads it while `x` still holds that join). Setting `flag` again forgets what it said."""
        if self.lookup(conditional_key(name)).kind is Kind.WRAPPER:
            self.bind(conditional_key(name), UNKNOWN)
        if not (isinstance(expression, cst.IfExp) and isinstance(expression.test, cst.Name)):
            return
        test = expression.test.value
        arms = (self.value_of(expression.body), self.value_of(expression.orelse), self.lookup(name))  # as bound (labelled)
        self.bind(conditional_key(test, name), Value(kind=Kind.WRAPPER, wrapper="conditional", elements=arms))
        known = self.lookup(conditional_key(test))
        names = known.fields if known.kind is Kind.WRAPPER else ()
        self.bind(conditional_key(test), Value(kind=Kind.WRAPPER, wrapper="conditional", fields=(*names, name)))

    def _assign_to(self, target: cst.BaseExpression, value: Value) -> None:
        if isinstance(target, cst.Subscript):
            reference = keyed_reference(target)
            self._add_to_container(target.value, value, string_key(target))
            if reference is not None:
                # `state["exp_avg"] = torch.zeros_like(p)` (on the first step only): what the key holds when read
                # later, on this call or on one after it, is a tensor, made the same way (not which one, nor a view);
                # a key also set to something else is not known.
                key = stored_key(reference)
                kept = UNKNOWN_TENSOR.with_(device=value.device, why=f"what `{reference}` is set to here") \
                    if value.is_tensor and not value.optional else UNKNOWN
                scope = self._scopes[-1]
                scope[key] = join(scope[key], kept) if key in scope else kept
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

    def required_on_host(self, copy: cst.Call) -> bool:
        """Whether the host copy `copy` is handed, in its statement or by the name it binds, where torch requires host
        data (`host_detour.HOST_ARGUMENTS`): the call would copy and wait itself."""
        functions = [c.node for c in self.contexts.contexts if c.kind == "function"]
        return required_on_host(copy, self.current_statement, functions[-1] if functions else None, self.qualify)

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
            if "[" not in name:
                self._scopes[-1][name] = value
        self.not_none(node.test, True)

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

    def _item_kind(self, container: cst.BaseExpression) -> Optional[str]:
        """The kind of container every item of the local `container` already is (`d[k] = {}`, then `d[k][c] = row`:
        "dict"), else None."""
        name = dotted_name(container)
        holder = self._scopes[-1].get(name) if name is not None else None
        if holder is None or holder.kind is not Kind.WRAPPER or not all(e.kind in (Kind.WRAPPER, Kind.INT_LIST) for e in holder.elements):
            return None
        kinds = {e.wrapper if e.kind is Kind.WRAPPER else INT_LIST_ITEMS for e in holder.elements}
        return kinds.pop() if len(kinds) == 1 else None

    def _add_to_container(self, container: cst.BaseExpression, value: Value, key: Optional[str] = None) -> None:
        """Record that `container` (or the container it is an item of: `d["k"][i] = v`) may hold `value`: the
        outer container holds an item that holds `value` (`cache["buffers"][name] = (buffer, value)`, then
        `for buffer, value in cache["buffers"].values()` unpacks the tuple, not the tensor in it). `key`: the key
        written out in `container["key"] = value`, which a mapping whose keys are known keeps apart."""
        if isinstance(container, cst.Subscript) or isinstance(container, cst.Call):
            key = None  # (the key is the innermost container's; the outer one holds that container)
        while isinstance(container, cst.Subscript) or isinstance(container, cst.Call) \
                and isinstance(container.func, cst.Attribute) and container.func.attr.value == "setdefault":
            # (`by_study.setdefault(key, {})[category] = row`: the item `setdefault` returns is in the outer one.)
            container = container.value if isinstance(container, cst.Subscript) else container.func.value  # type: ignore[attr-defined]
            item_kind = self._item_kind(container)
            if item_kind == INT_LIST_ITEMS:  # `by_size[k].append(i)` of `by_size[k] = [i]`: still a list of ints
                value = Value(kind=Kind.INT_LIST) if value.kind is Kind.INT else Value(kind=Kind.WRAPPER, elements=(value,), wrapper="list")
            else:
                value = Value(kind=Kind.WRAPPER, elements=(value,), wrapper=item_kind)
        name = dotted_name(container)
        if name is None:
            return
        if name.startswith("self.") and name.count(".") == 1 and self.recorder is not None:
            self.recorder.added(name[5:], value)
        if name in self._scopes[-1]:
            current = self._scopes[-1][name]
            if current.wrapper == ATTRIBUTE_CONTAINER:
                # `meta = self.meta`, then `meta["zero"] = t`: what the class keeps there, and now this too.
                current = self.evaluator.contents(current)
            if current.kind is Kind.WRAPPER:
                self._scopes[-1][name] = current.with_field(key, value) if key is not None else current.with_element(value)


# `_item_kind` of a container whose items are lists of ints (indices that gather).
INT_LIST_ITEMS = "int list"


_BINARY = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
    cst.BitAndAssign: cst.BitAnd, cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor,
    cst.MatrixMultiplyAssign: cst.MatrixMultiply, cst.PowerAssign: cst.Power,
}


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
    checked = none_test(test)
    if checked is None or not sem.named_host_side(dotted_name(checked[0]) or ""):
        return None
    return checked[1]


def _never_a_tensor(value: Value) -> bool:
    """A number, a host value, an array, or a list or tuple of those: on every path, no tensor."""
    if value.kind in (Kind.INT, Kind.INT_LIST, Kind.ARRAY) or (value.kind is Kind.HOST and value.wrapper is None):
        return not value.optional
    return value.kind is Kind.WRAPPER and bool(value.elements) and not value.optional \
        and all(_never_a_tensor(element) for element in value.elements)


# Why an unannotated parameter is believed a tensor: the callers' own reasons are theirs, not the parameter's.
CALLERS_PASS = "what this module's callers pass"
# What a view carries of the storage it shares: moved from what the callers pass onto an annotated parameter.
_SHARING_FIELDS = ("provenance", "base", "origin", "ownership_op", "base_made", "partial", "some_view")


def _sharing_as_passed(annotated: Value, passed: Value) -> Value:
    """An annotated parameter that this module's callers pass views (`_save(self, emb: dict[str, Tensor])` called with
    `{c: batch[c][i] for c in cats}`): the annotation says what it is, the callers what storage it shares. Only views
    move over; their layout does not (an annotated function may be called elsewhere with any)."""
    if annotated.kind is Kind.TENSOR and passed.kind is Kind.TENSOR and passed.retained_views():
        return annotated.with_(**{name: getattr(passed, name) for name in _SHARING_FIELDS})
    if annotated.kind is Kind.WRAPPER and passed.kind is Kind.WRAPPER and passed.retained_views() \
            and _mapping_kind(annotated) == _mapping_kind(passed):
        return passed.with_(why=annotated.why or passed.why)
    if annotated.kind is Kind.HOST and annotated.wrapper is not None and passed.kind is Kind.WRAPPER \
            and passed.wrapper == annotated.wrapper and passed.retained_views():
        return passed.with_(why=annotated.why or passed.why)  # `part: Part` that the callers build with `Part(ids=chunk)`
    return annotated


def _mapping_kind(value: Value) -> bool:
    return value.wrapper in ("dict", "ordereddict", "defaultdict") or any(value.fields)
