"""VL307: `torch.tensor(x)` where `x` is already a tensor: a copy-construct on every call."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from viewlint.analysis import features
from viewlint.diagnostics import Applicability
from viewlint.rule import Rule

# The keywords `torch.as_tensor` takes too: with only these, `torch.tensor` -> `torch.as_tensor` is a fix.
_AS_TENSOR_KEYWORDS = frozenset({"dtype", "device"})


class TensorCopyConstruct(Rule):
    """
    ## What it does
    Flags `torch.tensor(x)` where the analysis knows `x` is a tensor, on every path or on
    some: its annotation, the torch call that made it, or what this module's callers pass
    for it (`self.tensor(X[batch_ids])`, a helper every caller hands a tensor).

    ## Why it matters
    `torch.tensor` always copies its data. Given a tensor it allocates a new one, copies
    every element, and detaches the copy from autograd, on every call (PyTorch warns:
    "To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach()").
    A helper meant to accept lists, arrays *or* tensors (`torch.tensor(data, device=...)`)
    then copies each batch a second time, right after the gather that made it.

    ## Example
    ```python
    def to_device(self, data):
        return torch.tensor(data, device=self.device)   # every caller passes X[batch_ids]
    ```

    ## Fix
    ```python
    def to_device(self, data):
        return torch.as_tensor(data, device=self.device)  # no copy when dtype and device already match
    ```
    `torch.as_tensor` copies only when it must convert (a list, an array, another dtype or
    device). When a copy *is* wanted, `x.clone().detach()` says so without the warning.
    Fix safety: unsafe (`--unsafe-fixes`), offered when only `dtype=`/`device=` are passed:
    the result may share `x`'s storage (writes through it reach `x`) and keeps `x`'s
    autograd history, where `torch.tensor` gave a detached copy.
    """

    code = "VL307"
    name = "tensor-copy-construct"
    summary = "`torch.tensor(x)` of a tensor `x` copies it on every call; `torch.as_tensor(x)` reuses it"
    fix_applicability = Applicability.UNSAFE
    reports_a_cost = True
    default_enabled = False
    off_by_default_reason = (
        "On SGLang, transformers, diffusers and torch, 8 of its 23 findings held up (issue 26,\n"
        "seventh pass): it is exactly as right as the analysis's belief that the data is a tensor,\n"
        "and in pipelines and feature extractors that belief often rests on an annotation the\n"
        "callers in other modules contradict (`latents_mean: torch.Tensor` given a config list).\n"
        "It stays a sharp check on helpers you write that accept lists, arrays or tensors.")

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return features.calls("tensor")

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        if facts.qualify(node.func) != "torch.tensor" or not node.args or node.args[0].keyword is not None \
                or node.args[0].star:
            return
        data = node.args[0].value
        value = facts.value_of(data)
        if not value.is_tensor:
            return
        name = facts.short_source(data)
        evidence = f" ({value.why})" if value.why else ""
        held = f"may hold a tensor on some paths{evidence}" if value.optional else f"is already a tensor{evidence}"
        self.report(
            node,
            f"`torch.tensor({name})` copies `{name}`, which {held}: a new allocation and a full copy on every call",
            fix_message="use `torch.as_tensor(...)` (no copy when dtype and device already match), "
                        "or `.clone().detach()` where a copy is wanted",
            edits=self._edits(node),
        )

    def _edits(self, node: cst.Call) -> tuple[tuple[cst.CSTNode, str], ...]:
        keywords = {arg.keyword.value for arg in node.args[1:] if arg.keyword is not None}
        if len(node.args) > 1 + len(keywords) or not keywords <= _AS_TENSOR_KEYWORDS:
            return ()  # a positional second argument, or `requires_grad=`/`pin_memory=`: as_tensor takes neither
        replacement = _as_tensor_func(self.facts.module.code_for_node(node.func))
        return ((node.func, replacement),) if replacement is not None else ()


def _as_tensor_func(func: str) -> Optional[str]:
    """`torch.as_tensor` for `torch.tensor` as written (`th.tensor`, `torch.tensor`)."""
    if not func.endswith(".tensor") or any(c.isspace() for c in func):
        return None
    return func[: -len("tensor")] + "as_tensor"
