"""VL404: an operation whose output size depends on the data (`nonzero`, `x[mask]`…) in a hot path."""

from __future__ import annotations

from typing import Any

import libcst as cst

from viewlint.analysis import features, semantics
from viewlint.analysis.tree import dotted_name
from viewlint.rule import Rule


class DataDependentShape(Rule):
    """
    ## What it does
    Flags operations whose output size depends on tensor values, inside a hot path (see
    VL401 for what is hot): `t.nonzero()`, `torch.nonzero(t)`, `torch.argwhere(t)`,
    `torch.where(cond)` with one argument, `masked_select`, `unique`, `unique_consecutive`,
    `bincount`, `repeat_interleave` with tensor repeats and no `output_size=`,
    reads through a boolean mask (`x[mask]`, `x[:, scores > 0]`) and augmented assignments
    through one (`x[mask] *= 2`, which reads `x[mask]` first). It fires only when the
    operand is not known to be on the CPU, and for methods and mask indexing only when it is
    known to be a tensor. A plain `x[mask] = v` is flagged only where `v` is known to be a tensor of
    one dimension or more (`x[pad_mask] = self.pad_token`): a scalar or 0-dim value is written with
    `masked_fill_`, which reads no count.

    ## Why it matters
    To allocate the result PyTorch must know how many elements are selected, a number that
    exists only on the device: it copies it to the host and waits for every queued kernel.
    The varying shape also defeats CUDA graphs and makes `torch.compile` break the graph or
    recompile.

    ## Example
    ```python
    def forward(self, logits: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        kept = logits[keep > 0]                   # size known only after a sync
        return kept.softmax(-1)
    ```

    ## Fix
    Keep shapes static: mask instead of select (`logits.masked_fill(keep <= 0, float("-inf"))`,
    `torch.where(mask, x, 0)`), use `torch.nonzero_static(t, size=n)` or pass `output_size=`
    where the operation takes one, or compute the indices from host-side metadata.
    Fix safety: no automatic fix.
    """

    code = "VL404"
    name = "data-dependent-shape"
    summary = "An output size that depends on tensor values (`nonzero`, `x[mask]`) needs a host sync"
    hot_path_only = True

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return features.calls("nonzero", "argwhere", "where", "masked_select", "unique", "unique_consecutive", "bincount",
                              "repeat_interleave") + (
            (features.flag("mask-subscript"),),
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Subscripts that are plain assignment or `del` targets: writes, not reads.
        self._written: set[int] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        targets = [target.target for target in node.targets]
        while targets:
            target = targets.pop()
            self._written.add(id(target))
            if isinstance(target, (cst.Tuple, cst.List)):  # `out[mask], logits[mask2] = f(...)`: each is written
                targets.extend(element.value for element in target.elements)
        written = node.targets[0].target if len(node.targets) == 1 else None
        value = self.facts.value_of(node.value)
        if isinstance(written, cst.Subscript) and value.is_tensor and (value.zero_dim is False or value.min_rank >= 1 or (value.rank or 0) >= 1) \
                and self.facts.sync_path_name() is not None:
            # `x[mask] = pad_token` of a vector: `index_put_` turns the mask into indices with `nonzero` (a scalar or a
            # 0-dim value takes the `masked_fill_` path, which does not).
            self._check_mask_index(written, "writes a tensor")

    def visit_Del(self, node: cst.Del) -> None:
        self._written.add(id(node.target))

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        func = node.func
        qualified = facts.qualify(func)
        if self._repeats_by_tensor(node, qualified):
            return
        if qualified is not None and qualified.startswith("torch."):
            positional = [a.value for a in node.args if a.keyword is None and a.star == ""]
            single_where = qualified == "torch.where" and len(node.args) == 1 and len(positional) == 1
            if not positional or not (qualified in semantics.DATA_DEPENDENT_SHAPE_FUNCTIONS or single_where):
                return
            # torch.* functions take tensors only: the operand needs no proof of being one, only of not being on the CPU.
            operand = positional[0]
            if facts.value_of(operand).cpu or semantics.looks_cpu_name(dotted_name(operand) or ""):
                return
        elif isinstance(func, cst.Attribute) and func.attr.value in semantics.DATA_DEPENDENT_SHAPE_METHODS:
            if not facts.may_be_on_device(facts.value_of(func.value)):
                return
        else:
            return
        if facts.sync_path_name() is None:
            return
        self.report(
            node,
            f"`{facts.short_source(node)}` has a data-dependent size in hot path {facts.sync_path_name()}: "
            f"PyTorch copies the count to the host and waits for the GPU",
            fix_message="keep shapes static (`torch.where(mask, x, 0)`, `masked_fill`, `nonzero_static`)",
        )

    def _repeats_by_tensor(self, node: cst.Call, qualified: "str | None") -> bool:
        """`torch.repeat_interleave(x, counts)`, `x.repeat_interleave(counts, dim=0)` with tensor repeats and no
        `output_size=`: the result's length is `counts.sum()`, read on the host. True when it was the call's case."""
        func = node.func
        method = qualified is None and isinstance(func, cst.Attribute) and func.attr.value == "repeat_interleave"
        if qualified != "torch.repeat_interleave" and not method:
            return False
        facts = self.facts
        if any(a.keyword is not None and a.keyword.value == "output_size" for a in node.args):
            return True
        positional = [a.value for a in node.args if a.keyword is None and a.star == ""]
        keyword = [a.value for a in node.args if a.keyword is not None and a.keyword.value == "repeats"]
        # The repeats: the method's first argument; the function's second (its only one: `repeat_interleave(counts)`).
        repeats = (keyword or positional[0 if method or len(positional) == 1 else 1:])[:1]
        if not repeats or facts.sync_path_name() is None:
            return True
        value = facts.value_of(repeats[0])
        if not (value.is_tensor and not value.optional) or not facts.may_be_on_device(value):
            return True
        self.report(
            node,
            f"`{facts.short_source(node)}` repeats by tensor `{facts.short_source(repeats[0])}` in hot path "
            f"{facts.sync_path_name()}: its length is the repeats' sum, which PyTorch copies to the host (a sync)",
            fix_message="pass `output_size=` when the total is known on the host, or repeat by a Python int",
        )
        return True

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if id(node) in self._written or self.facts.sync_path_name() is None:
            return
        self._check_mask_index(node, "reads")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        target = node.target
        if isinstance(target, cst.Subscript) and self.facts.sync_path_name() is not None:
            # `x[mask] += v` gathers `x[mask]` before writing it back: the same sync as a read.
            self._written.add(id(target))
            self._check_mask_index(target, "updates")

    def _check_mask_index(self, node: cst.Subscript, verb: str) -> None:
        facts = self.facts
        receiver = facts.value_of(node.value)
        if not facts.may_be_on_device(receiver):
            return
        for element in node.slice:
            index = element.slice
            if not isinstance(index, cst.Index):
                continue
            if facts.selects_by_mask(index.value) and not facts.value_of(index.value).cpu:
                self.report(
                    node,
                    f"`{facts.short_source(node)}` {verb} through boolean mask `{facts.short_source(index.value)}` "
                    f"in hot path {facts.sync_path_name()}: the selected count is copied to the host (a sync)",
                    fix_message="keep shapes static: `torch.where(mask, x, 0)` or `masked_fill(~mask, 0)`",
                )
                return
