"""What the tests around an expression say of the names in it: `isinstance`, `torch.is_tensor`, `type(x) is T`,
`x.is_cuda`, `x.is_contiguous()`, in `if` statements, conditional expressions and `and`/`or`, and what a
comprehension's targets hold. Part of `Evaluator` (a mixin: `Evaluator` is the only class that inherits it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from viewlint.analysis.config_paths import admitted, chosen_key, cst_test
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.tree import children, dotted_name, narrowed_reference
from viewlint.analysis.value_ops import Locals, conditional_key, cpu_test, storage_test
from viewlint.analysis.values import HOST, INT, NOT_A_TENSOR, UNKNOWN_TENSOR, Device, Kind, Value, join

# The abstract number types of `numbers` (and names a project gives tuples of Python number types).
_NUMBER_TYPES = frozenset({"Number", "Real", "Integral", "Complex", "Rational"})
# Comprehensions: their targets are bound for what they contain.
_COMPREHENSIONS = frozenset({cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp})
# Nodes whose body is another scope: the tests of the statement around them do not reach inside.
_NEW_SCOPES = frozenset({cst.Lambda, cst.FunctionDef, cst.ClassDef})


def _exact_type_test(test: cst.BaseExpression) -> Optional[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(x, T) for `type(x) is T` and `type(x) == T`."""
    if not (type(test) is cst.Comparison and len(test.comparisons) == 1
            and type(test.comparisons[0].operator) in (cst.Is, cst.Equal)):
        return None
    left = test.left
    if not (type(left) is cst.Call and type(left.func) is cst.Name and left.func.value == "type" and len(left.args) == 1):
        return None
    return left.args[0].value, test.comparisons[0].comparator


def none_test(test: cst.BaseExpression) -> Optional[tuple[cst.BaseExpression, bool]]:
    """(x, True) for `x is not None`, (x, False) for `x is None`."""
    if not (type(test) is cst.Comparison and len(test.comparisons) == 1):
        return None
    comparison = test.comparisons[0]
    if not (type(comparison.comparator) is cst.Name and comparison.comparator.value == "None"
            and type(comparison.operator) in (cst.Is, cst.IsNot)):
        return None
    return test.left, type(comparison.operator) is cst.IsNot


# `torch.Tensor`, as a node: the type `torch.is_tensor(x)` tests.
TENSOR_TYPE = cst.Attribute(value=cst.Name("torch"), attr=cst.Name("Tensor"))



class TypeTests:
    """`Evaluator`'s reading of type tests and of the names a statement's own tests narrow."""

    index: ModuleIndex
    _guarded: Optional[tuple[cst.CSTNode, dict[int, Locals]]]
    _narrowing_memo: Optional[dict[tuple[int, bool, int], tuple[list[tuple[str, Value]], cst.CSTNode, Optional[Locals]]]] = None

    if TYPE_CHECKING:  # the rest of `Evaluator`, which this part calls
        def evaluate(self, node: cst.BaseExpression, local: Locals) -> Value: ...
        def qualify(self, node: cst.BaseExpression) -> Optional[str]: ...
        def _comprehension_locals(self, comp: cst.CompFor, local: Locals) -> Locals: ...

    def branch_locals(self, node: cst.IfExp, local: Locals) -> tuple[Locals, Locals]:
        """The names as `node`'s body and its `else` see them: narrowed by its test, holding or not."""
        found = []
        for holds in (True, False):
            narrowed = self.narrowings(node.test, holds, local)
            found.append({**local, **dict(narrowed)} if narrowed else local)
        return found[0], found[1]

    def guarded_locals(self, statement: cst.CSTNode) -> dict[int, Locals]:
        """For the nodes of `statement` that see names the function's scope does not: a comprehension's targets,
        and what a test inside the statement says where it held or did not (a conditional expression's branches,
        the right operand of `and`/`or`): node id -> the names as they see them. Kept for the statement while the
        flow stands still; empty for the statements (most) with neither."""
        found = self._guarded
        if found is not None and found[0] is statement:
            return found[1]
        plain_key = ("no tests or comprehensions", id(statement))
        plain = self.index.memo.get(plain_key)
        if plain is not None and plain is statement:
            return {}  # (read once per module: every walk of the function, each summary's included, asks again)
        guarded: dict[int, Locals] = {}
        pending: list[tuple[cst.CSTNode, Locals]] = [(statement, {})]
        self._narrowing_memo = {}
        try:
            structured = self._walk_guarded(pending, guarded)
        finally:
            self._narrowing_memo = None
        if not structured:
            self.index.memo[plain_key] = statement
        self._guarded = (statement, guarded)  # what the names hold now: kept until the flow moves (`forget_values`)
        return guarded

    def _walk_guarded(self, pending: list[tuple[cst.CSTNode, Locals]], guarded: dict[int, Locals]) -> bool:
        """Fills `guarded`; whether the statement has a conditional expression, an `and`/`or` or a comprehension."""
        structured = False
        while pending:
            node, local = pending.pop()
            kind = type(node)
            if kind is cst.IfExp or kind is cst.BooleanOperation:
                structured = True
                if kind is cst.IfExp:
                    body, orelse = self.branch_locals(node, local)  # type: ignore[arg-type]
                    parts = ((node.test, local), (node.body, body), (node.orelse, orelse))  # type: ignore[attr-defined]
                else:
                    narrowed = self.narrowings(node.left, isinstance(node.operator, cst.And), local)  # type: ignore[attr-defined]
                    right = {**local, **dict(narrowed)} if narrowed else local
                    parts = ((node.left, local), (node.right, right))  # type: ignore[attr-defined]
                for part, seen in parts:
                    if seen:
                        guarded[id(part)] = seen
                    pending.append((part, seen))
                continue
            if kind in _NEW_SCOPES:
                continue
            if kind in _COMPREHENSIONS:
                # `[t.item() for t in x]`: its targets hold what iterating gives, for its element and its tests.
                structured = True
                local = self._comprehension_locals(node.for_in, local)  # type: ignore[attr-defined]
            for child in children(node):
                if local:
                    guarded[id(child)] = local
                pending.append((child, local))
        return structured

    def _conditional_arms(self, test: str, holds: bool, local: Locals) -> list[tuple[str, Value]]:
        """Under `if flag:` (or its `else`), the arm of `x = a if flag else b` that ran, where `x` still holds what
        that statement gave (`count = max(grid_h * grid_w, 1)` of `grid_h = ratio if exact else torch.ceil(...)`,
        under `if exact:`)."""
        lookup = getattr(self.env, "lookup", None)  # type: ignore[attr-defined]
        if lookup is None:
            return []
        names = lookup(conditional_key(test))
        found = []
        for name in names.fields if names.kind is Kind.WRAPPER else ():
            arms = lookup(conditional_key(test, name))
            current = local[name] if name in local else lookup(name)
            if arms.kind is Kind.WRAPPER and len(arms.elements) == 3 and current == arms.elements[2]:
                found.append((name, arms.elements[0] if holds else arms.elements[1]))
        return found

    def narrowings(self, test: cst.BaseExpression, holds: bool, local: Optional[Locals] = None) -> list[tuple[str, Value]]:
        """What names are where `test` holds (or does not): `isinstance(x, int)`, `not isinstance(x, torch.Tensor)`,
        `x.is_contiguous()`, and `a and b` conjunctions of them."""
        memo = self._narrowing_memo
        if memo is None:
            return self._narrowings(test, holds, local)
        # While `guarded_locals` reads a statement: `a and b and c ...` asks about each prefix of the chain once.
        key = (id(test), holds, id(local) if local else 0)
        found = memo.get(key)
        if found is None:
            found = memo[key] = (self._narrowings(test, holds, local), test, local)
        return found[0]  # type: ignore[no-any-return]

    def _chosen_submodules(self, test: cst.BaseExpression, holds: bool) -> list[tuple[str, Value]]:
        """`if self.norm_type == "ada_norm_zero":` in a class whose `__init__` builds `self.norm1` as one of several
        classes by `norm_type`: there (and in the `else`), `self.norm1` is one of the classes built for that setting
        (`config_paths`). Bound in both branches, so that after the `if` it is any of them again; under a name of its
        own (`chosen_key`), which only a call of `self.norm1` reads."""
        info = self.index.classes.get(self.env.class_name or "")  # type: ignore[attr-defined]
        if info is None or not info.attribute_guards:
            return []
        parsed = cst_test(test)
        if parsed is None:
            return []
        setting, values, inside = parsed
        found = []
        for attribute, guards in info.attribute_guards.items():
            if any(key == setting for constraints in guards.values() for key, _, _ in constraints):
                chosen = admitted(guards, setting, values, inside == holds)
                narrowed = self.env.lookup(chosen_key(attribute))  # type: ignore[attr-defined]
                if narrowed.kind is Kind.HOST and narrowed.wrapper and set(narrowed.wrapper.split("|")) <= set(guards):
                    # An `elif` after a test of the same setting: what the earlier tests left, too.
                    chosen = [c for c in chosen if c in narrowed.wrapper.split("|")]
                if chosen:
                    found.append((chosen_key(attribute), Value(kind=Kind.HOST, wrapper="|".join(sorted(chosen)))))
        return found

    def _narrowings(self, test: cst.BaseExpression, holds: bool, local: Optional[Locals] = None) -> list[tuple[str, Value]]:
        local = local or {}
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self.narrowings(test.expression, not holds, local)
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and holds:
            return self.narrowings(test.left, True, local) + self.narrowings(test.right, True, local)
        if isinstance(test, (cst.Attribute, cst.Comparison)):
            chosen = self._chosen_submodules(test, holds)
            if chosen:
                return chosen
        if isinstance(test, cst.Name):
            return self._conditional_arms(test.value, holds, local)
        checked = none_test(test)
        if checked is not None:
            # `if x is not None:` (or the `else` of `if x is None:`, and what follows `if x is None: return`): there,
            # `x = t if c else None` holds `t`.
            subject_node, is_not = checked
            subject = dotted_name(subject_node)
            if subject is None or holds != is_not:
                return []
            current = self.evaluate(subject_node, local)
            if current.optional and current.kind is not Kind.UNKNOWN and not current.beyond_none:
                return [(subject, current.with_(optional=False, may_be_none=False))]
            return []  # (a parameter annotated `Tensor | None` loses its flag in the flow's own scope: `Flow.not_none`)
        on_cpu = cpu_test(test)
        if on_cpu is not None:
            # `if t.is_cuda:` ... `else:`, `if t.device.type != "cpu": return None`: the tensor is on the
            # device in one branch, on the host in the other.
            # Only `is_cuda` says "on the device": the branch of `if t.device.type != "cpu": t = t.cpu()`
            # normalises what a caller might pass and most often never runs, so it is not a finding.
            tensor, says_cpu = on_cpu
            subject = dotted_name(tensor)
            current = self.evaluate(tensor, local)
            if subject is None or not current.is_tensor:
                return []
            if says_cpu == holds:
                return [(subject, current.with_(device=Device.CPU))]
            is_cuda = isinstance(test, cst.Attribute) and test.attr.value == "is_cuda"
            return [(subject, current.with_(device=Device.ACCELERATOR))] if is_cuda else []
        sized = storage_test(test)
        if sized is not None:
            # `if t.untyped_storage().nbytes() > t.numel() * t.element_size(): t = t.clone()`: where the storage is
            # no larger than the payload, a view of `t`'s covers all of it and pins nothing more.
            subject = dotted_name(sized[0])
            current = self.evaluate(sized[0], local)
            if subject is None or not current.is_tensor or holds == sized[1]:
                return []
            return [(subject, current.with_(partial=False))]
        if isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and test.func.attr.value == "is_contiguous" \
                and not test.args:
            # `if x.is_contiguous():` / `assert x.is_contiguous()`: reshapes of `x` there are views. Under
            # `if not x.is_contiguous():` it is not contiguous, whatever its callers pass (`x.contiguous()` there copies).
            subject = dotted_name(test.func.value)
            current = self.evaluate(test.func.value, local)
            return [(subject, current.with_(contiguous=holds))] if subject is not None and current.is_tensor else []
        exact = _exact_type_test(test)
        if exact is not None:
            # `type(x) is list`, `type(x) == int`: where it holds, `x` is what `isinstance(x, list)` says.
            subject_node, kind_node = exact
            subject = dotted_name(subject_node)
            value = self._isinstance_value(kind_node, self.evaluate(subject_node, local)) if holds else None
            return [(subject, value)] if subject is not None and value is not None else []
        if type(test) is cst.Call and len(test.args) == 1 and self.qualify(test.func) == "torch.is_tensor":
            subject_node, types = test.args[0].value, [TENSOR_TYPE]
        elif isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance" \
                and len(test.args) == 2:
            kinds = test.args[1].value
            subject_node = test.args[0].value
            types = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
        else:
            return []
        subject = dotted_name(subject_node) or narrowed_reference(subject_node)  # `x`, `self.x`, `kv_cache["end"]`, `item[1]`
        if subject is None or ("." in subject and not subject.startswith("self.") and holds is False):
            return []
        current = self.evaluate(subject_node, local)
        if not holds:
            # `else` of `isinstance(gate, torch.Tensor)`: whatever `gate` is there, it is not a tensor, and what
            # is read off it elsewhere (`gate.unsqueeze(0)` after `gate = torch.tensor(gate)`) does not make it one.
            tensor_types = [t for t in types if (self.qualify(t) or dotted_name(t) or "").split(".")[-1] in ("Tensor", "Parameter")]
            if tensor_types and len(tensor_types) == len(types) and (current.is_tensor or current.kind is Kind.UNKNOWN):
                return [(subject, NOT_A_TENSOR)]
            if tensor_types and len(tensor_types) == len(types) and current.kind is Kind.WRAPPER and current.optional:
                # `valid_lens: list[int] | torch.Tensor`, a tensor on some paths and a list on others: here the list.
                kept = tuple(e for e in current.elements if not e.is_tensor)
                return [(subject, current.with_(elements=kept, optional=False))]
            return []
        values = [self._isinstance_value(t, current) for t in types]
        if any(v is None for v in values):
            return []
        result = values[0]
        for value in values[1:]:
            result = join(result, value)  # type: ignore[arg-type]
        return [(subject, result)]  # type: ignore[list-item]

    def _isinstance_value(self, kind: cst.BaseExpression, current: Value) -> Optional[Value]:
        """What `isinstance(x, kind)` says `x` is (None: it says nothing the analysis uses)."""
        name = self.qualify(kind) or dotted_name(kind) or ""
        last = name.split(".")[-1]
        if last == "int":
            return INT
        if last in ("float", "bool", "str", "bytes", "complex") or last.lstrip("_") in _NUMBER_TYPES:
            return HOST  # `numbers.Number`, and a project's `_Number = (int, float)`
        if last in ("Tensor", "Parameter") and (name.startswith("torch") or last == name):
            if current.kind in (Kind.HOST, Kind.INT, Kind.INT_LIST) or (current.kind is Kind.UNKNOWN and current.cpu):
                # A value the code builds from literals, config reads or host lists is on the host, if a tensor at all
                # (`idx = self.fullatt_block_indexes; if isinstance(idx, torch.Tensor): idx = idx.tolist()`,
                # `max_q = max(batch.seq_lens_cpu)`, then `max_q.item() if isinstance(max_q, torch.Tensor) else max_q`).
                return UNKNOWN_TENSOR.with_(device=Device.CPU)
            return current if current.is_tensor else UNKNOWN_TENSOR.with_(device=current.device)
        if last == "ndarray":
            return Value(kind=Kind.ARRAY, why="`isinstance(…, np.ndarray)`")
        if last in ("list", "tuple", "List", "Tuple", "Sequence"):
            if current.kind in (Kind.WRAPPER, Kind.TENSOR_SEQUENCE, Kind.INT_LIST):
                return current
            return Value(kind=Kind.WRAPPER, wrapper="list", device=Device.CPU if current.cpu else Device.UNKNOWN)
        if last in ("dict", "Dict", "Mapping"):
            return current if current.kind is Kind.WRAPPER else Value(kind=Kind.WRAPPER, wrapper="dict")
        reference = dotted_name(kind)
        if reference is not None and not current.is_tensor and (reference in self.index.classes or (
                reference in self.index.relative_imports and reference[:1].isupper())):
            # `isinstance(past_key_values, EncoderDecoderCache)`, a class of this module or one imported from another of
            # the package: an object of that class there (what the class is, is read where it is used, if it is).
            return Value(kind=Kind.HOST, wrapper=reference)
        return None
