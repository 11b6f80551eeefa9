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

Calls are read in `viewlint.analysis.calls` (a part it inherits), annotations and docstrings in
`viewlint.analysis.annotations`, how values combine in `viewlint.analysis.value_ops`."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from viewlint.analysis import stack
from viewlint.analysis import semantics as sem
from viewlint.analysis.annotations import DEVICE_VALUE, DTYPE_VALUE, STR_VALUE, node_text
from viewlint.analysis.callgraph import FunctionKey
from viewlint.analysis.module_index import ClassInfo
from viewlint.analysis.calls import CallEvaluation
from viewlint.analysis.self_attributes import AttributeReading
from viewlint.analysis.narrowing import NOT_A_TENSOR, TypeTests
from viewlint.analysis.tree import dotted_name, keyed_reference, narrowed_reference, short_text, stored_key, string_keyed
from viewlint.analysis.ranks import RANKED_NODES, ranked
from viewlint.analysis.value_ops import (MODULE_OUTPUT, Environment, Locals, as_indexed, binary_result, never_eager,
                                         container_value, elementwise_device, fields_mark, forget_fields, labelled,
                                         on_the_host_if, optimizer_attribute, value_index_kind, view_zero_dim)
from viewlint.analysis.values import (ADVANCED_INDEX, ARRAY_ITEM, COMPUTED, HOST, INT, MAX_FIELDS, UNKNOWN, UNKNOWN_TENSOR, PERMUTED_INDEX, Device, IndexKind, Kind,
                                      Provenance, Value, fresh, function_reference, join, rank_floor, unpacked_choice)


# Sequence displays: `*` repeats them.
_SEQUENCE_DISPLAYS = frozenset({cst.List, cst.Tuple, cst.ListComp})


# Recurrent modules: `.bias` is a flag (`nn.LSTM(..., bias=True)`), the parameters `bias_ih_l0`, `bias_hh`, ...
_RECURRENT_CLASSES = frozenset({"RNNBase", "RNNCellBase", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"})
_RECURRENT_WORDS = frozenset({"rnn", "lstm", "gru", "bilstm", "convlstm"})


class Evaluator(CallEvaluation, AttributeReading, TypeTests):
    """Expression -> Value in an environment. One per flow (function walk)."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.index = env.index
        self._cpu_names: frozenset[str] = frozenset()
        # Values already computed during the current outermost `evaluate` (the environment does not change inside
        # one; a chain of calls would otherwise be evaluated 2**depth times), by node and locals identity (kept alive).
        self._memo: Optional[dict[tuple[int, int], tuple[Value, cst.CSTNode, Locals]]] = None
        # The same values kept from one outermost `evaluate` to the next while the flow stands still (see
        # `keep_values`): rules ask for each link of a chain in turn, and each would evaluate the links below.
        self._kept: Optional[dict[tuple[int, int], tuple[Value, cst.CSTNode, Locals]]] = None
        self._long_prefixes: dict[tuple[int, int], tuple[cst.CSTNode, str]] = {}  # for `short_source`
        # The statement `guarded_locals` last read, and what it found (valid while the flow stands still).
        self._guarded: Optional[tuple[cst.CSTNode, dict[int, Locals]]] = None

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
        self._guarded = None

    # ------------------------------------------------------------------ names and text
    def qualify(self, node: cst.BaseExpression) -> Optional[str]:
        return self.index.qualify(node)

    @staticmethod
    def source(node: cst.CSTNode) -> str:
        name = dotted_name(node) if isinstance(node, cst.BaseExpression) else None
        return name if name is not None else node_text(node)

    def short_source(self, node: cst.CSTNode, limit: int = 60) -> str:
        return short_text(node, self.source, limit, self._long_prefixes)

    # ------------------------------------------------------------------ entry points
    def value_of(self, node: cst.BaseExpression, statement: Optional[cst.CSTNode] = None) -> Value:
        """`node`'s value; inside `statement`, as the tests around it there say (`x if isinstance(x, int) else …`)."""
        try:
            local = self.guarded_locals(statement).get(id(node)) if statement is not None else None
            return self.evaluate(node, local or {})
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
        if type(node) in RANKED_NODES:
            value = ranked(self, node, value, local)
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
            return DEVICE_VALUE  # `"cuda:0"`: what `.to()` reads as a device
        if kind in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString):
            return STR_VALUE
        if kind in (cst.Float, cst.Imaginary, cst.Ellipsis):
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
            if never_eager(node.test):  # type: ignore[attr-defined]
                return self.evaluate(node.orelse, local)  # type: ignore[attr-defined]  # `t.to(...) if torch.jit.is_tracing() else int(t)`
            # `x.clone() if isinstance(x, torch.Tensor) else torch.tensor(x)`: each branch where its test says so.
            body, orelse = self.branch_locals(node, local)  # type: ignore[arg-type]
            return join(self.evaluate(node.body, body), self.evaluate(node.orelse, orelse))  # type: ignore[attr-defined]
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
            return container_value(elements, kind.__name__.lower())
        if kind is cst.Dict:
            items = [e for e in node.elements if isinstance(e, cst.DictElement)]  # type: ignore[attr-defined]
            elements = tuple(self.evaluate(e.value, local) for e in items)
            keys = tuple(str(e.key.evaluated_value) if isinstance(e.key, cst.SimpleString) else None for e in items)
            if any(keys) and len(keys) <= MAX_FIELDS:
                return Value(kind=Kind.WRAPPER, wrapper="dict", elements=elements, fields=keys)
            return container_value(elements, "dict")
        if kind in (cst.ListComp, cst.GeneratorExp, cst.SetComp):
            inner = self._comprehension_locals(node.for_in, local)  # type: ignore[attr-defined]
            elt = node.elt  # type: ignore[attr-defined]
            # `[s.to_slice() if d == dim else slice(None) for d in range(n)]`: items of either kind, kept apart (a
            # list holding slices indexes as a tuple of them would, a list of ints gathers).
            if type(elt) is cst.IfExp:
                holds, fails = self.branch_locals(elt, inner)
                items: tuple[Value, ...] = (self.evaluate(elt.body, holds), self.evaluate(elt.orelse, fails))
            else:
                items = (self.evaluate(elt, inner),)
            if kind is cst.ListComp and all(item.kind is Kind.INT for item in items):
                return Value(kind=Kind.INT_LIST)
            return container_value(items, "list")
        if kind is cst.DictComp:
            inner = self._comprehension_locals(node.for_in, local)  # type: ignore[attr-defined]
            return container_value((self.evaluate(node.value, inner),), "dict")  # type: ignore[attr-defined]
        if kind is cst.NamedExpr:
            return self.evaluate(node.value, local)  # type: ignore[attr-defined]
        return UNKNOWN

    def _comprehension_locals(self, comp: cst.CompFor, local: Locals) -> Locals:
        inner = dict(local)
        current: Optional[cst.CompFor] = comp
        while current is not None:
            self.bind_target_into(current.target, self.iterate(current.iter, inner), inner)
            for condition in current.ifs:
                # `{k: v.to(device) for k, v in batch.items() if isinstance(v, torch.Tensor)}`: what passed the
                # filter is what its test says, for the element and the clauses after it.
                inner.update(self.narrowings(condition.test, True, inner))
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
        if type(node.operator) is cst.Multiply:
            # `[n_window * 2] * chunk_num.sum()`: a list (or tuple) repeated, whatever the count (`__index__` of a tensor).
            for side, value in ((node.left, left), (node.right, right)):
                if type(side) in _SEQUENCE_DISPLAYS:
                    return value
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
            return fresh(contiguous=None, device=elementwise_device(tensors), bool_mask=True,
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
            bound = self.env.lookup(name) if head == "self" else self.env.field_value(name) or UNKNOWN
            if bound is not UNKNOWN and head == "self" and bound.kind is Kind.UNKNOWN and name.count(".") == 1:
                # Only where it lives, guessed from its name (`self.cpu_copy_map_grad`): what the class says it is
                # (a dict it builds in a method) comes first.
                known = self._self_attribute(attr)
                if known.kind is not Kind.UNKNOWN:
                    return known.with_(device=bound.device) if known.is_tensor and known.device is Device.UNKNOWN else known
            if bound is not UNKNOWN:
                return bound
            owner = self.env.class_name if head == "cls" else head  # `cls.cache` in a classmethod: its class's
            held = self.index.classes.get(owner or "") if name.count(".") == 1 else None
            if held is not None and attr in held.class_containers:
                return Value(kind=Kind.WRAPPER, wrapper=held.class_containers[attr])  # `Allocator.cache` of its class body
            if head == "self" and self._moved_to_cpu_in_class(name[5:]):
                return UNKNOWN_TENSOR.with_(device=Device.CPU)  # every method sets it to `x.to("cpu")`
            if attr in self._cpu_names:
                return UNKNOWN_TENSOR.with_(device=Device.CPU)  # `batch.seq_lens_cpu` with `cpu-names = ["seq_lens_cpu"]`
            if sem.named_host_side(attr) and head != "self":
                # `cm.query_start_loc_cpu`: named for the host (as `lookup` reads names); a tensor where its class says.
                typed = self._field_value(node.value, attr)
                return (typed if typed is not None and typed.is_tensor else UNKNOWN).with_(device=Device.CPU)
        if sem.canonical_dtype(self.qualify(node)) is not None:
            return DTYPE_VALUE  # `torch.float16`
        receiver = self.evaluate(node.value, local)
        if attr in ("dtype", "device"):
            return DTYPE_VALUE if attr == "dtype" else DEVICE_VALUE
        if attr in ("shape", "ndim", "is_cuda", "requires_grad", "grad_fn", "layout", "is_meta"):
            return HOST
        if attr in ("T", "mT", "mH") and (receiver.kind is Kind.ARRAY or receiver.host_type == NOT_A_TENSOR.host_type):
            return receiver  # `weights.T` of a NumPy array: an array
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
            found = receiver.field(attr)
            if found.kind is not Kind.UNKNOWN:
                return found
        if receiver.kind is Kind.WRAPPER and receiver.wrapper is not None:
            # One its construction says nothing of (`State(*outputs)`, `State(text=f(x))`): what its class declares.
            declared = self._declared_field(receiver.wrapper, attr)
            if declared is not None:
                return declared
            if receiver.fields:
                return UNKNOWN
        if receiver.origin == MODULE_OUTPUT and attr in sem.MODEL_OUTPUT_TENSOR_FIELDS:
            # `out.last_hidden_state` of `out = model(**batch)`: a tensor field of the output object a model returns.
            made = receiver.element() if receiver.kind is Kind.WRAPPER else receiver
            return fresh(contiguous=None, device=made.device, origin=MODULE_OUTPUT, why=f"the `.{attr}` of a model's output")
        if receiver.kind is Kind.HOST and receiver.wrapper is not None and not (name or "").startswith("self."):
            held = self._instance_submodule(receiver.wrapper, attr)
            if held is not None:
                return held  # `attn.to_q` of `attn: Attention`, whose `__init__` makes it an `nn.Linear`
        elif receiver.kind is Kind.HOST and receiver.wrapper is not None and (name or "").count(".") == 2 \
                and self.env.summaries is not None:
            made = self._instance_tensor(self.env.summaries.class_named(receiver.wrapper), attr)
            if made is not None:
                return made  # `self.scheduler.timesteps` of an object of a class of the project
        if receiver.kind is Kind.HOST and (receiver.wrapper or "").startswith("torch.optim."):
            known = optimizer_attribute(attr)  # `loaded.state` of `loaded: torch.optim.Optimizer`
            if known is not None:
                return known
        if name is not None and name.startswith("self.") and name.count(".") == 1:
            return self._self_attribute(attr)
        if receiver.kind is Kind.UNKNOWN or (receiver.kind is Kind.HOST and receiver.wrapper is not None):
            typed = self._field_value(node.value, attr, unknown=receiver.kind is Kind.UNKNOWN)
            if typed is not None:
                return typed  # `cm.is_prefilling` of `cm: CommonAttentionMetadata` (a dataclass field `Optional[Tensor]`)
        if attr == "bias" and self._recurrent_module(node.value, receiver):
            return HOST.with_(why="an RNN's `.bias`, the flag its constructor was given")
        if attr in sem.PARAMETER_ATTRIBUTE_NAMES and (receiver.kind is Kind.UNKNOWN or self._is_module_object(receiver)) \
                and not name == f"self.{attr}":
            # `layer.weight`, `self.q_proj.weight`, `m.bias`: a module's parameter.
            return UNKNOWN_TENSOR.with_(is_parameter=True, why=f"a module's `.{attr}`")
        return UNKNOWN

    def _nth_field(self, record: Value, n: int) -> Value:
        """Item `n` of an object built with named fields (`Output(last_hidden_state=h, pooler_output=p)[0]`): its
        `n`-th field set, in the order its class declares them where the code shows the class (a `ModelOutput`
        indexes the fields it was given), else in the order the call names them."""
        summaries = self.env.summaries
        info = summaries.class_named(record.wrapper) if summaries is not None and record.wrapper else None
        order = [f for f in info.fields if f in record.fields] if info is not None and info.fields else []
        if len(order) != len([f for f in record.fields if f is not None]):
            order = [f for f in record.fields if f is not None]
        return record.field(order[n]) if n < len(order) else UNKNOWN

    def _field_value(self, receiver: cst.BaseExpression, attr: str, unknown: bool = False) -> Optional[Value]:
        """What a class annotates its field `attr` as, for a receiver whose class the code names; or, for a name of
        nothing known (`unknown`), whose name shares a word with the one class of this module that declares `attr`
        (`lora_info.lora_ranks` of `class LoRABatchInfo: lora_ranks: torch.Tensor`)."""
        finder = getattr(self.env, "receiver_class", None)
        info = finder(receiver) if finder is not None else None
        if info is None and unknown and type(receiver) is cst.Name:
            info = self._field_owner(receiver.value, attr)
        if info is None or attr not in info.field_annotations or self.index.classes.get(info.name) is not info:
            # A class of this module only: the prefilter reads the same fields (others': 50% slower, issue 26).
            return None
        value = self._annotated(info.field_annotations[attr])
        return value if value.kind is not Kind.UNKNOWN else None

    def _declared_field(self, class_name: str, attr: str) -> Optional[Value]:
        """What a class of this module annotates its field `attr` as (`text_states: torch.Tensor`), or None."""
        info = self.index.classes.get(class_name)
        if info is None or attr not in info.field_annotations:
            return None
        value = self._annotated(info.field_annotations[attr])
        return value if value.kind is not Kind.UNKNOWN else None

    def _field_owner(self, name: str, attr: str) -> Optional[ClassInfo]:
        """The one class of this module that declares the field `attr`, where `name` shares a word with it."""
        owners = self.index.memo.get("field owners")
        if owners is None:
            found: dict[str, list[ClassInfo]] = {}
            for info in self.index.classes.values():
                for field_name in info.field_annotations:
                    found.setdefault(field_name, []).append(info)
            owners = self.index.memo["field owners"] = found
        candidates = owners.get(attr, ())  # type: ignore[attr-defined]
        if len(candidates) != 1 or not sem.name_words(name) & sem.name_words(candidates[0].name):
            return None
        return candidates[0]

    def _recurrent_module(self, node: cst.BaseExpression, receiver: Value) -> bool:
        """A recurrent module (`nn.LSTM`, `nn.GRUCell`, a class of this module deriving from one or from `RNNBase`),
        whose `.bias` is the flag it was built with (its parameters are `bias_ih_l0`, ...): by its class where the
        value says it, else, for a module of unknown class, by its name (`self.lstm`, `self.gru`, `rnn`)."""
        held = None
        name = dotted_name(node) or ""
        info = self.index.classes.get(self.env.class_name or "") if name.startswith("self.") and name.count(".") == 1 else None
        if info is not None:  # `self.cell = nn.GRUCell(...)`, `self.rnn = MyLSTM(...)`
            held = info.torch_module_attributes.get(name[5:]) or info.attribute_classes.get(name[5:])
        if receiver.kind is Kind.HOST and receiver.wrapper is not None:
            held = receiver.wrapper
        if held is not None:
            classes, seen = [c.split(".")[-1] for c in held.split("|")], set()
            while classes:
                cls = classes.pop()
                if cls in _RECURRENT_CLASSES:
                    return True
                info = self.index.classes.get(cls)
                if info is not None and cls not in seen:
                    seen.add(cls)
                    classes.extend(info.base_names)
            return False
        last = name.split(".")[-1].lower()
        return receiver.kind is Kind.UNKNOWN and any(word in _RECURRENT_WORDS for word in last.split("_"))

    def _tensor_receiver_by_name(self, node: cst.BaseExpression) -> bool:
        """`x.weight.data`, `param.data`: `.data` of what is named like a parameter or read off a module."""
        name = dotted_name(node) or ""
        last = name.split(".")[-1]
        return last in sem.PARAMETER_ATTRIBUTE_NAMES or last in ("param", "p", "parameter")

    def _moved_to_cpu_in_class(self, path: str) -> bool:
        info = self.index.classes.get(self.env.class_name or "")
        return info is not None and path in info.cpu_paths

    def _module_function(self, name: str) -> bool:
        """`name` is a function defined at the module's top level (and so the summaries can run it)."""
        summaries = self.env.summaries
        return summaries is not None and summaries.functions.get(FunctionKey(None, name)) is not None

    # ------------------------------------------------------------------ isinstance
    # ------------------------------------------------------------------ views
    def view_of(self, base_node: cst.BaseExpression, base: Value, origin: str, partial: Optional[bool] = None) -> Value:
        if base.is_view or base.is_maybe_view_of_view:
            root = base.base
            inherited = base.partial
            made = base.base_made
        else:
            root = base.label or self.short_source(base_node)
            inherited = False
            made = (base.origin or COMPUTED) if base.is_fresh else None
        # A view of a part (of a view) is a part: `x[:2].t()` still pins all of `x`.
        part = inherited or (sem.is_partial_view_op(origin) if partial is None else partial)
        # A view of a part keeps the op that made the part (`narrow`, not the `.detach()` after it) for messages.
        shown = base.origin if inherited and base.is_view and base.origin else origin
        retyped = origin in (".view(dtype)", ".real", ".imag")
        if origin in sem.LAYOUT_KEEPING_VIEW_OPS:
            contiguous = base.contiguous
        else:
            contiguous = True if base.contiguous and origin in sem.CONTIGUITY_KEEPING_VIEW_OPS else None
        return Value(kind=Kind.TENSOR, provenance=Provenance.VIEW, base=root, origin=shown,
                     contiguous=contiguous, device=base.device, is_parameter=base.is_parameter, partial=part,
                     zero_dim=view_zero_dim(origin, base.zero_dim), why=base.why,
                     copy_of=base.copy_of, copy_op=base.copy_op, base_made=made, guessed_cpu=base.guessed_cpu,
                     dtype=None if retyped else base.dtype,
                     # A view of a mask (of indices) is one: `mask.expand_as(x)`, `mask[:, 0]`, `ids.view(-1)`.
                     bool_mask=base.bool_mask and not retyped, index_like=base.index_like and not retyped,
                     grad_leaf=base.grad_leaf and origin not in (".data", ".detach()"))  # a view of a leaf refuses writes too

    # ------------------------------------------------------------------ subscripts
    def _index_text(self, node: cst.Subscript) -> str:
        """`[:, 0]` of `x[:, 0]`, and `[0]` of `F.interpolate(x[None], ...)[0]` (not what follows the first `[`): read
        off the subscript's own elements, never its receiver (a chain of 200 subscripts renders each link once)."""
        return "[" + ", ".join(self.short_source(element.slice, 200) for element in node.slice) + "]"

    def index_kind(self, node: cst.Subscript, local: Optional[Locals] = None) -> IndexKind:
        """Basic (the result is a view) or advanced (a gathered copy), or unknown (also when what is
        indexed is known not to be a tensor: a dict, a list, a string)."""
        local = local or {}
        if string_keyed(node):
            return IndexKind.UNKNOWN
        receiver = as_indexed(node, self.evaluate(node.value, local))
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
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
            # `~x` indexes as `x` does: `~i` of an int is an int (`~0` is -1), `~mask` a mask (vllm-ascend PR #10442).
            return self._expression_index_kind(expr.expression, subscript, local)
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
        narrowed = narrowed_reference(node) if local else None  # `d["k"].item() if isinstance(d["k"], torch.Tensor) else …`
        if narrowed is not None and narrowed in local:
            return local[narrowed]
        positioned = self._module_list_item(node)
        if positioned is not None:
            return positioned
        receiver = self.contents(self.evaluate(node.value, local))
        receiver = as_indexed(node, receiver)
        single = len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
        if receiver.kind in (Kind.TENSOR_SEQUENCE, Kind.WRAPPER):
            if receiver.kind is Kind.TENSOR_SEQUENCE and not single:
                return receiver.with_(whole_partition=False)  # a slice of a split result: views of part of it
            if single:
                key = node.slice[0].slice.value  # type: ignore[attr-defined]
                if isinstance(key, cst.SimpleString) and receiver.kind is Kind.WRAPPER:
                    return receiver.keyed(str(key.evaluated_value))  # `d["key"]` of a dict literal
                if isinstance(key, cst.Integer) and receiver.kind is Kind.WRAPPER and receiver.wrapper == "tuple" \
                        and int(key.evaluated_value) < len(receiver.elements):
                    return receiver.elements[int(key.evaluated_value)]
                if isinstance(key, cst.Integer) and receiver.kind is Kind.WRAPPER and receiver.fields:
                    return self._nth_field(receiver, int(key.evaluated_value))  # `outputs[0]` of a `ModelOutput`
                return receiver.element()
            return receiver if receiver.kind is Kind.WRAPPER and receiver.wrapper in ("list", "tuple") else UNKNOWN
        if receiver.kind is Kind.INT_LIST:
            return INT if single else receiver
        if receiver.kind is Kind.HOST and isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
            return INT if single else HOST  # `x.shape[-1]`: a Python int
        if receiver.kind is Kind.HOST and receiver.wrapper is not None and single and self.env.summaries is not None \
                and isinstance(node.slice[0].slice.value, cst.Integer):  # type: ignore[attr-defined]
            # `outputs[0]` of `outputs: Seq2SeqModelOutput`: its first field, as the class annotates it.
            item = self.env.summaries.nth_field_value(receiver.wrapper, int(node.slice[0].slice.value.evaluated_value))  # type: ignore[attr-defined]
            if item is not None:
                return item
        if receiver.kind is Kind.HOST or self.keyed_by_string(node, local):
            # `d["key"]`, `d[name]` of `name: str`: tensors are not indexed by strings; for `d["key"]`, what the function
            # stored under the key or how it uses it (`state["s"] = torch.zeros_like(p)`, `d["end"].fill_(n)`).
            reference = keyed_reference(node)
            return (local.get(stored_key(reference)) or self.env.lookup(stored_key(reference))) if reference else UNKNOWN
        if receiver.kind is Kind.ARRAY:
            # A NumPy array's items and slices: arrays, or NumPy scalars where an int picks one (a basic index then).
            return receiver if not any(type(e.slice) is cst.Index for e in node.slice) else NOT_A_TENSOR
        if receiver.beyond_none and receiver.is_tensor:
            # A tensor on some paths, something unknown (a tuple) on others: its item may be either's. (The rules read
            # it as the tensor's item; `viewlint beliefs` claims neither.)
            return self._tensor_item(node, receiver, local).with_(beyond_none=True)
        return self._tensor_item(node, receiver, local)

    def _tensor_item(self, node: cst.Subscript, receiver: Value, local: Locals) -> Value:
        kind = self.index_kind(node, local)
        # `arr[:, 0]` on a known host value (a NumPy array from `.numpy()`) is not tensor indexing; `x[idx]` with a
        # tensor index is (only tensors and arrays take one).
        tensor_like = receiver.is_tensor or (receiver.kind is Kind.UNKNOWN and (
            self._tensor_style_index(node) or self._indexed_by_tensor(node, local)))
        if not tensor_like:
            # `lens_cpu[1:]` of a value known only to be on the host: whatever it is, it stays there.
            return UNKNOWN.with_(device=Device.CPU) if receiver.kind is Kind.UNKNOWN and receiver.device is Device.CPU else UNKNOWN
        if kind is IndexKind.BASIC:
            view = self.view_of(node.value, receiver, self._index_text(node), partial=not self._whole_index(node))
            if self._selects_last_dim(node, local):
                view = view.with_(contiguous=False)
            elif receiver.contiguous and self._leading_rows(node, local):
                view = view.with_(contiguous=True)  # `buf[slot]`, `buf[a:b]` of a row-major tensor: whole rows of it
            if self._drops_a_dimension(node, local):
                view = view.with_(reduced=True)  # `t[i]` of a 1-D `t` is 0-dim
            if any(isinstance(element.slice, cst.Slice) for element in node.slice):
                view = view.with_(zero_dim=False)  # `t[:n]` keeps the dimension it slices
            return view
        if kind is IndexKind.ADVANCED:
            # A gathered copy: it owns its storage; `origin`/`base` say where it was gathered from. It is
            # row-major when the input is (advanced indexing keeps a transposed input's layout).
            # Not where a tensor index that may be 0-dim follows a kept dimension: that one selects (a view with the
            # input's strides: `mask[:, stage]` of a scalar `stage` is not contiguous).
            contiguous = True if receiver.contiguous and self.row_major_either_way(node, local) else None
            # Gathered by a permutation of all the rows (`logits[scores.argsort()]`): a copy as big as the input, whose
            # rows are not a deliberate pick (`values.DELIBERATE_BASES`).
            whole = len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
                and self.evaluate(node.slice[0].slice.value, local).permutation
            return fresh(contiguous=contiguous, device=receiver.device, origin=PERMUTED_INDEX if whole else ADVANCED_INDEX,
                         base=self.short_source(node.value), zero_dim=False, why=receiver.why)
        return Value(kind=Kind.TENSOR, device=receiver.device, why=receiver.why)

    def row_major_either_way(self, node: cst.Subscript, local: Optional[Locals] = None) -> bool:
        """Whether `node`, an advanced index of a row-major tensor, is row-major whatever its tensor indices turn out to
        be: a 0-dim integer tensor index selects instead of gathering (a view with the input's strides), which is
        row-major only before every kept dimension (`x[s]`, `x[s, idx]`); `mask[:, stage]` of a scalar `stage` is not.
        A tensor index known to have a dimension (a mask, an index tensor, one known 1-D or more) gathers."""
        local = local or {}
        kept = False  # a dimension kept before this index (`:`, `...`, `None`)
        for element in node.slice:
            index = element.slice
            if not isinstance(index, cst.Index) or isinstance(index.value, cst.Ellipsis) \
                    or (isinstance(index.value, cst.Name) and index.value.value == "None"):
                kept = True
                continue
            value = self.evaluate(index.value, local)
            if kept and value.is_tensor and not (value.zero_dim is False or value.bool_mask or value.index_like
                                                 or rank_floor(value) >= 1):
                return False
        return True

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

    def keyed_by_string(self, node: cst.Subscript, local: Optional[Locals] = None) -> bool:
        """`d["key"]`, `d[name]` of a string `name` (annotated `str`, bound to a literal): what is indexed is no tensor
        (tensors refuse strings)."""
        if string_keyed(node):
            return True
        index = node.slice[0].slice if len(node.slice) == 1 else None
        return isinstance(index, cst.Index) and isinstance(index.value, cst.Name) \
            and self.evaluate(index.value, local or {}).host_type == "str"

    def _leading_rows(self, node: cst.Subscript, local: Locals) -> bool:
        """`x[i]` with an int `i`, `x[a:b]`: one index or a stepless slice of the first dimension only."""
        if len(node.slice) != 1:
            return False
        index = node.slice[0].slice
        if isinstance(index, cst.Slice):
            return index.step is None
        value = index.value
        return isinstance(value, cst.Integer) or (
            isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer)) \
            or self.evaluate(value, local).kind is Kind.INT

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
                return Value(kind=Kind.WRAPPER, elements=tuple(self.iterate(a.value, local) for a in node.args if a.keyword is None), wrapper="tuple")
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
        if value.kind is Kind.ARRAY:
            return ARRAY_ITEM  # NumPy scalars of a 1-D array, rows of another: no tensor either way
        return on_the_host_if(value)

    def bind_target_into(self, target: cst.BaseExpression, value: Value, scope: Locals) -> None:
        if isinstance(target, cst.Name):
            if fields_mark(target.value) in scope:
                forget_fields(scope, target.value)  # a new object: the old one's fields are not its
            scope[target.value] = labelled(value, target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = list(target.elements)
            value = unpacked_choice(value, len(elements)) if value.choices else value
            for i, element in enumerate(elements):
                if isinstance(element, cst.StarredElement):
                    item = value if value.kind is Kind.TENSOR_SEQUENCE else UNKNOWN
                    self.bind_target_into(element.value, item, scope)
                    continue
                if value.kind is Kind.TENSOR_SEQUENCE:
                    item = value.elements[0] if len(value.elements) == 1 else value.element()
                    if i == 1 and value.origin in sem.SECOND_ITEM_INDICES:  # `vals, idx = x.topk(k)`: the input's
                        full = value.origin.split(".")[-1].startswith(("topk", "sort", "unique"))  # rank (one fewer: maybe 0)
                        item = item.with_(index_like=True, zero_dim=False if full else None)
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
                    item = on_the_host_if(value)
                self.bind_target_into(element.value, item, scope)
        elif isinstance(target, cst.Attribute):
            name = dotted_name(target)
            if name is not None and name.startswith("self."):
                if value is UNKNOWN and name.count(".") > 1:
                    # `self.linear.weight = bnb.nn.Params4bit(...)`: no longer what a submodule's `.weight` is by its
                    # name, but an object nothing here knows (read back as bound, not guessed again).
                    value = UNKNOWN.with_(why=f"assigned to `{name}` here")
                scope[name] = value
            elif name is not None and name.count(".") == 1 and name.split(".")[0] in scope and name.split(".")[0] != "cls":
                # `item.embeddings = emb[0]` on an object this function holds: read back as set, and handed on with
                # the object (`self._cache(item)`: see `ModuleSummaries.bind_arguments`).
                scope[name] = UNKNOWN.with_(why=f"assigned to `{name}` here") if value is UNKNOWN else value
                scope[fields_mark(name.split(".")[0])] = UNKNOWN
