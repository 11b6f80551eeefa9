"""VL401: `.item()`, `.tolist()`, `int(t)`, `float(t)`, `bool(t)` on a device tensor in a hot path, a tensor read as
an int (a slice bound, `range(t)`, `torch.arange(t)`), and linear algebra that checks for errors on the host."""

from __future__ import annotations

import libcst as cst

from viewlint.analysis import features, host_syncs, semantics
from viewlint.analysis.tree import dotted_name
from viewlint.rule import Rule


# Slice bounds and arguments that are plainly Python numbers.
_PLAIN_BOUNDS = (cst.Integer, cst.Float)


class HostSyncScalar(Rule):
    """
    ## What it does
    Flags `.item()`, `.tolist()` and `int(t)`, `float(t)`, `bool(t)` on a tensor inside a
    hot path, comparisons that answer with a Python bool (`torch.equal(a, b)`,
    `torch.allclose(a, b)`, `a.equal(b)`, `t.is_nonzero()`; not in a lambda, a predicate
    handed to a harness that decides when to run it), and a tensor used where an int is needed: a slice bound (`x[:, :lengths.max()]`),
    `range(t)`, `torch.arange(t)`, a size computed by a tensor's method (`x.view(n.sum(), 3)`, in `x.reshape`,
    `x.expand`, `x.new_zeros`, `torch.zeros/ones/empty/rand/randn`) (Python reads it with `__index__`, PyTorch with
    `.item()`), a tensor given where a kernel takes a host int (flash-attn varlen's `max_seqlen_q`/`max_seqlen_k`:
    `x_lens.max()`) or as a Python-scalar keyword (`g.sub(w, alpha=proj)`, `p.addcdiv_(m, v, value=-lr)`), and a
    tensor formatted in an f-string (`f"loss={loss:.3f}"`: `Tensor.__format__` reads it), and the `torch.linalg`
    functions that check their result for errors on the host (`torch.linalg.inv`, `cholesky`, `solve`, `lu_factor`,
    `ldl_factor`, `eig`, `eigh`, `eigvals`, `eigvalsh`, `matrix_rank`, `svdvals`; `torch.inverse`, `t.inverse()`,
    `t.cholesky()`): PyTorch documents that each synchronizes a CUDA device with the CPU to read its error codes. Hot (VL401–VL404 share this): `forward`, `forward_*`, `_forward*` and `*_forward` methods
    of any class (modules and the forward mixins that serve them); `__call__` of a module,
    or of any class when it takes a tensor-annotated parameter (logits and attention
    processors); functions under `torch.compile`/`torch.jit.script`; functions matched by
    the `hot-functions` setting (`decode_*`, or `Runner.replay`); functions and
    `if`/`for`/`while` blocks marked `# viewlint: hot`; and loops and nested functions inside
    all of those. Not hot: feature extractors, processors, tokenizers, collators, pipelines
    and pipeline stages (by class or base name, unless the class is a module).

    It fires only when the receiver is known to be a tensor (a `torch.Tensor` parameter,
    the result of a torch operation) and is not known to live on the CPU. Tensors built
    without a device (`torch.tensor(lengths)`), results of `.cpu()`, names ending in `_cpu`,
    image-grid metadata (`grid_thw`, `tgt_sizes`: processors build them on the CPU) and its
    rows, unless the code moves it (`.to(device)`), a `PackedSequence`'s `batch_sizes` (on
    the CPU by PyTorch's contract), and names listed in `cpu-names` are on the CPU: reading
    them is free. A private helper's tensor-annotated parameter that every caller in the
    module passes a plain number (`self._lengths(mask.shape[-1])`) holds that number. So is arithmetic with a CPU tensor of one or more
    dimensions (`torch.arange(n) * unit + offsets[-1]`: a device operand would raise), with
    host hyperparameters set in `__init__` from an `int` or a config read, a tensor a
    guard has put on the CPU (`if t.device.type != "cpu": return`), and an attribute path
    every method of the class sets to a CPU copy (`self.meta.lens = lens.to("cpu")`). Known-cold places stay
    quiet: `__init__`, weight loading and saving, tests, `if __name__ == "__main__":`,
    `raise` and `except` blocks and what follows a `try` whose body always returns (reached only after a handler
    caught an error: an out-of-memory retry), lambdas without parameters (the message thunk of a
    `torch._check`), logging or checks guarded by an interval or a debug flag
    (`if step % 100 == 0:`, `if self.verbose:`), or by the module's own predicate for one
    (`if self.is_gradient_accumulation_boundary():`, whose body returns `(self.micro_steps + 1) % self.gas == 0`),
    and checks switched on from the environment
    (`_validate = envs.X_VALIDATE_INDICES.get()`, then `if _validate:`), and work on a cache
    miss (`if key not in self.cache: ... self.cache[key] = ...`: once per key); a `# viewlint: hot`
    marker overrides a cold name.

    ## Why it matters
    Reading a device tensor's value on the host waits for every kernel queued before it:
    the CPU stops feeding the GPU, which then idles until the next launch. Once per step
    this costs little; in every layer's `forward` it serialises the model. Under
    `torch.compile` it is also a graph break, and under CUDA graph capture an error.

    ## Example
    ```python
    class Attention(nn.Module):
        def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
            max_len = lengths.max().item()          # waits for the GPU
            return x[:, :max_len]
    ```

    ## Fix
    Keep the value on the device (`torch.where`, masks, `clamp` with tensor bounds), take it
    from host-side metadata you already have (`lengths_cpu`, a Python list), or read all the
    values you need with one `.tolist()` outside the hot path. For a linear-algebra check, call the `_ex` twin
    (`torch.linalg.inv_ex(a).inverse`, `cholesky_ex`, `solve_ex`): it checks nothing unless asked
    (`check_errors=True`), so a singular input gives `inf`/`nan` instead of an exception. When the sync is deliberate,
    say so with `# noqa: VL401`. Fix safety: no automatic fix.
    """

    code = "VL401"
    name = "host-sync-scalar"
    summary = "`.item()`/`.tolist()`/`int(t)` on a device tensor in a hot path waits for the GPU"
    hot_path_only = True
    default_enabled = False
    off_by_default_reason = (
        "On libraries the team had never read (timm, torchvision, open_clip, lightning,\n"
        "vllm), 13 of 17 sampled findings held up, below the 90% a default rule must meet: whether\n"
        "a tensor read on the host lives on the GPU often rests on a convention only a docstring\n"
        "or a framework's configuration states (lengths kept on the CPU), or on a branch its only\n"
        "caller never takes. It stays a strong check on decode loops and `forward`s you write yourself.")

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return ((features.flag("tensor-scalar-read"),),)

    def visit_Call(self, node: cst.Call) -> None:
        self._check_implicit_arguments(node)
        if self._check_error_checking_linalg(node):
            return
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in semantics.HOST_SCALAR_METHODS and not node.args:
            self._check(node, func.value, f"`{self.facts.short_source(node)}`")
        elif isinstance(func, cst.Name) and func.value in semantics.HOST_SCALAR_BUILTINS and len(node.args) == 1:
            arg = node.args[0]
            if arg.keyword is None and arg.star == "" and func.value not in self.facts.index.aliases:
                self._check(node, arg.value, f"`{self.facts.short_source(node)}`")
        elif isinstance(func, cst.Attribute) and func.attr.value in semantics.HOST_BOOL_READS:
            # `torch.equal(pred, draft)`, `a.allclose(b)`: a Python bool, computed on the device.
            qualified = self.facts.qualify(func)
            compared = node.args[0].value if qualified is not None and qualified.startswith("torch.") and node.args \
                else func.value if qualified is None else None
            # (Not in a lambda: a predicate handed over, `equal=lambda a, b: torch.equal(a, b)`, runs when the harness
            # that holds it decides, most often once per signature it verifies.)
            if compared is not None and not self.facts.contexts.in_lambda:
                self._check(node, compared, f"`{self.facts.short_source(node)}` (a Python bool)")

    def _check_error_checking_linalg(self, node: cst.Call) -> bool:
        """`torch.linalg.inv(a)`, `a.inverse()`: the result's error codes are read on the host (PyTorch documents the
        sync); the `_ex` twin checks nothing unless asked. True where `node` is such a call."""
        func = node.func
        qualified = self.facts.qualify(func)
        if qualified in host_syncs.ERROR_CHECKING_LINALG:
            positional = [a for a in node.args if a.keyword is None and not a.star]
            given = positional[0].value if positional else next(
                (a.value for a in node.args if a.keyword is not None and a.keyword.value in ("A", "input")), None)
            twin = host_syncs.ERROR_CHECKING_LINALG[qualified]
        elif qualified is None and isinstance(func, cst.Attribute) and func.attr.value in host_syncs.ERROR_CHECKING_LINALG_METHODS \
                and not node.args:
            given = func.value
            twin = host_syncs.ERROR_CHECKING_LINALG_METHODS[func.attr.value]
        else:
            return False
        if given is not None:
            fix = (f"use `{twin}(…)`, which checks nothing unless asked (`check_errors=True`)" if twin
                   else "move it out of the hot path, or keep the sync and say so with `# noqa: VL401`")
            self._check(node, given, f"`{self.facts.short_source(node)}`", how="checks its result for errors on the host",
                        fix_message=fix)
        return True

    def visit_Slice(self, node: cst.Slice) -> None:
        """`x[:, :lengths.max()]`: a tensor as a slice bound is read on the host (`__index__`)."""
        for bound in (node.lower, node.upper, node.step):
            if bound is not None and not isinstance(bound, _PLAIN_BOUNDS):
                self._check(bound, bound, f"`{self.facts.short_source(bound)}` as a slice bound", implicit=True)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        """`[False] * lengths[i]`: a list repeated a tensor's number of times reads it on the host (`__index__`)."""
        if not isinstance(node.operator, cst.Multiply):
            return
        for sequence, count in ((node.left, node.right), (node.right, node.left)):
            if isinstance(sequence, (cst.List, cst.ListComp, cst.SimpleString)) and not isinstance(count, _PLAIN_BOUNDS):
                self._check(count, count, f"`{self.facts.short_source(count)}` as a repeat count", implicit=True)
                return

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        """`f"loss={loss:.3f}"`: formatting a tensor reads its value on the host (`Tensor.__format__`)."""
        self._check(node, node.expression, f"`{{{self.facts.short_source(node.expression)}}}` in an f-string",
                    implicit=True, how="formats a device tensor on the host")

    def _check_implicit_arguments(self, node: cst.Call) -> None:
        """`range(lengths.max())`, `torch.arange(n.max())`: a tensor where Python or PyTorch needs an int."""
        func = node.func
        qualified = self.facts.qualify(func)
        if isinstance(func, cst.Name) and func.value == "range" and func.value not in self.facts.index.aliases:
            called = "range"
        elif qualified == "torch.arange":
            called = "torch.arange"
        elif isinstance(func, cst.Attribute) and func.attr.value in semantics.SCALAR_KEYWORDS \
                and (self.facts.value_of(func.value).is_tensor or qualified == f"torch.{func.attr.value}"):
            # `g.sub(w, alpha=proj)` with a 0-dim tensor `proj`: the scaling is a Python scalar, read with `.item()`.
            keyword = semantics.SCALAR_KEYWORDS[func.attr.value]
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == keyword and not isinstance(arg.value, _PLAIN_BOUNDS):
                    self._check(arg.value, arg.value, f"`{self.facts.short_source(arg.value)}` given as `{keyword}=`",
                                implicit=True, how="is read as a Python scalar on the host")
            return
        elif (dotted_name(func) or "").rsplit(".", 1)[-1] in semantics.HOST_INT_PARAMETERS:
            # `flash_attn_varlen_func(q, k, v, cu, cu, x_lens.max(), x_lens.max())`: the kernel takes its max lengths as
            # host ints, and reads a tensor given there with `int()`.
            called = (dotted_name(func) or "").rsplit(".", 1)[-1]
            positions, keywords = semantics.HOST_INT_PARAMETERS[called]
            positional = [a for a in node.args if a.keyword is None and not a.star]
            given = [positional[i].value for i in positions if i < len(positional)]
            given += [a.value for a in node.args if a.keyword is not None and a.keyword.value in keywords]
            for value in given:
                if not isinstance(value, _PLAIN_BOUNDS):
                    self._check(value, value, f"`{self.facts.short_source(value)}` given to `{called}(…)` as a length",
                                implicit=True)
            return
        elif qualified in semantics.SIZE_ARGUMENT_FUNCTIONS or qualified is None and isinstance(func, cst.Attribute) \
                and func.attr.value in semantics.SIZE_ARGUMENT_METHODS and self.facts.value_of(func.value).is_tensor:
            # `pred.view(natoms.sum(), 3)`, `torch.zeros(n.max())`: each size is read with `__index__`.
            called = qualified or f"{self.facts.short_source(func.value)}.{func.attr.value}"  # type: ignore[attr-defined]
            for arg in node.args:
                # What a tensor's method computes (`natoms.sum()`, `lens.max()`), or an item of a tensor (`lengths[i]`):
                # a bare name given as a size is a Python int far more often than a tensor (`height`, `width`).
                computed = arg.value
                if arg.keyword is None and arg.star == "" and (isinstance(computed, cst.Call) and isinstance(
                        computed.func, cst.Attribute) or isinstance(computed, cst.Subscript)) \
                        and self.facts.value_of(computed.func.value if isinstance(computed, cst.Call) else computed.value).is_tensor:
                    self._check(computed, computed, f"`{self.facts.short_source(computed)}` given to `{called}(…)` as a size",
                                implicit=True)
            return
        else:
            return
        for arg in node.args:
            if (arg.keyword is None or called == "torch.arange" and arg.keyword.value in ("start", "end", "step")) \
                    and arg.star == "" and not isinstance(arg.value, _PLAIN_BOUNDS):
                self._check(arg.value, arg.value, f"`{self.facts.short_source(arg.value)}` given to `{called}(…)`", implicit=True)

    def _check(self, node: cst.CSTNode, tensor: cst.BaseExpression, expression: str, implicit: bool = False,
               how: str = "", fix_message: str = "") -> None:
        facts = self.facts
        if facts.sync_path_name() is None:
            return
        value = facts.value_of(tensor)
        if not facts.may_be_on_device(value):
            return
        if implicit and (not value.is_tensor or value.optional):
            return  # read as an int only where it is a tensor on every path (else it may well be a Python int)
        if facts.in_fallback_path(node):
            return  # a fallback for a missing host copy, or an error path that warns and gives up
        how = how or ("is read as an int on the host" if implicit else "copies a device tensor to the host")
        self.report(
            node,
            f"{expression} {how} in hot path {facts.sync_path_name()}: the CPU waits for every queued kernel",
            fix_message=fix_message or "keep the value on the device, use host-side metadata, or batch the reads outside the hot path",
        )
