"""VL102: `.contiguous()`/`.reshape()`/`.to()`/casts on a view before storing it may not copy at all."""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst

from viewlint.analysis import features, semantics
from viewlint.analysis.values import DELIBERATE_BASES, Value
from viewlint.diagnostics import Applicability
from viewlint.rule import Rule
from viewlint.analysis.returns import quoted_base
from viewlint.analysis.tree import descendants, enclosing_statement, parent_map


class IneffectiveOwnershipFix(Rule):
    """
    ## What it does
    Flags a view of part of a tensor that went through `.contiguous()`, `.reshape()`,
    `.flatten()`, `.to(...)`, `.float()`/`.half()`-style casts, `torch.as_tensor`, or `.cpu()` of a
    CPU-known tensor (alone or chained with `.detach()`) and is then stored in a long-lived place (see VL101)
    or written with `torch.save` (see VL103). When the fix was made before the container that holds it is
    stored or saved (`result["bos"] = {k: t[i, 0].contiguous() ...}`, then `torch.save(result, path)`), the finding
    sits on the `.contiguous()` call, where the fix goes. A cast to a named dtype (`.type(torch.int32)`,
    `.to(torch.float16)`, `.int()`) is taken to copy: code casts what has another dtype.

    ## Why it matters
    Each of these returns its input *unchanged* whenever it can: `.contiguous()` of a
    contiguous split piece is the piece itself, `.to(dtype)` to the dtype it already has and
    `.cpu()` of a CPU tensor return `self`, `.reshape()` returns a view when strides allow.
    The code looks as if it gave the value its own storage, but the stored value can still
    pin the whole base tensor (or write all of it to the file).

    ## Example
    ```python
    for key, piece in zip(keys, torch.split(batch, counts)):
        self.cache[key] = piece.contiguous()  # the same storage as `batch`
    ```

    Not flagged: `.contiguous()` of a view that is known to be strided (`x[..., 0]`), which
    always copies; explicit device moves (`.cpu()`, `.cuda()`, `.to("cpu")`), since code moves
    tensors that live elsewhere (unless the view is known to be on the CPU already).

    ## Fix
    `.clone()` always copies exactly the view's elements:
    ```python
        self.cache[key] = piece.clone()
    ```
    Fix safety: unsafe. `--unsafe-fixes` replaces `.contiguous()` with
    `.clone(memory_format=torch.contiguous_format)` (the same layout guarantee, always a copy);
    other ops get a hint only.
    """

    code = "VL102"
    default_enabled = False
    name = "ineffective-ownership-fix"
    summary = "`.contiguous()`/`.reshape()`/`.to()` of a view may return the same storage: store `.clone()`"
    fix_applicability = Applicability.UNSAFE

    @classmethod
    def prefilter_needs(cls, index: Any, settings: Any) -> features.Needs:
        # (What is saved may be a view the callers made: `def tensor2bytes(t): torch.save(t.detach().cpu(), buf)`.)
        return ((features.flag("retains-view"),), (("call", "save"),))

    def __init__(self, facts, options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(facts, options)
        self._scopes: list[cst.CSTNode] = []
        self._parents: dict[int, dict[int, cst.CSTNode]] = {}  # per scope: id(node) -> parent, when asked
        self._reported: set[int] = set()  # the op calls already reported

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()
        self._parents.pop(id(original_node), None)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._check(node)

    def visit_Call(self, node: cst.Call) -> None:
        self._check(node)

    def _check(self, node: cst.CSTNode) -> None:
        facts = self.facts
        events = [] if facts.in_setup_function else facts.store_events(node)  # `__init__` stores are layout
        stores = [(e.value_node, e.value, f"stored in `{e.target}`") for e in events]
        # A file gets the whole base storage whoever else holds it; a container only matters for short-lived bases.
        if isinstance(node, cst.Call) and facts.qualify(node.func) == "torch.save" and node.args:
            saved = node.args[0].value
            stores.append((saved, facts.value_of(saved), "written by `torch.save`"))
        for value_node, value, where in stores:
            for view in self._ineffective_views(value, saved="torch.save" in where):
                if "torch.save" not in where and facts.pins_nothing_more(value, view):
                    continue
                self._check_view(value_node, view, where)

    def _check_view(self, value_node: cst.BaseExpression, view: Value, where: str) -> None:
        facts = self.facts
        op = view.ownership_op or ""
        op_name = op.rsplit(".", 1)[-1].removesuffix("()")
        if op == ".to(dtype)" or op_name in semantics.DTYPE_CAST_METHODS:
            return  # code casts tensors that have another dtype: the cast copies
        call = self._op_call(value_node, op_name)
        statement = None
        if call is None:
            # Made earlier (`entry[k] = t[i, 1:n].contiguous()`, then `torch.save(entry, path)`): the op's own call
            # is where the fix goes.
            call, statement = self._earlier_op_call(view, op_name)
        if call is not None and (self._device_move_copies(call) or self._dtype_cast_copies(call)):
            return
        if call is not None:
            if id(call) in self._reported:
                return
            self._reported.add(id(call))
        shown = facts.short_source(call) if call is not None else facts.short_source(value_node)
        later = f" (then {where})" if statement is not None else ""
        where = "" if statement is not None else f" {where}"
        message = (
            f"`{shown}`{where}{later} may share the storage of {quoted_base(view.base)}: `{op}` returns its input "
            f"unchanged when it can, and the input is a view (via `{view.origin}`), so all of {quoted_base(view.base)} "
            f"{'stays alive' if 'torch.save' not in where + later else 'can be written to the file'}; use `.clone()`"
        )
        edits = self._edits(call, op_name)
        self.report(value_node if call is None else call, message,
                    fix_message=f"replace `{op}` with `.clone()`" if op_name == "contiguous" else f"store a `.clone()` (after `{op}`)",
                    edits=edits, statement=statement)

    def _earlier_op_call(self, view: Value, op_name: str) -> tuple[Optional[cst.Call], Optional[cst.CSTNode]]:
        """The one `<base><origin>.<op>()` call of the current function (`t[i, 1:n].contiguous()` for a view of `t`
        via `[i, 1:n]`) and its statement; (None, None) when there is not exactly one."""
        if view.base is None or view.origin is None or not view.origin.startswith("["):
            return None, None
        scope = self._scopes[-1] if self._scopes else self.facts.module
        wanted = view.base + view.origin
        found = [node for node in descendants(scope)
                 if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == op_name
                 and not node.args and self.facts.source(node.func.value) == wanted]
        if len(found) != 1:
            return None, None
        parents = self._parents.get(id(scope))
        if parents is None:
            parents = self._parents[id(scope)] = parent_map(scope)
        return found[0], enclosing_statement(found[0], parents)

    def _dtype_cast_copies(self, call: cst.Call) -> bool:
        """A cast to a named dtype in the chain of `call` (`.to(torch.int32)`, `.type(torch.int32)`, `.int()`): code casts
        tensors that have another dtype, so the cast copies (as a device move does)."""
        current: cst.BaseExpression = call
        while isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute):
            method = current.func.attr.value
            if method in semantics.DTYPE_CAST_METHODS:
                return True
            if method in ("to", "type") and any(self.facts.evaluator.is_dtype_argument(a.value) for a in current.args
                                                if a.keyword is None or a.keyword.value == "dtype"):
                return True
            current = current.func.value
        return False

    def _device_move_copies(self, call: cst.Call) -> bool:
        """An explicit `.cpu()`/`.cuda()`/`.to("cpu")` in the chain of `call`, on a tensor not known to be there.

        Code moves tensors that live elsewhere, so such a move copies; only a CPU-known view
        moved to the CPU is returned unchanged.
        """
        current: cst.BaseExpression = call
        while isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute):
            method = current.func.attr.value
            device = method if method in semantics.DEVICE_MOVE_METHODS else None
            if method == "to":
                for arg in current.args:
                    if isinstance(arg.value, cst.SimpleString) and (arg.keyword is None or arg.keyword.value == "device"):
                        device = arg.value.value.strip("'\"").split(":")[0]
            if device is not None:
                return not (device == "cpu" and self.facts.value_of(current.func.value).cpu)
            current = current.func.value
        return False

    def _ineffective_views(self, value: Value, saved: bool = False) -> list[Value]:
        """The maybe-views of a part of a tensor inside `value` (of a short-lived tensor, unless it is saved)."""
        return [view for view in value.retained_views()
                if view.is_maybe_view_of_view and view.partial and view.base is not None
                and (saved or not (self.facts.outlives_function(view.base) or view.base_made in DELIBERATE_BASES))]

    def _op_call(self, node: cst.BaseExpression, op_name: str, depth: int = 3) -> Optional[cst.Call]:
        """The `….contiguous()` (or `torch.as_tensor(…)`) call inside the stored expression, if written there."""
        if isinstance(node, cst.Call):
            func = node.func
            named = func.attr.value if isinstance(func, cst.Attribute) else ""
            qualified = self.facts.qualify(func) or ""
            if (named == op_name or qualified.endswith("." + op_name)) and self._ineffective_views(self.facts.value_of(node), saved=True):
                return node
            if depth > 0:
                children = [a.value for a in node.args]
                if isinstance(func, cst.Attribute):
                    children.append(func.value)
                for child in children:
                    found = self._op_call(child, op_name, depth - 1)
                    if found is not None:
                        return found
        elif isinstance(node, (cst.Tuple, cst.List)) and depth > 0:
            for element in node.elements:
                found = self._op_call(element.value, op_name, depth - 1)
                if found is not None:
                    return found
        elif isinstance(node, cst.Dict) and depth > 0:
            for element in node.elements:
                if isinstance(element, cst.DictElement):
                    found = self._op_call(element.value, op_name, depth - 1)
                    if found is not None:
                        return found
        return None

    def _edits(self, call: Optional[cst.Call], op_name: str) -> tuple[tuple[cst.CSTNode, str], ...]:
        if call is None or op_name != "contiguous" or call.args or not isinstance(call.func, cst.Attribute):
            return ()
        receiver = self.facts.source_for_edit(call.func.value)
        if self.facts.index.aliases.get("torch") == "torch":
            return ((call, f"{receiver}.clone(memory_format=torch.contiguous_format)"),)
        return ((call, f"{receiver}.clone()"),)
