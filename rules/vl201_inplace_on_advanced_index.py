"""VL201: an in-place method called on a gathered (advanced-index) copy."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from viewlint.analysis import semantics
from viewlint.analysis.values import IndexKind
from viewlint.analysis.walker import ADVANCED_INDEX
from viewlint.diagnostics import Applicability
from viewlint.rule import Rule

# In-place method -> augmented operator, for the safe fix (`buf[idx].add_(y)` -> `buf[idx] += y`).
_AUGMENTED = {"add_": "+=", "sub_": "-=", "mul_": "*=", "div_": "/="}


class InplaceOnAdvancedIndex(Rule):
    """
    ## What it does
    Flags an in-place method called on the result of advanced indexing, such as
    `buf[idx].copy_(v)`, `buf[mask].fill_(0)`, `buf[[3]].zero_()` or
    `torch.nn.init.zeros_(w[rows])`, and the same through a temporary name that is
    never read again (`tmp = buf[idx]; tmp.add_(1)`).

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
    Fix safety: safe. `--fix` rewrites `.copy_(v)`, `.fill_(v)`, `.zero_()` and
    `.add_/.sub_/.mul_/.div_(y)` (one argument, no `alpha=`) into assignments; other
    methods get a hint only.
    """

    code = "VL201"
    name = "inplace-on-advanced-index"
    summary = "In-place write on an advanced-index result lands in a temporary copy"
    fix_applicability = Applicability.SAFE
    triggers = ("_(",)

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if not isinstance(call, cst.Call):
            return
        inner = self._innermost_inplace(call)
        if inner is None:
            return
        inplace_call, receiver = inner
        method = inplace_call.func.attr.value  # type: ignore[union-attr]
        if isinstance(receiver, cst.Subscript) and self.facts.index_kind(receiver) is IndexKind.ADVANCED:
            self._report_subscript(node, call, inplace_call, receiver, method)
        elif isinstance(receiver, cst.Name):
            value = self.facts.value_of(receiver)
            if value.is_fresh and value.origin == ADVANCED_INDEX and self.facts.reads_after(receiver.value, receiver) == 0:
                self.report(
                    inplace_call,
                    f"`{receiver.value}` is a gathered copy of `{value.base}` (advanced indexing) and is never read "
                    f"again: `.{method}(…)` changes nothing",
                    fix_message=f"write through the index: `{value.base}[…] = …`",
                )
        qualified = self.facts.qualify(call.func) or ""
        if qualified.startswith(semantics.TORCH_NN_INIT_PREFIX) and qualified.endswith("_") and call.args:
            target = call.args[0].value
            if isinstance(target, cst.Subscript) and self.facts.index_kind(target) is IndexKind.ADVANCED:
                self.report(
                    call,
                    f"`{qualified.split('.')[-1]}({self.facts.short_source(target)})` initialises a temporary copy: "
                    f"advanced indexing gathers, so `{self.facts.short_source(target.value)}` is unchanged",
                    fix_message="initialise a new tensor and assign it through the index",
                )

    @staticmethod
    def _innermost_inplace(call: cst.Call) -> Optional[tuple[cst.Call, cst.BaseExpression]]:
        """Follow `a[i].add_(1).mul_(2)` down to the first in-place call and its receiver."""
        current: cst.BaseExpression = call
        found = None
        while isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute):
            if not semantics.is_inplace_method(current.func.attr.value):
                return found
            found = (current, current.func.value)
            current = current.func.value
        return found

    def _report_subscript(self, statement: cst.Expr, outer: cst.Call, call: cst.Call, target: cst.Subscript, method: str) -> None:
        facts = self.facts
        base = facts.short_source(target.value)
        target_text = facts.short_source(target)
        message = (
            f"`{target_text}.{method}(…)` writes into a temporary copy: advanced indexing gathers, "
            f"so `{base}` is unchanged"
        )
        replacement = self._assignment(call, method) if outer is call else None
        if replacement is not None:
            operator, value = replacement
            new_text = f"{facts.source(target)} {operator} {value}"
            self.report(call, message, fix_message=f"Assign through the index: `{target_text} {operator} …`",
                        edits=((statement, new_text),))
        else:
            self.report(call, message, fix_message=f"assign through the index: `{target_text} = …`")

    def _assignment(self, call: cst.Call, method: str) -> Optional[tuple[str, str]]:
        """(operator, value source) for the safe rewrite, when the arguments map exactly."""
        args = list(call.args)
        if any(a.keyword is not None or a.star for a in args):
            return None
        if method == "zero_" and not args:
            return "=", "0"
        if len(args) != 1:
            return None
        value = self.facts.module.code_for_node(args[0].value)
        if method in ("copy_", "fill_"):
            return "=", value
        if method in _AUGMENTED:
            return _AUGMENTED[method], value
        return None
