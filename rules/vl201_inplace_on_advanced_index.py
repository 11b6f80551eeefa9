"""VL201: an in-place method called on a gathered (advanced-index) copy."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from viewlint.analysis import features, semantics
from viewlint.analysis.temporaries import TemporaryTracker, TracksTemporaries, inplace_chain_receiver
from viewlint.analysis.values import IndexKind, Value
from viewlint.analysis.values import GATHERS
from viewlint.diagnostics import Applicability
from viewlint.rule import Rule

# In-place method -> augmented operator, for the safe fix (`buf[idx].add_(y)` -> `buf[idx] += y`).
_AUGMENTED = {"add_": "+=", "sub_": "-=", "mul_": "*=", "div_": "/="}
# Attributes that are views of the tensor they are read from (a view of a temporary is the temporary).
_VIEW_ATTRIBUTES = semantics.VIEW_ATTRIBUTES | semantics.AMBIGUOUS_VIEW_ATTRIBUTES


def _view_of_unnamed_gather(value: Value) -> Optional[str]:
    """The text of the gathered copy `value` is a view of, when no name or attribute holds that copy
    (`row` in `for row in buf[idx]:`, `first = buf[idx][0]`); else None."""
    if not (value.is_view and value.base_made in GATHERS and value.base):
        return None
    if all(part.isidentifier() for part in value.base.split(".")):
        return None  # `g = buf[idx]; for row in g:` writes into `g`, which may be read
    return value.base


class InplaceOnAdvancedIndex(TracksTemporaries, Rule):
    """
    ## What it does
    Flags an in-place method called on the result of advanced indexing, such as
    `buf[idx].copy_(v)`, `buf[mask].fill_(0)`, `buf[[3]].zero_()`, `buf[mask][:, 0].zero_()`
    or `torch.nn.init.zeros_(w[rows])`, on the result of an op that always gathers
    (`x.index_select(0, rows).add_(1)`, `torch.gather(x, 1, idx).mul_(2)`, `masked_select`,
    `take`), and the same through a local name that is never read again
    (`tmp = buf[idx]; tmp.add_(1)`, `picked = x.index_select(0, rows); picked.zero_()`).

    Evidence it fires on: an index is advanced when it is a list, a boolean or integer
    mask, or a tensor not known to be 0-dim: annotated (`torch.Tensor`, `Optional[torch.Tensor]`, `Tensor | None`,
    `torch.LongTensor`/`BoolTensor`, `np.ndarray`, `Sequence[int]`), named so in a docstring's
    `Args:`, made by a torch op (`arange`, `nonzero`, `argsort`, `topk(...).indices`, a
    comparison), or passed as one at every call site in the module. The indexed tensor may
    be a parameter, an attribute allocated anywhere in the class, `.data`/`.grad` of one,
    or a `.parameters()` element.

    ## Why it matters
    Indexing with a tensor, a list or a boolean mask (advanced indexing) gathers the
    selected elements into a *new* tensor. The in-place method writes into that
    temporary, which is then thrown away: `buf` is unchanged, and nothing raises.
    Basic indexing (ints, slices, `None`, `...`, a 0-dim tensor) returns a view, so the
    same call on `buf[3]` or `buf[1:4]` does write through.

    ## Example
    ```python
    buf = torch.zeros(8, 4)
    idx = torch.tensor([1, 3])
    buf[idx].copy_(torch.ones(2, 4))  # buf is still all zeros
    buf[[3]].fill_(2.0)               # so is row 3
    ```

    ## Fix
    Assign through the index, which PyTorch turns into an in-place `index_put_`:
    ```python
    buf[idx] = torch.ones(2, 4)
    buf[[3]] = 2.0
    buf[idx] += y                     # instead of buf[idx].add_(y)
    ```
    Fix safety: unsafe, applied with `--unsafe-fixes` only: the rewrite changes what the
    program does (that is its point: the write starts landing in `buf`). `--unsafe-fixes`
    rewrites `.copy_(v)`, `.fill_(v)`, `.zero_()` and `.add_/.sub_/.mul_/.div_(y)` (one
    positional argument, no `alpha=`) called directly on `buf[idx]` into assignments; other
    methods, chains and the local-name form get a hint only. No rewrite is offered where the
    assignment would raise instead of writing: when `buf` is (or may be) an `nn.Parameter`,
    a `.parameters()` element or another leaf that requires grad (an in-place write into a
    leaf raises; `p.data[idx]` is fine), or when `v` is a tensor whose dtype is known and is
    not known to be `buf`'s: `copy_` and `fill_` cast, an assignment through an index does not.
    """

    code = "VL201"
    name = "inplace-on-advanced-index"
    summary = "In-place write on an advanced-index result lands in a temporary copy"
    fix_applicability = Applicability.UNSAFE

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return ((features.flag("inplace-on-subscript"),), (features.flag("inplace-on-gather"),),
                (features.flag("inplace-on-gathered-name"),))

    def __init__(self, facts, options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(facts, options)
        self.temporaries = TemporaryTracker()

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if not isinstance(call, cst.Call):
            return
        receiver = inplace_chain_receiver(call)
        if receiver is not None:
            self._check_inplace(node, call, self._first_inplace_call(call), receiver)
        self._check_init(call)

    def _check_inplace(self, statement: cst.Expr, outer: cst.Call, inplace_call: cst.Call, receiver: cst.BaseExpression) -> None:
        method = inplace_call.func.attr.value  # type: ignore[attr-defined]
        call_text = f".{method}({'…' if inplace_call.args else ''})"
        gathered = self._gathered_root(receiver)
        if gathered is not None:
            self._report_subscript(statement, outer, inplace_call, receiver, gathered, call_text)
            return
        root = self._strip_views(receiver)
        if isinstance(root, cst.Call):
            self._check_gather_call(inplace_call, root, call_text)
            return
        if not isinstance(root, cst.Name):
            return
        value = self.facts.value_of(root)
        of_temporary = _view_of_unnamed_gather(value)
        if not (value.is_fresh and value.origin in GATHERS) and of_temporary is None:
            return
        binding = self.temporaries.binding_of(root.value)
        if binding is None or not self.temporaries.is_dead_after(root, binding, self.facts.in_loop):
            return
        if of_temporary is not None:
            # `for row in buf[idx]: row.zero_()`: each row is a view of a copy no name holds.
            self.report(
                inplace_call,
                f"`{root.value}` is a view of `{of_temporary}`, a gathered copy (advanced indexing) that no name "
                f"holds, and is never read again: `{self.facts.short_source(receiver)}{call_text}` changes nothing",
                fix_message="write through the index instead (`buf[idx] = …`, `buf[idx] *= …`)",
            )
            return
        self.report(
            inplace_call,
            f"`{root.value}` is a gathered copy of `{value.base}` (advanced indexing) and is never read "
            f"again: `{self.facts.short_source(receiver)}{call_text}` changes nothing",
            fix_message=f"write through the index instead: `{value.base}[…] = …`",
        )

    def _check_gather_call(self, inplace_call: cst.Call, root: cst.Call, call_text: str) -> None:
        """`x.index_select(0, rows).add_(1)`, `torch.gather(x, 1, idx).mul_(2)`: a gather always copies."""
        value = self.facts.value_of(root)
        if not (value.is_fresh and value.origin in GATHERS and value.base):
            return
        op = self.facts.short_source(root.func)
        self.report(
            inplace_call,
            f"`{op}(…){call_text}` writes into the copy `{op}` gathers: `{value.base}` is unchanged and the "
            "result is thrown away",
            fix_message="write through an index (`x[rows] += …`) or an in-place op (`index_add_`, `scatter_`)",
        )

    def _check_init(self, call: cst.Call) -> None:
        """`torch.nn.init.zeros_(w[idx])` initialises the gathered copy."""
        qualified = self.facts.qualify(call.func) or ""
        if not (qualified.startswith(semantics.TORCH_NN_INIT_PREFIX) and qualified.endswith("_") and call.args):
            return
        target = call.args[0].value
        gathered = self._gathered_root(target)
        if gathered is None:
            return
        self.report(
            call,
            f"`{qualified.split('.')[-1]}({self.facts.short_source(target)})` initialises a temporary copy: "
            f"advanced indexing gathers, so `{self.facts.short_source(gathered.value)}` is unchanged",
            fix_message="initialise a new tensor and assign it through the index",
        )

    @staticmethod
    def _first_inplace_call(call: cst.Call) -> cst.Call:
        """In `a[i].add_(1).mul_(2)`, the call applied first: `.add_(1)`."""
        current = call
        while isinstance(current.func, cst.Attribute) and isinstance(current.func.value, cst.Call) \
                and isinstance(current.func.value.func, cst.Attribute) \
                and semantics.is_inplace_method(current.func.value.func.attr.value):
            current = current.func.value
        return current

    def _strip_views(self, expr: cst.BaseExpression) -> cst.BaseExpression:
        """Peel views off an expression (`t[0]`, `t.data`, `t.view(-1)`): they share the storage of what is under them."""
        while True:
            if isinstance(expr, cst.Subscript) and self.facts.index_kind(expr) is IndexKind.BASIC:
                expr = expr.value
            elif isinstance(expr, cst.Attribute) and expr.attr.value in _VIEW_ATTRIBUTES:
                expr = expr.value
            elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                    and expr.func.attr.value in semantics.VIEW_METHODS \
                    and (expr.func.attr.value not in semantics.AMBIGUOUS_VIEW_METHODS or self.facts.value_of(expr).is_view):
                expr = expr.func.value  # `.view()`, `.select()`...: only where the analysis knows it is a tensor view
            else:
                return expr

    def _gathered_root(self, expr: cst.BaseExpression) -> Optional[cst.Subscript]:
        """The advanced-index subscript under `expr` and its views, if there is one."""
        root = self._strip_views(expr)
        if isinstance(root, cst.Subscript) and self.facts.index_kind(root) is IndexKind.ADVANCED:
            return root
        return None

    def _report_subscript(self, statement: cst.Expr, outer: cst.Call, call: cst.Call, receiver: cst.BaseExpression,
                          gathered: cst.Subscript, call_text: str) -> None:
        facts = self.facts
        base = facts.short_source(gathered.value)
        receiver_text = facts.short_source(receiver)
        gathered_text = facts.short_source(gathered)
        via = f" (`{gathered_text}`)" if receiver is not gathered else ""
        message = (
            f"`{receiver_text}{call_text}` writes into a temporary copy: advanced indexing{via} "
            f"gathers, so `{base}` is unchanged"
        )
        method = call.func.attr.value  # type: ignore[attr-defined]
        replacement = self._assignment(call, method) if outer is call and receiver is gathered else None
        refusal = self._refusal(call, method, gathered) if replacement is not None else None
        if refusal is not None:
            self.report(call, message, fix_message=f"assign through the index: `{gathered_text} = …` ({refusal})")
            return
        if replacement is not None:
            operator, value = replacement
            new_text = f"{facts.source_for_edit(gathered)} {operator} {value}"
            self.report(call, message, fix_message=f"Assign through the index: `{gathered_text} {operator} …`",
                        edits=((statement, new_text),))
        else:
            self.report(call, message, fix_message=f"assign through the index: `{gathered_text}[…] = …`"
                        if receiver is not gathered else f"assign through the index: `{gathered_text} = …`")

    def _refusal(self, call: cst.Call, method: str, gathered: cst.Subscript) -> Optional[str]:
        """Why the assignment would raise where the in-place call ran, if it may: a leaf that requires grad
        refuses in-place writes, and an assignment through an index does not cast as `copy_`/`fill_` do."""
        facts = self.facts
        buffer = facts.value_of(gathered.value)
        detached = isinstance(gathered.value, cst.Attribute) and gathered.value.attr.value == "data"  # `p.data[idx]`
        if (buffer.is_parameter or buffer.grad_leaf) and not detached:
            return f"`{facts.short_source(gathered.value)}` may be a leaf that requires grad: writing into it raises"
        if method in ("copy_", "fill_") and call.args:
            value = facts.value_of(call.args[0].value)
            if value.is_tensor and value.dtype is not None and value.dtype != buffer.dtype:
                return f"the dtypes may differ: `{facts.short_source(call.args[0].value)}` is " \
                       f"{value.dtype or 'of unknown dtype'}, `{facts.short_source(gathered.value)}` {buffer.dtype or 'of unknown dtype'}"
        return None

    def _assignment(self, call: cst.Call, method: str) -> Optional[tuple[str, str]]:
        """(operator, value source) for the safe rewrite, when the arguments map exactly."""
        args = list(call.args)
        if any(a.keyword is not None or a.star for a in args):
            return None
        if method == "zero_" and not args:
            return "=", "0"
        if len(args) != 1:
            return None
        value = self.facts.source_for_edit(args[0].value)
        if method in ("copy_", "fill_"):
            return "=", value
        if method in _AUGMENTED:
            return _AUGMENTED[method], value
        return None
