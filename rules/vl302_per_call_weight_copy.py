"""VL302: a module's parameter or buffer transposed-and-copied, or cast, on every forward call."""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst

from viewlint.analysis import features, semantics
from viewlint.analysis.tree import descendants, dotted_name, subtree
from viewlint.rule import Rule

# Views that reorder dimensions: `.contiguous()` after them copies a 2-D+ weight every time.
_TRANSPOSING_FUNCTIONS = frozenset({"torch.t", "torch.transpose", "torch.permute", "torch.movedim", "torch.swapaxes"})


class PerCallWeightCopy(Rule):
    """
    ## What it does
    Flags, inside a hot path (`forward`, `__call__`, compiled functions, configured
    `hot-functions`), a copy of a module's own parameter that is rebuilt on every call:
    `self.weight.t().contiguous()`, `self.w.transpose(0, 1).contiguous()`,
    `self.q_proj.weight.T.contiguous()`, `torch.transpose(self.w, 0, 1).contiguous()`.

    With the option `casts = true` it also flags dtype casts of parameters known to be
    matrices (`self.w = nn.Parameter(torch.empty(n, m))`, `self.proj.weight` of a
    `*Linear`/`*Embedding`/`Conv*`): `self.w.float()`, `self.proj.weight.to(torch.float16)`.
    Casts are off by default because a model often keeps such a parameter in the target
    dtype already (`_keep_in_fp32_modules = ["gate.weight"]`), and then `.float()` is a
    no-op: 30 sampled cast findings on real code were right too rarely to be on by default.

    Parameters (for both checks) are recognised as `self.weight`, `self.bias`, `self.*_weight`,
    `self.*_bias`, `self.<submodule>.weight/bias`, and any `self.<name>` assigned an
    `nn.Parameter(...)` or registered with `register_buffer/register_parameter`. It does
    not fire on `x.to(self.weight.dtype)` (that copies `x`), on calls of submodules
    (`self.proj(x)`), on casts to a dtype only known at run time (`self.weight.to(x.dtype)`
    copies only when the dtypes differ), or when the result is stored back on `self`
    (that is the cache).

    ## Why it matters
    A weight does not change between forward calls, yet each call allocates and fills a
    new transposed or converted copy of it: a full read and write of the weight, and an
    allocation, per call, per layer.

    ## Example
    ```python
    def forward(self, x):
        w = self.weight.t().contiguous()        # a new copy of the weight on every call
        return torch.matmul(x, w) + self.bias.float()
    ```

    ## Fix
    Compute the copy once, after the weights are loaded, and reuse it:
    ```python
    def load_weights(self, ...):
        ...
        self.weight_t = self.weight.t().contiguous()

    def forward(self, x):
        return torch.matmul(x, self.weight_t) + self.bias_f32
    ```
    Or keep the parameter in the layout and dtype the kernel wants. No automatic fix.
    """

    code = "VL302"
    reports_a_cost = True
    name = "per-call-weight-copy"
    summary = "A parameter is transposed+copied or cast on every forward call: compute it once"
    # Casts are opt-in: models often keep such parameters in the target dtype already
    # (`_keep_in_fp32_modules`), which makes `.float()` a no-op the analysis cannot see.
    options = {"casts": False}
    hot_path_only = True

    @classmethod
    def prefilter_needs(cls, index: Any, settings: Any) -> features.Needs:
        transposed = ((features.flag("transposed-contiguous"),),)
        if settings.options_for(cls.code).get("casts", cls.options["casts"]):
            return transposed + features.calls("float", "half", "bfloat16", "double", "to")
        return transposed

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        func = node.func
        if not isinstance(func, cst.Attribute) or not facts.in_hot_path:
            return
        method = func.attr.value
        receiver = func.value
        if method == "contiguous" and not node.args:
            weight = self._transposed_parameter(receiver)
            if weight is not None and not self._stored_on_self():
                text = facts.short_source(receiver)
                self.report(
                    node,
                    f"`{text}.contiguous()` copies the parameter `{facts.short_source(weight)}` into a new layout on every call",
                    fix_message="compute the transposed copy once (after loading the weights) and reuse it",
                )
            return
        if not self.option("casts"):
            return
        target = self._cast_target(node, method)
        if target is None or not self._is_parameter(receiver) or self._stored_on_self():
            return
        if not self._is_matrix(receiver):
            return  # a norm weight, a bias, a scale: converting a small vector per call is cheap and often deliberate
        text = facts.short_source(receiver)
        self.report(
            node,
            f"`{facts.short_source(node)}` converts the parameter `{text}` to {target} on every call",
            fix_message=f"store `{text}` in {target} once (after loading the weights), or keep a converted copy",
        )

    def _is_matrix(self, node: cst.BaseExpression) -> bool:
        """`self.w` built as `nn.Parameter(torch.empty(n, m))`, or `self.proj.weight` of a Linear/Embedding/Conv."""
        while True:  # peel views: `self.gate.weight.t()`, `self.w.data`, `self.w[:n]`
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
                semantics.TRANSPOSING_METHODS | {"detach"}
            ):
                node = node.func.value
            elif isinstance(node, cst.Attribute) and node.attr.value in (semantics.TRANSPOSING_ATTRIBUTES | {"data"}):
                node = node.value
            elif isinstance(node, cst.Subscript):
                node = node.value
            else:
                break
        name = dotted_name(node) or ""
        info = self.facts.index.classes.get(self.facts.class_name or "")
        if info is None or not name.startswith("self."):
            return False
        parts = name.split(".")
        if len(parts) == 2:
            return parts[1] in info.matrix_attributes and parts[1] in info.tensor_attributes
        return len(parts) == 3 and parts[2] == "weight" and parts[1] in info.matrix_attributes

    def _is_parameter(self, node: cst.BaseExpression) -> bool:
        value = self.facts.value_of(node)
        return value.is_tensor and value.is_parameter

    def _transposed_parameter(self, node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """The parameter under `p.t()`, `p.transpose(…)`, `p.T`, `torch.transpose(p, …)`, else None."""
        inner: Optional[cst.BaseExpression] = None
        if isinstance(node, cst.Attribute) and node.attr.value in semantics.TRANSPOSING_ATTRIBUTES:
            inner = node.value
        elif isinstance(node, cst.Call):
            qualified = self.facts.qualify(node.func)
            if qualified in _TRANSPOSING_FUNCTIONS and node.args:
                inner = node.args[0].value
            elif qualified is None and isinstance(node.func, cst.Attribute) and node.func.attr.value in semantics.TRANSPOSING_METHODS:
                inner = node.func.value
        if inner is None or not self._is_parameter(inner):
            return None
        return inner

    def _cast_target(self, node: cst.Call, method: str) -> Optional[str]:
        """The dtype a cast converts to, when it is a fixed dtype (`.float()`, `.to(torch.half)`)."""
        if method in ("float", "half", "bfloat16", "double") and not node.args:
            return f"`{semantics.CAST_METHOD_DTYPES[method]}`"
        if method != "to" or not node.args:
            return None
        dtype_args = [a for a in node.args if a.keyword is None or a.keyword.value == "dtype"]
        if len(node.args) != 1 or len(dtype_args) != 1:
            return None  # `.to(device, dtype)`, `.to(x)`, `non_blocking=`: not a plain cast
        qualified = self.facts.qualify(dtype_args[0].value) or ""
        if qualified.startswith("torch.") and qualified.split(".")[-1] in semantics.DTYPE_NAMES and qualified.count(".") == 1:
            return f"`{qualified}`"
        return None

    def _stored_on_self(self) -> bool:
        """`self.w_t = self.weight.t().contiguous()`, or `packed = ...` then `setattr(layer, name, packed)` or
        `layer.packed = packed`: the copy is cached on an object, not rebuilt per call."""
        statement = self.facts.current_statement
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            targets: list[cst.BaseExpression] = []
            if isinstance(small, cst.Assign):
                targets = [t.target for t in small.targets]
            elif isinstance(small, cst.AnnAssign):
                targets = [small.target]
            for target in targets:
                name = dotted_name(target) if isinstance(target, cst.Attribute) else None
                if name is not None and name.startswith("self."):
                    return True
                if isinstance(target, cst.Subscript) and (dotted_name(target.value) or "").startswith("self."):
                    return True
                if isinstance(target, cst.Name) and self._cached_later(target.value):
                    return True
        return False

    def _cached_later(self, name: str) -> bool:
        """`name` is put on an object in this function: `setattr(obj, key, name)`, `obj.attr = name`, `cache[k] = name`."""
        context = self.facts.contexts.function
        if context is None or context.node is None:
            return False
        for node in subtree(context.node):
            if isinstance(node, cst.Call) and dotted_name(node.func) == "setattr" and len(node.args) == 3 \
                    and isinstance(node.args[2].value, cst.Name) and node.args[2].value.value == name:
                return True
            if isinstance(node, cst.Assign) and any(isinstance(t.target, (cst.Attribute, cst.Subscript)) for t in node.targets) \
                    and any(isinstance(n, cst.Name) and n.value == name for n in descendants(node.value)):
                return True  # `self.q_b = npu_format_cast(name)`, `layer.w = name if quantized else cast(name)`
        return False
