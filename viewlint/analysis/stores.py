"""Stores into long-lived places: which containers outlive a function, and what a statement keeps there.

The part of `Facts` (`viewlint.analysis.facts`) that the retention rules (VL101-VL104) ask:
`store_events`, `is_long_lived_container`, `pins_nothing_more`, `outlives_function`, ... A class
of its own only to keep each file readable: `Facts` inherits it, and its methods read the flow's
state and the rest of `Facts` (`value_of`, `lookup`, ...) through `self`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional

import libcst as cst

from viewlint.analysis import semantics as sem
from viewlint.analysis.retention import held_container, long_lived_receiver, receiver_name
from viewlint.analysis.contexts import ContextStack
from viewlint.analysis.evaluator import Evaluator
from viewlint.analysis.module_index import ClassInfo, ModuleIndex
from viewlint.analysis.tree import descendants, dotted_name, own_nodes, remembered
from viewlint.analysis.returns import made_inside_base
from viewlint.analysis.value_ops import MODULE_OUTPUT
from viewlint.analysis.values import UNKNOWN, Device, Kind, Value

if TYPE_CHECKING:
    from viewlint.analysis.summaries import ModuleSummaries
    from viewlint.settings import Settings


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
    # With `loop`: whether the list is handed back (else it is read after a loop over a data source, which it
    # outlives: `bank.append(model(x)[:, 0])` per batch, then `torch.cat(bank)`).
    handed_back: bool = True


class StoreQuestions:
    """`Facts`' answers about stores (a mixin: `Facts` is the only class that inherits it)."""

    settings: Settings
    index: ModuleIndex
    summaries: Optional[ModuleSummaries]
    evaluator: Evaluator
    contexts: ContextStack
    recorder: Optional[Any]
    _scopes: list[dict[str, Value]]
    _scope_nodes: list[cst.CSTNode]
    _parameter_classes: dict[str, str]

    if TYPE_CHECKING:  # the rest of `Facts`, which this part calls
        @property
        def class_name(self) -> Optional[str]: ...
        def lookup(self, name: str) -> Value: ...
        def value_of(self, node: cst.BaseExpression) -> Value: ...
        def short_source(self, node: cst.CSTNode, limit: int = 60) -> str: ...

    # ------------------------------------------------------------------ stores into long-lived places
    def is_long_lived_container(self, node: cst.BaseExpression) -> bool:
        """`self.<attr>` known to be a container, or a module-level container."""
        name = dotted_name(node)
        return name is not None and held_container(name, self.index, self.class_name or "", self._is_local)

    def _keeping_object(self, node: cst.BaseExpression) -> bool:
        """`cache[0] = piece` into an object or container named like a cache, a pool or a store, that the caller
        hands in (`cache: Optional[ArraysCache]`): it keeps what it is given past this call. Not a tensor (or what
        may be one: `kv_cache[slot] = k` copies into it) and not a container built here."""
        name = dotted_name(node)
        if name is None or name.startswith("self."):
            return False
        held = self.value_of(node)
        if held.kind not in (Kind.WRAPPER, Kind.HOST) or held.device is not Device.UNKNOWN:
            return False
        return self._long_lived_receiver(node, "__setitem__")

    def _is_local(self, name: str) -> bool:
        return len(self._scopes) > 1 and name in self._scopes[-1]

    def bound_here(self, reference: str) -> bool:
        """The name `reference` starts from (`n_ids` of `n_ids[0]`) is bound in the function being walked."""
        return self._is_local(re.split(r"[.\[(]", reference, maxsplit=1)[0])

    def _annotated_locals(self) -> dict[str, str]:
        """The locals the current function annotates with a class (`outputs: BaseModelOutputWithPast = ...`),
        each bound only so."""
        function = self._scope_nodes[-1] if self._scope_nodes else None
        if not isinstance(function, cst.FunctionDef):
            return {}
        key = ("annotated locals", id(function))  # once per module: every summary walk of the function asks again
        known = self.index.memo.get(key)
        if known is None or known[0] is not function:  # type: ignore[index]
            known = self.index.memo[key] = (
                function, remembered("annotated locals", function, lambda: _annotated_locals(function)))
        return known[1]  # type: ignore[index, no-any-return]

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

    def _kept_by_self(self, name: str, holder: str = "self") -> bool:
        """`name` is given to `self` (or to the object `holder`) in this function (assigned into it, passed to one of
        its methods) or read from a container `self` holds: its storage lives as long as the object."""
        context = self.contexts.function
        if context is None or context.node is None or not re.fullmatch(r"[A-Za-z_]\w*", name) or name == holder:
            return False
        info = self.index.classes.get(self.class_name or "") if holder == "self" else None
        kept_by = set(info.retaining_methods) if info is not None else set()
        for node in descendants(context.node):
            if isinstance(node, cst.Assign):
                targets = [dotted_name(t.target.value if isinstance(t.target, cst.Subscript) else t.target) or "" for t in node.targets]
                if any(t.startswith(holder + ".") for t in targets) and _holds_directly(node.value, name):
                    return True
                if holder == "self" and any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets) \
                        and _reads_self_container(node.value):
                    return True
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and dotted_name(node.func.value) == holder and node.func.attr.value in kept_by \
                    and any(_holds_directly(a.value, name) for a in node.args):
                return True  # `self._cache_workspace(key, workspace)`, a method that keeps its argument
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                    and node.func.attr.value in sem.STORING_METHODS \
                    and (dotted_name(node.func.value) or "").startswith(holder + ".") \
                    and any(_holds_directly(a.value, name) for a in node.args):
                return True  # `self._packed.append(packed)`: a container of the object keeps it
        return False

    def partitioned(self, value_node: cst.BaseExpression, base: Optional[str]) -> bool:
        """`layer.weight.data = w[i * rows:(i + 1) * rows]` in a loop, or `a.weight.data = w[:n]` and
        `b.weight.data = w[n:]`, or `q.weight.data = qw` ... for each of `qw, kw, vw = torch.chunk(qkvw, 3)`: parameters
        that between them hold every part of one tensor pin nothing extra."""
        context = self.contexts.function
        scope = context.node if context is not None else None
        if scope is None or base is None:
            return False
        if isinstance(value_node, cst.Name):
            return self._every_piece_stored(value_node.value, scope)
        if not isinstance(value_node, cst.Subscript):
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

    def _every_piece_stored(self, name: str, scope: cst.CSTNode) -> bool:
        """`name` is one of the names a whole split is unpacked into (`qw, kw, vw = torch.chunk(qkvw, 3)`), and each of
        them is put in some `.data` in the function."""
        pieces: Optional[list[str]] = None
        stored: set[str] = set()
        for node in descendants(scope):
            if not isinstance(node, cst.Assign):
                continue
            for target in node.targets:
                if isinstance(target.target, cst.Tuple):
                    names = [e.value.value for e in target.target.elements if isinstance(e.value, cst.Name)]
                    if name in names and len(names) == len(target.target.elements) \
                            and self.value_of(node.value).whole_partition:
                        pieces = names
                elif isinstance(target.target, cst.Attribute) and target.target.attr.value == "data" \
                        and isinstance(node.value, cst.Name):
                    stored.add(node.value.value)
        return pieces is not None and set(pieces) <= stored

    def outlives_function(self, expression: str) -> bool:
        """`self.<attr>…` or a module-level name: its storage stays alive whatever this function keeps."""
        if made_inside_base(expression):
            return False  # `self.proj(x) made in Encoder.forward`: storage a called function made and handed back
        head = re.split(r"[.\[(]", expression, maxsplit=1)[0]
        if head in ("self", "cls"):
            called = re.match(r"self\.(\w+)\(", expression)
            info = self.index.classes.get(self.class_name or "")
            if called is not None and info is not None and called.group(1) in info.submodule_attributes:
                return False  # `self.vision_encoder(x)`: what a submodule's forward made for this call
            return expression.startswith(head + ".")
        if head in self.index.module_names and self.contexts.function is None:
            # A script's own loop (`for x in loader: out = model(x)`) binds the name anew on each iteration: what
            # a previous iteration bound lives only as long as something keeps it.
            loops = [c.node for c in self.contexts.contexts if c.kind == "loop" and c.node is not None]
            return not (loops and self._bound_in(head, loops[-1]))
        return head in self.index.module_names and not self._is_local(head)

    def _long_lived_receiver(self, node: cst.BaseExpression, method: str) -> bool:
        name = receiver_name(node, method, dotted_name, cst.Subscript)  # type: ignore[arg-type]
        return name is not None and long_lived_receiver(
            name, method, self.index, self.settings.long_lived_names, class_name=self.class_name or "",
            is_local=self._is_local, is_local_container=self._is_local_container,
            is_caller_object=self._is_parameter)

    def _accumulating_loop(self, receiver: cst.BaseExpression) -> Optional[tuple[cst.CSTNode, bool]]:
        """The innermost loop, when `receiver` is a list (or dict) this function builds before it and returns (or yields):
        what each iteration adds to it outlives the iteration. With it, whether the list is handed back: else it is
        read after a loop over a data source (`torch.cat(bank)`), which it outlives holding every batch's views."""
        if not isinstance(receiver, cst.Name) or not self._is_local_container(receiver.value) \
                or self._is_parameter(receiver.value):
            return None
        loops = [c.node for c in self.contexts.contexts if c.kind == "loop" and c.node is not None]
        context = self.contexts.function
        if not loops or context is None or context.node is None:
            return None
        name = receiver.value
        loop = loops[-1]
        in_loop = {id(node) for node in descendants(loop)}
        for node in descendants(loop):
            if isinstance(node, (cst.AssignTarget, cst.AnnAssign)) and isinstance(node.target, cst.Name) \
                    and node.target.value == name:
                return None  # rebound on each iteration: it holds one iteration's values
        after = False
        read_after = False
        for node in descendants(context.node):
            if node is loop:
                after = True
            elif after and id(node) not in in_loop and isinstance(node, (cst.Assign, cst.AnnAssign)) and any(
                    isinstance(t, cst.Name) and t.value == name
                    for t in ([a.target for a in node.targets] if isinstance(node, cst.Assign) else [node.target])):
                # `outs = torch.cat(outs)` after the loop: the list dies there, and what it held with it (a loop over
                # a data source has filled it with every batch by then).
                read_after = read_after or (node.value is not None and any(
                    isinstance(n, cst.Name) and n.value == name for n in descendants(node.value)))
                return (loop, False) if read_after and _iterates_data(loop, self._is_parameter) else None
            elif after and not read_after and id(node) not in in_loop and isinstance(node, cst.Arg) \
                    and isinstance(node.value, cst.Name) and node.value.value == name:
                read_after = True  # `torch.cat(bank)`
            if isinstance(node, (cst.Return, cst.Yield)) and isinstance(node.value, cst.BaseExpression) \
                    and _holds_directly(node.value, name):
                return loop, True
        return (loop, False) if read_after and _iterates_data(loop, self._is_parameter) else None

    def _pins_an_iteration(self, value: Value, loop: cst.CSTNode, stored: cst.BaseExpression) -> bool:
        """What a loop adds to a list it fills holds a view of part of a tensor that iteration computed
        (`act = model(batch)`, then `act[:, 0]`; `model(batch)[:, 0]` in the added expression itself): each entry
        keeps one iteration's whole tensor. Not so for views of a tensor read out of something that lives anyway
        (`buf = buffers[i]`), a leading index (`out[0]` of a batch of one is all of it), or parts of one tensor all
        added in the iteration (`x[0]` and `x[1]`)."""
        calls: Optional[set[str]] = None
        for view in value.retained_views():
            base = view.base
            if view.is_view and view.partial and view.base_made is not None and (base or "").endswith(")") \
                    and not _leading_index(view.origin):
                if calls is None:  # the calls of the added expression: each runs anew on every iteration
                    calls = {self.short_source(n) for n in descendants(stored) if isinstance(n, cst.Call)}
                if base in calls:
                    return True
                # `x = outputs.logits.clone()[:, -1]` bound on this iteration, then `raw += (x,)`: the call ran anew.
                if any(isinstance(n, cst.Name) and self._binds_call(n.value, base or "", loop) for n in descendants(stored)):
                    return True
                continue
            if view.is_view and view.partial and view.base_made is not None and made_inside_base(base) \
                    and not _leading_index(view.origin):
                # A helper's view of what it made on this call (`return out[:, 0]` of its `out = self.model(batch)`),
                # called in the added expression, or read off a name this iteration binds (`acts[:, -1]` of
                # `acts, _ = collect(model, batch)`).
                root = stored
                while isinstance(root, (cst.Subscript, cst.Attribute)):
                    root = root.value
                if any(isinstance(n, cst.Call) for n in descendants(stored)) \
                        or isinstance(root, cst.Name) and self._bound_in(root.value, loop):
                    return True
                continue
            # A name, or a field of a model's output (`out.last_hidden_state`, `out["logits"]` of `out = model(**batch)`).
            shape = re.fullmatch(r"([A-Za-z_]\w*)(\.[A-Za-z_]\w*|\[[\"'][A-Za-z_]\w*[\"']\])?", base or "")
            if not (view.is_view and view.partial and shape is not None):
                continue
            if _leading_index(view.origin):
                continue  # `x[0]`: a leading index, often all of a batch of one
            root = shape.group(1)
            made = self.lookup(root)
            made_here = False
            if made.origin == MODULE_OUTPUT and (made.kind is Kind.WRAPPER or shape.group(2)):
                made = made.element() if made.kind is Kind.WRAPPER else made  # a tensor (or a tuple of them) the model made
            elif shape.group(2) and made.kind is Kind.WRAPPER and view.base_made == MODULE_OUTPUT:
                made_here = True  # `outputs["logits"]` of the dict a model of this module returns: its layer made it
            elif shape.group(2):
                continue  # a field of something else: it may well outlive the iteration
            if not (made_here or made.is_fresh) or not self._bound_in(root, loop):
                continue
            adds = [n for n in descendants(loop) if (isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                    and n.func.attr.value in sem.ACCUMULATING_METHODS
                    and any(isinstance(m, cst.Name) and m.value == root for a in n.args for m in descendants(a.value)))
                    or (isinstance(n, cst.AugAssign) and isinstance(n.operator, cst.AddAssign)
                        and isinstance(n.value, (cst.Tuple, cst.List))  # `main += (h[:, :n],); ngram += (h[:, n:],)`
                        and any(isinstance(m, cst.Name) and m.value == root for m in descendants(n.value)))]
            if len(adds) > 1:
                continue  # several parts of the same tensor added: together they may cover it
            return True
        return False

    def _made_in_this_call(self, base: Optional[str]) -> bool:
        """`base` names a local of this function (not a parameter) bound to a tensor that owns its storage."""
        if base is None or not re.fullmatch(r"[A-Za-z_]\w*", base) or not self._is_local(base) or self._is_parameter(base):
            return False
        return self.lookup(base).is_fresh

    @staticmethod
    def _bound_in(name: str, loop: cst.CSTNode) -> bool:
        """`name` is assigned by the body of `loop` (on each iteration)."""
        for node in descendants(loop):
            if isinstance(node, cst.AssignTarget) and any(isinstance(n, cst.Name) and n.value == name
                                                          for n in descendants(node.target)):
                return True
        return False

    def _binds_call(self, name: str, call: str, loop: cst.CSTNode) -> bool:
        """`name` is assigned by the body of `loop` to an expression that makes the call `call` (by its text)."""
        for node in descendants(loop):
            if isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets) \
                    and any(isinstance(n, cst.Call) and self.short_source(n) == call for n in descendants(node.value)):
                return True
        return False

    def _split_between_holders(self, target: cst.Attribute, stored: cst.BaseExpression) -> Optional[Value]:
        """What `target = stored` keeps, where this function splits an object's tensor between holders: it sets one
        attribute to a piece of `X.attr` and `X.attr` itself to another piece (`X.attr = X.attr[n:]`); None elsewhere."""
        function = self._scope_nodes[-1] if self._scope_nodes else None
        if not isinstance(function, cst.FunctionDef):
            return None
        key = ("split holders", id(function))
        known = self.index.memo.get(key)
        if known is None or known[0] is not function:  # type: ignore[index]
            known = self.index.memo[key] = (function, remembered("split holders", function, lambda: _split_holders(function)))
        holders = known[1].get(_sliced_name(stored) or "")  # type: ignore[index, union-attr]
        if holders is None or dotted_name(target) not in holders:
            return None
        value = self.value_of(stored)
        return value if value.is_view and value.partial else None

    def _handed_back(self, name: str) -> bool:
        """`name` (a local, or what a loop takes from one) leaves the function with its objects: it is returned or
        yielded, added to a list that is (`hyps += current`, `out.extend(current)`), or taken item by item from one
        (`for h in hyps`)."""
        function = self._scope_nodes[-1] if self._scope_nodes else None
        if not isinstance(function, cst.FunctionDef) or not self._is_local(name) or self._is_parameter(name):
            return False
        key = ("handed back", id(function))  # once per module: every walk of the function asks again
        known = self.index.memo.get(key)
        if known is None or known[0] is not function:  # type: ignore[index]
            known = self.index.memo[key] = (function, remembered("handed back", function, lambda: _handed_back_names(function)))
        return name in known[1]  # type: ignore[index, operator]

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
                if isinstance(t, cst.Subscript) and (self.is_long_lived_container(t.value) or self._keeping_object(t.value)):
                    events.append(StoreEvent(node, node.value, self.value_of(node.value), self.short_source(t.value) + "[...]"))
                elif isinstance(t, cst.Subscript) and (filled := self._accumulating_loop(t.value)) is not None:
                    # `index[doc_id] = hidden[0, 0]` in a loop, into a dict this function builds and returns.
                    value = self.value_of(node.value)
                    if self._pins_an_iteration(value, filled[0], node.value):
                        events.append(StoreEvent(node, node.value, value, self.short_source(t.value) + "[...]",
                                                 loop=filled[0], handed_back=filled[1]))
                elif isinstance(t, cst.Attribute) and (split := self._split_between_holders(t, node.value)) is not None:
                    # `new_node.value = child.value[:n]` and `child.value = child.value[n:]`: two objects now hold
                    # pieces of one storage, and each keeps all of it alive when the other is dropped.
                    events.append(StoreEvent(node, node.value, split, self.short_source(t)))
                elif isinstance(t, cst.Attribute) and t.attr.value == "data" and self._parameter_like(t.value):
                    # `layer.weight.data = piece`: the parameter now lives on the storage of `piece`.
                    events.append(StoreEvent(node, node.value, self.value_of(node.value), self.short_source(t)))
                elif isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                    # `self.last_logits = logits[:, -1]`: the object keeps, until it is set again, all of a tensor
                    # this call made (a model's output, a local built here); views of what the caller passed are not
                    # read so (the caller may well keep that).
                    value = self.value_of(node.value)
                    held = (dotted_name(node.value) or "").startswith("self.")  # `self.values = self.keys`: held already
                    if value.is_view and value.partial and not held and self._made_in_this_call(value.base):
                        events.append(StoreEvent(node, node.value, value, self.short_source(t)))
                elif isinstance(t, cst.Attribute) and (root := _object_root(t.value)) is not None \
                        and root not in ("self", "cls") and self._handed_back(root) \
                        and self.lookup(root).kind not in (Kind.TENSOR, Kind.TENSOR_SEQUENCE):
                    # `hyps[i].y_sequence = logits[i][:n]` into objects the function hands back (returns them, or adds
                    # them to a list it returns): each keeps all of a tensor this call made, as `self.<attr>` would.
                    value = self.value_of(node.value)
                    if value.is_view and value.partial and self._made_in_this_call(value.base) \
                            and not self._kept_by_self(value.base or "", holder=root):
                        # (Not when the object is given the base too: `graph.counts = packed`, `graph.n = packed[1]`.)
                        events.append(StoreEvent(node, node.value, value, self.short_source(t)))
        elif isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign) \
                and isinstance(node.value, (cst.Tuple, cst.List)) and (filled := self._accumulating_loop(node.target)) is not None:
            # `raw += (logits[:, -1, :],)` in a loop, into a tuple or list this function builds and returns.
            for element in node.value.elements:
                if isinstance(element, cst.StarredElement):
                    continue
                value = self.value_of(element.value)
                if self._pins_an_iteration(value, filled[0], element.value):
                    events.append(StoreEvent(node, element.value, value, f"{self.short_source(node.target)} += ...",
                                             loop=filled[0], handed_back=filled[1]))
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            receiver = node.func.value
            # `list.append/extend/insert` take no keywords: `self.dispatcher.extend(q=q)` is some other method.
            container_call = method not in sem.CONTAINER_ONLY_METHODS or all(a.keyword is None for a in node.args)
            known = self._stored_into_class(receiver, method)
            filled = self._accumulating_loop(receiver) if method in sem.ACCUMULATING_METHODS and container_call else None
            if known is not None and method in known.methods and known.name in self.index.classes \
                    and self.index.classes[known.name] is known:
                # The receiver's class is defined here: its method says what it keeps.
                events.extend(self._summary_store_events(node, method, receiver))
            elif filled is not None:
                for arg in node.args:
                    if isinstance(arg.value, (cst.ListComp, cst.GeneratorExp)):
                        continue  # `out.extend(x[i:i + n] for i in ...)`: pieces that together cover their base
                    value = self.value_of(arg.value)
                    if value.kind is Kind.TENSOR_SEQUENCE and value.whole_partition:
                        continue  # `matches.extend(list(m))`, `rles.append(m.unbind())`: every row of `m`, all of it
                    if self._pins_an_iteration(value, filled[0], arg.value):
                        events.append(StoreEvent(node, arg.value, value, f"{self.short_source(receiver)}.{method}(...)",
                                                 loop=filled[0], handed_back=filled[1]))
            elif method in sem.STORING_METHODS and container_call and self._long_lived_receiver(receiver, method):
                # `cache.set(key, piece)` on a receiver of unknown type: the one class here that defines `set` says
                # what it keeps (one that clones a view before keeping it keeps nothing extra).
                known = known or self._unique_owner(receiver, method)
                defining = self._defining_class(known, method) if known is not None else None
                if defining is not None:
                    # Imported from another module of the project, or inherited from a class one defines: what its
                    # method keeps (a `set` that clones when the storage is larger than the payload keeps nothing
                    # extra) narrows the heuristic.
                    events.extend(e for e in self._arguments_at(
                        node, defining.retaining_methods.get(method, set()), defining.retaining_keywords.get(method, set()),
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

    def _defining_class(self, known: ClassInfo, method: str, depth: int = 4) -> Optional[ClassInfo]:
        """The class that defines `known`'s `method`: `known` itself, or the nearest of its bases (`class
        Conv1dPaddingCache(VoxtralRealtimeConv1dPaddingCache): pass` gets its `update` from the base another module
        of the project defines); None where no class in reach does."""
        if method in known.methods:
            return known
        if depth <= 0:
            return None
        for base in known.base_names:
            found = self.summaries.class_named(base) if self.summaries is not None else self.index.classes.get(base)
            defining = self._defining_class(found, method, depth - 1) if found is not None and found is not known else None
            if defining is not None:
                return defining
        return None

    def _stored_into_class(self, receiver: cst.BaseExpression, method: str) -> Optional[ClassInfo]:
        """The class of the receiver of a storing call: as the code says it (`receiver_class`), or as the analysis
        knows the object (an instance of a class of this module its callers pass:
        `get_embedding_and_cache(encoder, MultiModalStaticCache(...), items)`). Asked by the store events only:
        evaluating the receiver reads fields, which ask `receiver_class` in turn."""
        found = self.receiver_class(receiver)
        if found is not None or not any(method in c.methods for c in self.index.classes.values()):
            return found
        held = self.value_of(receiver).wrapper
        found = self.index.classes.get(held) if held is not None else None
        return found if found is not None and method in found.methods else None

    def _unique_owner(self, receiver: cst.BaseExpression, method: str) -> Optional[ClassInfo]:
        """For a receiver of unknown type: the one class of this module that defines `method`."""
        if self.summaries is None:
            return None
        owner = self.summaries.unique_method_owner(method, self.value_of(receiver), dotted_name(receiver))
        return self.index.classes.get(owner) if owner is not None else None

    def _summary_store_events(self, node: cst.Call, method: str, receiver: cst.BaseExpression) -> list[StoreEvent]:
        """Calls of methods (of classes in this module or the project) whose body keeps an argument in a long-lived place."""
        info = self._stored_into_class(receiver, method)
        if info is not None and self.index.classes.get(info.name) is not info:
            return []  # imported: only ever narrows a store the heuristics found (see `_store_events`)
        info = info or self._unique_owner(receiver, method)  # `token.set_embedding(...)` of an unknown receiver
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


def _iterates_data(loop: cst.CSTNode, is_parameter: Callable[[str], bool]) -> bool:
    """`for batch in loader:`, `for i, (x, y) in enumerate(tqdm(loader)):`, `for batch in self.val_dataloader:`: a loop
    over a data source the caller hands in or that its name says is one, as long as the data is (not a `range(n)` of
    steps, not `self.layers`, not a list of tiles this function built and keeps)."""
    if not isinstance(loop, cst.For):
        return False
    source = loop.iter
    while isinstance(source, cst.Call) and source.args and (dotted_name(source.func) or "").split(".")[-1] in _DATA_WRAPPERS:
        source = source.args[0].value
    name = dotted_name(source)
    if name is None:
        return False
    last = name.rsplit(".", 1)[-1].lower()
    return ("." not in name and is_parameter(name)) or any(word in last for word in ("loader", "dataset", "batches"))


_DATA_WRAPPERS = frozenset({"enumerate", "tqdm", "iter", "zip"})


def _holds_directly(node: cst.BaseExpression, name: str) -> bool:
    """`name`, or a tuple, list, dict or constructor call with `name` itself among its items (either arm of a
    conditional expression)."""
    return name in _directly_held_names(node)


def _directly_held_names(node: cst.BaseExpression) -> list[str]:
    """The names `node` holds itself: `node` a name, or the items of the tuples, lists and dicts it displays and of the
    objects it builds (`Output(preds=feats)`), on either arm of a conditional expression."""
    if isinstance(node, cst.Name):
        return [node.value]
    if isinstance(node, cst.IfExp):  # `raw if output_logits else None`
        return _directly_held_names(node.body) + _directly_held_names(node.orelse)
    if isinstance(node, (cst.Tuple, cst.List)):
        return [n for e in node.elements for n in _directly_held_names(e.value)]
    if isinstance(node, cst.Dict):
        return [n for e in node.elements if isinstance(e, cst.DictElement) for n in _directly_held_names(e.value)]
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value[:1].isupper():
        return [n for a in node.args for n in _directly_held_names(a.value)]
    return []


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


def _leading_index(origin: Optional[str]) -> bool:
    """`[0]`, `[i]`, `[0, ...]`, `[b, :, :]`: one item of the leading dimension, all of the rest (often all of a batch of
    one), not a part of each row."""
    if not origin or not origin.startswith("[") or not origin.endswith("]"):
        return False
    first, *rest = (part.strip() for part in origin[1:-1].split(","))
    return bool(first) and ":" not in first and first != "..." and all(part in (":", "::", "...") for part in rest)


def _object_root(node: cst.BaseExpression) -> Optional[str]:
    """`hyps` of `hyps[i]`, `hyps[i].meta`, `h`: the name an object is reached from (not through a call)."""
    while isinstance(node, (cst.Subscript, cst.Attribute)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _sliced_name(node: cst.BaseExpression) -> Optional[str]:
    """`child.value` of `child.value[:n]`, `child.value[n:]`: the attribute a slice (a part of it) is taken of."""
    if not isinstance(node, cst.Subscript) or not any(isinstance(e.slice, cst.Slice) for e in node.slice):
        return None
    name = dotted_name(node.value)
    return name if name is not None and "." in name else None


def _split_holders(function: cst.FunctionDef) -> dict[str, frozenset[str]]:
    """{`child.value`: the attributes set to pieces of it}, for each attribute this function sets to a piece of itself
    (`child.value = child.value[n:]`) while it sets another attribute to another piece (`new_node.value =
    child.value[:n]`)."""
    pieces: dict[str, set[str]] = {}
    for node in own_nodes(function):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Attribute):
            sliced = _sliced_name(node.value)
            target = dotted_name(node.targets[0].target)
            if sliced is not None and target is not None:
                pieces.setdefault(sliced, set()).add(target)
    return {name: frozenset(held) for name, held in pieces.items() if name in held and len(held) > 1}


def _handed_back_names(function: cst.FunctionDef) -> frozenset[str]:
    """The names whose objects leave `function`: returned or yielded as they are (or in a tuple, list or dict), added
    to such a list (`out += hyps`, `out.extend(hyps)`, `out.append(h)`), or a loop's item of one (`for h in hyps`)."""
    found: set[str] = set()
    added: list[tuple[str, str]] = []  # (list, what is added to it)
    items: list[tuple[str, str]] = []  # (what is iterated, the loop's target)
    for node in own_nodes(function):  # (not the returns of the functions defined in it)
        if isinstance(node, (cst.Return, cst.Yield)) and isinstance(node.value, cst.BaseExpression):
            found.update(_directly_held_names(node.value))
        elif isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign) \
                and isinstance(node.target, cst.Name):
            added.extend((node.target.value, n) for n in _directly_held_names(node.value))
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in sem.ACCUMULATING_METHODS and isinstance(node.func.value, cst.Name):
            added.extend((node.func.value.value, n) for a in node.args for n in _directly_held_names(a.value))
        elif isinstance(node, cst.For):
            source, target = node.iter, node.target
            wrapper = dotted_name(source.func) if isinstance(source, cst.Call) and source.args else None
            if wrapper == "enumerate" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
                source, target = source.args[0].value, target.elements[1].value  # type: ignore[union-attr]  # `for i, h in enumerate(hyps)`
            elif wrapper == "reversed":
                source = source.args[0].value  # type: ignore[union-attr]
            if isinstance(source, cst.Name) and isinstance(target, cst.Name):
                items.append((source.value, target.value))
    for _ in range(3):  # a list added to a list added to one returned
        grown = {n for holder, n in added if holder in found} | {t for source, t in items if source in found}
        if grown <= found:
            break
        found |= grown
    return frozenset(found)
