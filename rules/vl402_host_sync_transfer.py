"""VL402: `.cpu()`, `.to("cpu")`, `.numpy(force=True)` of a device tensor in a hot path."""

from __future__ import annotations

import libcst as cst

from viewlint.analysis import features
from viewlint.rule import Rule


class HostSyncTransfer(Rule):
    """
    ## What it does
    Flags copies of a tensor to the host inside a hot path (see VL401 for what is hot):
    `t.cpu()`, `t.to("cpu")`, `t.to(device="cpu")`, `t.to(torch.device("cpu"))` and
    `t.numpy(force=True)`. It fires only on receivers known to be tensors and not known
    to be on the CPU already; `.to("cpu", non_blocking=True)` is an asynchronous copy and
    stays quiet. A plain `t.numpy()` is not flagged: it raises on a GPU tensor, so it only
    ever runs on CPU tensors (the sync, if any, is the `.cpu()` before it). Nor is a copy
    handed where torch requires host data (`pack_padded_sequence(x, lengths.cpu())`, also
    through a name): the call would make the same copy, and wait, itself.

    ## Why it matters
    A blocking device-to-host copy waits for every kernel queued before it, then for the
    copy itself: the GPU runs dry while the CPU waits, once per call of the hot function.

    ## Example
    ```python
    def forward(self, logits: torch.Tensor) -> list[int]:
        ids = logits.argmax(-1).cpu()            # blocks until the GPU is done
        return ids.tolist()
    ```

    ## Fix
    Keep the data on the device, or start the copy early with
    `t.to("cpu", non_blocking=True)` into pinned memory and wait on an event only where
    the values are needed. When the copy is the point (returning results to the host
    once per step), mark it with `# noqa: VL402`. Fix safety: no automatic fix.
    """

    code = "VL402"
    name = "host-sync-transfer"
    summary = "`.cpu()`/`.to(\"cpu\")` of a device tensor in a hot path blocks until the GPU is done"
    hot_path_only = True

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return features.calls("cpu") + ((features.flag("to-cpu"),), (features.flag("numpy-force"),))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        if not self._copies_to_host(node, func.attr.value) or self.facts.sync_path_name() is None:
            return
        value = self.facts.value_of(func.value)
        if not self.facts.may_be_on_device(value):
            return
        if self.facts.in_fallback_path(node):
            return  # a fallback for a missing host copy, or an error path that warns and gives up
        if self.facts.required_on_host(node):
            return  # `pack_padded_sequence(x, lengths.cpu())`: the call would copy (and wait) itself
        self.report(
            node,
            f"`{self.facts.short_source(node)}` copies a device tensor to the host in hot path "
            f"{self.facts.sync_path_name()}: the CPU blocks until the GPU has finished",
            fix_message="keep it on the device, or copy with `non_blocking=True` into pinned memory and sync once",
        )

    def _copies_to_host(self, node: cst.Call, method: str) -> bool:
        """`.cpu()`, a blocking `.to("cpu")`, or `.numpy(force=True)`."""
        if method == "cpu":
            return not any(a.keyword is None for a in node.args)
        if method == "to":
            return self._to_cpu(node) and not self._non_blocking(node)
        return method == "numpy" and self._keyword_true(node, "force")

    def _to_cpu(self, node: cst.Call) -> bool:
        """`.to("cpu")`, `.to(device="cpu")`, `.to(torch.device("cpu"))`."""
        for arg in node.args:
            if arg.keyword is None or arg.keyword.value == "device":
                if self._is_cpu(arg.value):
                    return True
        return False

    def _is_cpu(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.SimpleString):
            return expr.evaluated_value == "cpu"
        if isinstance(expr, cst.Call) and self.facts.qualify(expr.func) == "torch.device" and expr.args:
            return self._is_cpu(expr.args[0].value)
        return False

    def _non_blocking(self, node: cst.Call) -> bool:
        return self._keyword_true(node, "non_blocking") or any(
            a.keyword is None and isinstance(a.value, cst.Name) and a.value.value == "True" for a in node.args
        )

    @staticmethod
    def _keyword_true(node: cst.Call, name: str) -> bool:
        return any(
            a.keyword is not None and a.keyword.value == name and not (isinstance(a.value, cst.Name) and a.value.value == "False")
            for a in node.args
        )
