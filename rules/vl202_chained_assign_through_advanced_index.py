"""VL202: an assignment through a chain of subscripts whose earlier link gathers a copy."""

from __future__ import annotations

from typing import Optional, Union

import libcst as cst

from viewlint.analysis import features, semantics
from viewlint.analysis.values import IndexKind
from viewlint.rule import Rule

_VIEW_ATTRIBUTES = semantics.VIEW_ATTRIBUTES | semantics.AMBIGUOUS_VIEW_ATTRIBUTES


class ChainedAssignThroughAdvancedIndex(Rule):
    """
    ## What it does
    Flags assignments whose target indexes the result of advanced indexing:
    `b[mask][:, c] = v`, `b[idx][0] += 1`, `b[[1, 2]][..., 0] = 0`.

    ## Why it matters
    `b[mask]` (a tensor, list or boolean mask index) gathers the selected elements into a
    new tensor. The second subscript assigns into that temporary, which is thrown away:
    `b` is unchanged, and nothing raises. The opposite order writes through:
    `b[:, c][mask] = v` first takes a view (basic indexing), then `index_put_` on the
    view writes into `b`.

    ## Example
    ```python
    b = torch.zeros(4, 3)
    mask = b[:, 0] == 0
    b[mask][:, 1] = 5.0   # b is unchanged
    ```

    ## Fix
    Index `b` once, or take the basic part first so that the advanced part is the last
    subscript (an in-place `index_put_` on a view of `b`):
    ```python
    b[mask, 1] = 5.0
    b[:, 1][mask] = 5.0
    ```
    Fix safety: no automatic fix; combining the subscripts depends on their shapes.
    """

    code = "VL202"
    name = "chained-assign-through-advanced-index"
    summary = "Assignment through `x[adv][...]` lands in a temporary copy"
    fix_applicability = None

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return ((features.flag("chained-subscript-store"),),)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._check(node, target.target, "=")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._check(node, node.target, node.operator.__class__.__name__)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._check(node, node.target, "=")

    def _check(self, statement: Union[cst.Assign, cst.AugAssign, cst.AnnAssign], target: cst.BaseExpression, _operator: str) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._check(statement, element.value, _operator)
            return
        if not isinstance(target, cst.Subscript) or self.facts.keyed_by_string(target):
            return  # `opt.state[p]["step"] = v`: what a string indexes is a dict, not a gathered tensor
        gathered = self._gathered_receiver(target.value)
        if gathered is None:
            return
        facts = self.facts
        base = facts.short_source(gathered.value)
        self.report(
            target,
            f"assignment to `{facts.short_source(target)}` lands in a temporary copy: `{facts.short_source(gathered)}` "
            f"gathers (advanced indexing), so `{base}` is unchanged",
            fix_message=f"index `{base}` once (e.g. `{base}[idx, …] = v`), or put the advanced index last",
        )

    def _gathered_receiver(self, expr: cst.BaseExpression) -> Optional[cst.Subscript]:
        """The advanced-index subscript in the receiver chain of an assignment target, if any."""
        current = expr
        while True:
            if isinstance(current, cst.Subscript):
                if self.facts.index_kind(current) is IndexKind.ADVANCED:
                    return current
                current = current.value
            elif isinstance(current, cst.Attribute) and current.attr.value in _VIEW_ATTRIBUTES:
                current = current.value
            elif (
                isinstance(current, cst.Call)
                and isinstance(current.func, cst.Attribute)
                and current.func.attr.value in semantics.VIEW_METHODS
                and self.facts.value_of(current).is_view
            ):
                current = current.func.value
            else:
                return None
