"""VL301: `.contiguous()` on a tensor that is contiguous by construction, and `.clone().contiguous()`."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from viewlint.analysis import features
from viewlint.analysis.value_ops import MODULE_OUTPUT
from viewlint.analysis.values import GATHERS, Kind
from viewlint.diagnostics import Applicability
from viewlint.rule import Rule


class RedundantContiguous(Rule):
    """
    ## What it does
    Flags `.contiguous()` called on a tensor that is already contiguous by construction:
    the result of a factory (`torch.empty/zeros/ones/full/rand*/arange/tensor`), of a
    matrix product (`matmul`, `@`, `mm`, `bmm`, `F.linear`), of `torch.cat/stack` or an
    advanced-index read (`x[idx]`) whose inputs are themselves known to be contiguous, of
    arithmetic on such tensors, or of an earlier `.contiguous()`. It also flags
    `.clone().contiguous()`. Evidence it needs: how the tensor was made, in this function or
    in a helper of the module whose return it is. `cat`, `stack`, advanced indexing and
    elementwise ops keep a transposed or channels_last input's layout
    (`x.transpose(0, 2)[idx].is_contiguous()` is False), so on inputs of unknown layout
    they prove nothing.

    It stays silent whenever the layout is not proven: after `transpose/permute/t/expand/
    narrow/split`, on `empty_like`/`clone()` results (they keep the input's strides), on
    elementwise results of strided inputs (`x.t() + 1` is not contiguous), on `einsum`
    and `nonzero` results (both may come back transposed), on tensors built with another
    `memory_format`, and on anything the analysis cannot see (parameters, arguments).

    ## Why it matters
    On a contiguous tensor `.contiguous()` returns the tensor itself: the call is noise
    that suggests a copy is needed when it is not, and it hides the places where a copy
    really happens. `.clone().contiguous()` is either a plain clone (when the input was
    contiguous) or *two* full copies: `clone()` keeps the strides of a strided input,
    and `.contiguous()` then copies again.

    ## Example
    ```python
    q, k, v = torch.zeros(3, 2, 8, 64).unbind(0)      # contiguous rows
    qkv = torch.cat([q, k, v], dim=-1).contiguous()   # cat of contiguous tensors is contiguous
    y = x.t().clone().contiguous()                    # two copies of x
    ```

    ## Fix
    ```python
    qkv = torch.cat([q, k, v], dim=-1)
    y = x.t().clone(memory_format=torch.contiguous_format)   # one copy, contiguous
    ```
    Fix safety: safe. Dropping `.contiguous()` from a contiguous tensor returns the same
    object, and `clone(memory_format=torch.contiguous_format)` returns the same values in
    one copy. The clone rewrite is offered only when `torch` is imported under that name, and
    is safe only where the cloned value is known to be a tensor (unsafe otherwise: another
    object's `clone`, a `TensorDict`'s, takes no `memory_format=`).
    The tensor must be contiguous on every path to the call: the rule stays silent when the
    name may have been rebound where the analysis does not follow values (`with … as x`,
    `case … as x`, a walrus, the next run of a loop, a `try` handler, `global`/`nonlocal`,
    a function reading a name of its enclosing scope) or restrided in place anywhere in the
    module (`x.t_()`, `x.transpose_()`, `x.as_strided_()`, `x.set_(…)`, `x.data = …`,
    through an alias or a callee). A rewrite that would delete a comment is a hint only.
    """

    code = "VL301"
    name = "redundant-contiguous"
    summary = "`.contiguous()` on a tensor that is already contiguous, or after `.clone()`"
    fix_applicability = Applicability.SAFE

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return ((features.flag("contiguous-of-contiguous"),),)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "contiguous") or node.args:
            return  # `.contiguous(memory_format=…)` asks for another layout: never redundant
        receiver = func.value
        facts = self.facts
        clone = self._clone_call(receiver)
        if clone is not None:
            self._report_clone(node, clone)
            return
        value = facts.value_of(receiver)
        if value.is_tensor and value.contiguous is None and value.origin in GATHERS and isinstance(receiver, (cst.Subscript, cst.Name)):
            self._report_gather(node, receiver)
            return
        if not (value.is_tensor and value.contiguous is True):
            return
        text = facts.short_source(receiver)
        self.report(
            node,
            f"`{text}` is already contiguous ({self._reason(receiver)}): `.contiguous()` returns it unchanged",
            fix_message=f"drop `.contiguous()`: use `{text}`",
            edits=((node, facts.source_for_edit(receiver)),),
        )

    def _report_gather(self, node: cst.Call, receiver: cst.BaseExpression) -> None:
        """`x[idx].contiguous()` (or of a name bound to a gather) where the layout of `x` is not known: the gather
        is a new tensor, contiguous whenever `x` is; only a transposed or channels_last `x` (3-D or more) gives a
        strided one. Reported without a fix: the analysis cannot prove `x` is contiguous."""
        facts = self.facts
        gathered = receiver
        if isinstance(receiver, cst.Name):
            return  # through a name: only when the gather was written here (its source is in view)
        source = facts.value_of(gathered.value)  # type: ignore[attr-defined]
        if source.is_view or source.contiguous is False:
            return  # a transposed or sliced input: the gather may well keep its strides
        if not facts.evaluator.row_major_either_way(gathered):  # type: ignore[arg-type]
            return  # `mask[:, stage]` of a scalar `stage`: a select, a view with the input's strides
        text = facts.short_source(receiver)
        self.report(
            node,
            f"`{text}` is a new tensor (advanced indexing gathers), contiguous whenever "
            f"`{facts.short_source(gathered.value)}` is: `.contiguous()` is a no-op unless that is a transposed "  # type: ignore[attr-defined]
            f"or channels_last view",
            fix_message=f"drop `.contiguous()` if `{facts.short_source(gathered.value)}` is contiguous",  # type: ignore[attr-defined]
            applicability=Applicability.DISPLAY_ONLY,
        )

    def _clone_call(self, receiver: cst.BaseExpression) -> Optional[cst.Call]:
        """`x.clone()` or `torch.clone(x)` without a memory format."""
        if not isinstance(receiver, cst.Call):
            return None
        func = receiver.func
        is_method = isinstance(func, cst.Attribute) and func.attr.value == "clone" and self.facts.qualify(func) is None
        if not (is_method or self.facts.qualify(func) == "torch.clone"):
            return None
        if any(arg.keyword is not None and arg.keyword.value == "memory_format" for arg in receiver.args):
            return None
        if is_method and any(arg.keyword is None for arg in receiver.args):
            return None  # `obj.clone(deep)`: not a tensor clone
        if is_method and self.facts.value_of(func.value).kind not in (Kind.TENSOR, Kind.UNKNOWN):  # type: ignore[attr-defined]
            return None  # `spec.clone()` of a `TensorDictBase`: another class's copy (no `memory_format=` to take)
        return receiver

    def _report_clone(self, node: cst.Call, clone: cst.Call) -> None:
        facts = self.facts
        text = facts.short_source(clone)
        edits: tuple[tuple[cst.CSTNode, str], ...] = ()
        if facts.index.aliases.get("torch") == "torch" and not clone.args:
            func = clone.func
            if isinstance(func, cst.Attribute):
                replacement = f"{facts.source_for_edit(func.value)}.clone(memory_format=torch.contiguous_format)"
                edits = ((node, replacement),)
        # Safe only on a tensor: another object's `clone` (a `TensorDict`'s) takes no `memory_format=`.
        cloned = facts.value_of(clone.func.value) if isinstance(clone.func, cst.Attribute) else None
        self.report(
            node,
            f"`{text}.contiguous()` copies twice when the input is strided (`clone()` keeps its strides) "
            f"and `.contiguous()` is a no-op otherwise",
            fix_message="clone straight into a contiguous layout: `.clone(memory_format=torch.contiguous_format)`",
            edits=edits,
            applicability=Applicability.SAFE if cloned is None or cloned.is_tensor else Applicability.UNSAFE,
        )

    def _reason(self, receiver: cst.BaseExpression) -> str:
        """A few words on why the receiver is contiguous, for the message."""
        node = receiver
        if isinstance(node, cst.Name):
            return f"`{node.value}` was built contiguous in this function"
        if isinstance(node, cst.Call):
            qualified = self.facts.qualify(node.func)
            if qualified is not None:
                return f"`{qualified}` returns a new contiguous tensor"
            value = self.facts.value_of(node)
            method_of_tensor = isinstance(node.func, cst.Attribute) and self.facts.value_of(node.func.value).is_tensor
            if value.origin == MODULE_OUTPUT and value.why and not method_of_tensor:
                return f"it is {value.why}, a new contiguous tensor"  # `self.lm_head(h)` of an `nn.Linear`
            if isinstance(node.func, cst.Attribute):
                method = node.func.attr.value
                if method == "contiguous":
                    return "it is the result of `.contiguous()`"
                return f"`.{method}()` of a contiguous tensor is contiguous"
        if isinstance(node, cst.Subscript):
            if not self.facts.value_of(node.value).is_tensor:
                # An item of a list or dict (`dv[i]` of `dv = [torch.zeros(...) for ...]`), not an indexing.
                return f"it is an item of `{self.facts.short_source(node.value)}`, stored contiguous"
            value = self.facts.value_of(node)
            if value.is_view:
                return f"whole rows (`{value.origin}`) of a contiguous tensor are contiguous"
            return "advanced indexing gathers into a new contiguous tensor"
        if isinstance(node, cst.BinaryOperation):
            return "the result of an operation on contiguous tensors"
        return "by construction"
