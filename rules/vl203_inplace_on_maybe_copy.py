"""VL203: an in-place write on the result of a conversion that copies when it has to."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from viewlint.analysis import features, semantics
from viewlint.analysis.temporaries import TemporaryTracker, TracksTemporaries, inplace_chain_receiver
from viewlint.analysis.tree import dotted_name
from viewlint.analysis.values import IndexKind, Kind, Value
from viewlint.rule import Rule

# What `_maybe_copy` recognises: the methods, and `torch.reshape`/`torch.flatten`/`torch.ravel`.
_MAYBE_COPY_CALLS = semantics.MAYBE_COPY_METHODS | {"reshape", "flatten", "ravel"}


class InplaceOnMaybeCopy(TracksTemporaries, Rule):
    """
    ## What it does
    Flags an in-place write on the result of `reshape`, `flatten`, `contiguous`, `to`,
    `type`, `float`, `half`, `cpu`, `cuda` and similar conversions of a tensor when that
    result is thrown away: `x.reshape(-1).zero_()` as a statement, or
    `y = x.float(); y.add_(1)` with `y` never read again.

    ## Why it matters
    These conversions return `x` itself (or a view of it) when they can, and a new tensor
    when they cannot: `reshape` of a non-contiguous tensor, `float()` of a half tensor,
    `.cuda()` of a CPU tensor. The write reaches `x` only in the first case; in the second
    it lands in a copy nobody reads. The code works in one configuration and silently does
    nothing in another.

    ## Example
    ```python
    x = torch.zeros(4, 3).t()  # not contiguous
    x.reshape(-1).zero_()      # reshape copies: x is unchanged
    y = x.half()
    y.add_(1)                  # x is unchanged
    ```

    ## Fix
    Write into `x` directly (`x.zero_()`, `x.add_(1)`), or use an operation that is always
    a view (`x.view(-1)`, which raises instead of copying), or assign the converted result
    back (`x.copy_(y)`).
    Fix safety: no automatic fix; which tensor was meant to change is a decision.

    A converted value that is used (`z = x.float().add_(1)`, or `y` read later) is not
    flagged: then the copy is the point.
    """

    code = "VL203"
    default_enabled = False
    name = "inplace-on-maybe-copy"
    summary = "In-place write on a `reshape/contiguous/to/float/...` result is lost when it copied"
    fix_applicability = None

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        # In-place on a conversion (`x.float().add_(1)`), or a write into a name bound to one (`flat[:3] = 0`).
        return ((features.flag("inplace-on-maybe-copy"),), (features.flag("write-into-maybe-copy"),))

    def __init__(self, facts, options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(facts, options)
        self.temporaries = TemporaryTracker()
        # id(Assign) -> (name of the converted tensor, conversion text) for `y = x.float()` bindings.
        self._conversions: dict[int, tuple[str, str]] = {}
        # name -> (the conversion call, what the comprehension iterates with) of `grads = [p.grad.to(dtype) for p in
        # params]`, while that is the name's last binding.
        self._converted_lists: dict[str, tuple[cst.Call, str]] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        super().visit_Assign(node)
        conversion = self._maybe_copy(node.value)
        if conversion is not None:
            self._conversions[id(node)] = conversion
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            name = node.targets[0].target.value
            converted = self._converted_items(node.value)
            if converted is not None:
                over = self.facts.short_source(node.value.for_in.target)  # type: ignore[attr-defined]
                self._converted_lists[name] = (converted, over)
            else:
                self._converted_lists.pop(name, None)
        for target in node.targets:
            if not isinstance(target.target, cst.Subscript):
                continue
            write_text = "`" + self.facts.short_source(target.target) + " = …`"
            if self.facts.index_kind(target.target) is IndexKind.BASIC \
                    and self._check_write_through_copy(target.target, target.target.value, write_text):
                continue
            self._check_write_into_conversion(target.target, write_text)

    def _check_write_into_conversion(self, subscript: cst.Subscript, write_text: str) -> None:
        """`w.T.contiguous()[0] = 1`: a store into the result of a conversion no name holds."""
        conversion = self._maybe_copy(subscript.value)
        if conversion is None:
            return
        call = subscript.value
        if isinstance(call, cst.Call) and (call.func.attr.value if isinstance(call.func, cst.Attribute) else "reshape") \
                in semantics.LAYOUT_ONLY_COPY_METHODS:
            # `cache.flatten(0, 1)[slots] = v` is the usual way to write into a contiguous cache: a reshape copies
            # only what is known not to be contiguous (`x.t()`, a transpose) before a store is called lost.
            receiver = call.func.value if isinstance(call.func, cst.Attribute) else self._first_positional(call)
            layout = self.facts.value_of(receiver) if receiver is not None else None
            if layout is None or not (layout.contiguous is False or layout.is_view and layout.origin in semantics.TRANSPOSING_ORIGINS):
                return
        source, op = conversion
        self.report(
            subscript,
            f"{write_text} writes into the result of `{op}`, which is a copy whenever it could not return "
            f"`{source}` itself: then `{source}` is unchanged and the result is thrown away",
            fix_message=f"write into `{source}` directly (`{source}[…] = …`)",
        )

    def _converted_items(self, value: cst.BaseExpression) -> Optional[cst.Call]:
        """The conversion of `[p.grad.detach().to(dtype) for p in params]`: a list of tensors each made by a conversion
        that returns its receiver when it can (`.to(dtype)`, `.float()`, `.contiguous()`), and copies otherwise."""
        if not isinstance(value, cst.ListComp) or not isinstance(value.elt, cst.Call):
            return None
        call = value.elt
        if not isinstance(call.func, cst.Attribute) or call.func.attr.value not in semantics.MAYBE_COPY_METHODS \
                or (call.func.attr.value in ("to", "type") and not call.args):
            return None
        items = self.facts.value_of(value)
        return call if items.kind is Kind.WRAPPER and items.elements and all(e.is_tensor for e in items.elements) else None

    def visit_For(self, node: cst.For) -> None:
        super().visit_For(node)
        if not isinstance(node.iter, cst.Name) or not isinstance(node.target, cst.Name):
            return
        converted = self._converted_lists.get(node.iter.value)
        if converted is None or self.facts.reads_after(node.iter.value, node) != 0:
            return
        call, over = converted
        item = node.target.value
        written = next((c for c in _statement_calls(node.body) if isinstance(c.func, cst.Attribute)
                        and isinstance(c.func.value, cst.Name) and c.func.value.value == item
                        and semantics.is_inplace_method(c.func.attr.value)
                        and c.func.attr.value not in semantics.METADATA_INPLACE_METHODS), None)
        if written is None:
            return
        source = self.facts.short_source(call.func.value)  # type: ignore[attr-defined]
        op = f".{call.func.attr.value}({'…' if call.args else ''})"  # type: ignore[attr-defined]
        write = f"{item}.{written.func.attr.value}(…)"  # type: ignore[attr-defined]
        self.report(
            call,
            f"`{node.iter.value}` holds `{source}{op}` for each `{over}`, and `for {item} in {node.iter.value}:` writes into "
            f"them in place (`{write}`), but `{node.iter.value}` is never read again: whenever `{op}` copies, the "
            f"writes never reach `{source}`",
            fix_message=f"write into `{source}` itself (leave out `{op}`), or copy the results back",
        )

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, (cst.Name, cst.Subscript)):
            written = node.target.value if isinstance(node.target, cst.Subscript) else node.target
            operator = cst.Module(body=[]).code_for_node(node.operator).strip()
            write_text = f"`{self.facts.short_source(node.target)} {operator} …`"
            if self.facts.value_of(written).is_tensor and self._check_write_through_copy(node.target, written, write_text):
                return
            if isinstance(node.target, cst.Subscript):
                self._check_write_into_conversion(node.target, write_text)

    def _check_write_through_copy(self, node: cst.CSTNode, written: cst.BaseExpression, write_text: str) -> bool:
        """A write into (a view of) `y = x.flatten()` whose source `x` is read afterwards while `y` is not:
        the write was meant for `x`, and reaches it only when the conversion did not copy."""
        facts = self.facts
        value = facts.value_of(written)
        if not value.is_tensor or value.copy_of is None or "." in value.copy_of:
            return False
        holder = value.base if value.is_view and value.base else dotted_name(written)
        if holder == value.copy_of:  # `x` was itself a view: the conversion's result keeps its base's name
            holder = dotted_name(written)
        if holder is None or "." in holder or holder == value.copy_of:
            return False
        statement = facts.current_statement or node
        if not facts.reads_after(value.copy_of, statement) or facts.reads_after(holder, statement):
            return False
        source, op = value.copy_of, value.copy_op or "a conversion"
        through = f" (a view of `{holder}`)" if holder != dotted_name(written) else ""
        facts.report(
            self, node,
            f"{write_text} writes into `{self.facts.short_source(written)}`{through}, the result of `{source}{op}`, "
            f"which is a copy whenever it could not return `{source}` itself; `{holder}` is never read again and "
            f"`{source}` is: the write reaches `{source}` only when nothing was copied",
            fix_message=f"write into `{source}` directly, or make sure `{op}` returns a view (`{source} = {source}.contiguous()` first)",
            applicability=self.fix_applicability,
        )
        return True

    def visit_Expr(self, node: cst.Expr) -> None:
        receiver = inplace_chain_receiver(node.value)
        if receiver is None:
            return
        call = self._first_inplace_call(node.value)  # type: ignore[arg-type]
        method = call.func.attr.value  # type: ignore[attr-defined]
        if method in semantics.METADATA_INPLACE_METHODS:
            return
        call_text = f".{method}({'…' if call.args else ''})"
        if self._check_write_through_copy(call, receiver, f"`{self.facts.short_source(receiver)}{call_text}`"):
            return
        conversion = self._maybe_copy(receiver)
        if conversion is not None:
            source, op = conversion
            self.report(
                call,
                f"`{self.facts.short_source(receiver)}{call_text}` writes into the result of `{op}`, which is a "
                f"copy whenever it could not return `{source}` itself: then `{source}` is unchanged",
                fix_message=f"write into `{source}` directly, or keep and use the converted tensor",
            )
            return
        if not isinstance(receiver, cst.Name):
            return
        binding = self.temporaries.binding_of(receiver.value)
        if binding is None:
            return
        conversion = self._conversions.get(id(binding)) or self._converted_binding(receiver, binding)
        if conversion is None or not self.temporaries.is_dead_after(receiver, binding, self.facts.in_loop):
            return
        source, op = conversion
        self.report(
            call,
            f"`{receiver.value}` is `{source}{op}`, never read again: `{receiver.value}{call_text}` reaches "
            f"`{source}` only when `{op}` did not copy",
            fix_message=f"write into `{source}` directly, or use `{receiver.value}` afterwards",
        )

    def _converted_binding(self, name: cst.Name, binding: cst.CSTNode) -> Optional[tuple[str, str]]:
        """`flat = cache.reshape(-1, d)` where only the engine knows `flat` is a tensor (`flat.index_copy_(…)` says so,
        `cache` is not known): the conversion its value records (`Value.copy_of`)."""
        value = self.facts.value_of(name)
        if not value.is_tensor or value.copy_of is None or value.copy_op is None or not isinstance(binding, cst.Assign):
            return None
        call = binding.value
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) \
                or call.func.attr.value not in _MAYBE_COPY_CALLS or dotted_name(call.func.value) != value.copy_of:
            return None
        return value.copy_of, f".{call.func.attr.value}({'…' if call.args else ''})"

    def _maybe_copy(self, expr: cst.BaseExpression) -> Optional[tuple[str, str]]:
        """(receiver text, `.op()` text) when `expr` is a conversion of a known tensor that may copy it."""
        if not isinstance(expr, cst.Call):
            return None
        func = expr.func
        qualified = self.facts.qualify(func)
        if qualified in ("torch.reshape", "torch.flatten", "torch.ravel"):
            receiver_node = self._first_positional(expr)
            op = qualified.split(".")[-1]
            if receiver_node is None:
                return None
            receiver = self.facts.value_of(receiver_node)
            if not self._may_copy(receiver, op):
                return None
            return self.facts.short_source(receiver_node), f"torch.{op}(…)"
        if qualified is not None or not isinstance(func, cst.Attribute):
            return None
        op = func.attr.value
        if op not in semantics.MAYBE_COPY_METHODS:
            return None
        receiver = self.facts.value_of(func.value)
        if not self._may_copy(receiver, op):
            return None
        if op in semantics.LAYOUT_ONLY_COPY_METHODS and self._view_of_contiguous(func.value):
            return None
        if op in ("to", "type") and not expr.args:
            return None  # `.to()` / `.type()` with no target: a no-op, or a dtype string query
        return self.facts.short_source(func.value), f".{op}({'…' if expr.args else ''})"

    @staticmethod
    def _may_copy(receiver: Value, op: str) -> bool:
        """Only known tensors; and not where the analysis proves the conversion returns the receiver. A conversion a
        module has too (`x.float()`, `x.cuda()`) of something unknown, then written into, is of a tensor: a module's
        would have nothing to write into."""
        if not receiver.is_tensor:
            return receiver.kind is Kind.UNKNOWN and op in semantics.MODULE_SHARED_METHODS
        if op in semantics.LAYOUT_ONLY_COPY_METHODS and receiver.contiguous:
            return False  # reshapes of contiguous memory are views; `.contiguous()` returns self
        if op == "cpu" and receiver.cpu:
            return False  # `.cpu()` of a CPU tensor returns it
        return True

    def _view_of_contiguous(self, expr: cst.BaseExpression) -> bool:
        """`buf.view(torch.uint8)`, `buf.data.unsqueeze(0)` of a known-contiguous `buf`: contiguous too."""
        while True:
            if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
                expr = expr.value
            elif (
                isinstance(expr, cst.Call)
                and isinstance(expr.func, cst.Attribute)
                and expr.func.attr.value in semantics.CONTIGUITY_PRESERVING_VIEW_METHODS
            ):
                expr = expr.func.value
            else:
                break
            value = self.facts.value_of(expr)
            if value.is_tensor and value.contiguous:
                return True
        return False

    @staticmethod
    def _first_positional(call: cst.Call) -> Optional[cst.BaseExpression]:
        for arg in call.args:
            if arg.keyword is None and not arg.star:
                return arg.value
        return None

    @staticmethod
    def _first_inplace_call(call: cst.Call) -> cst.Call:
        current = call
        while isinstance(current.func, cst.Attribute) and isinstance(current.func.value, cst.Call) \
                and isinstance(current.func.value.func, cst.Attribute) \
                and semantics.is_inplace_method(current.func.value.func.attr.value):
            current = current.func.value
        return current


def _statement_calls(body: cst.BaseSuite) -> list[cst.Call]:
    """The calls that are whole statements of a loop body, at its top level or under its `if`s."""
    found: list[cst.Call] = []
    statements = list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
    while statements:
        statement = statements.pop(0)
        if isinstance(statement, cst.If):
            statements.extend(statement.body.body if isinstance(statement.body, cst.IndentedBlock) else [statement.body])
        elif isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            found.extend(s.value for s in statement.body if isinstance(s, cst.Expr) and isinstance(s.value, cst.Call))
    return found
