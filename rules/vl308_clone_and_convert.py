"""VL308: a copy and a conversion in a row: `x.clone().float()`, `x.detach().clone().to(device)`, `x.cpu().clone()`."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from viewlint.analysis import features, semantics
from viewlint.analysis.tree import dotted_name
from viewlint.analysis.values import Kind
from viewlint.diagnostics import Applicability
from viewlint.rule import Rule

# Where a device move sends the tensor, for the fused `.to(<device>, copy=True)`.
_MOVE_TARGETS = {"cpu": '"cpu"', "cuda": '"cuda"', "xpu": '"xpu"', "mps": '"mps"', "npu": '"npu"'}


class CloneAndConvert(Rule):
    """
    ## What it does
    Flags a `.clone()` next to a conversion in one chain: `x.clone().float()`,
    `x.detach().clone().to(device)`, `x.clone().cpu()`, and the other order,
    `x.cpu().clone()`, `x.to(device, dtype).clone()`; and a constructor's copy cast at once
    (`torch.Tensor(ids).long()`: a float32 copy, then an int64 one; `torch.tensor(v).float()`). A conversion (`.float()`,
    `.half()`, `.to(...)`, `.cpu()`, `.cuda()`) copies whenever it changes the dtype or
    the device, so the chain makes two full copies where one is asked for.

    It is silent when the conversion cannot change anything the analysis knows of: a
    cast to the dtype `x` is known to have, or `.to(x.device)` of `x` itself.

    ## Why it matters
    `x.clone().to("cpu")` of a GPU tensor allocates a second GPU copy of `x` only to
    transfer it and drop it: saving a state dict so doubles its GPU memory for a moment
    (DeepSpeed PR #6761, "Removes unnecessary cloning"). `logits[:, -1, :].clone().float()`
    in a decode loop copies the bf16 row, then copies it again into float32, every token
    (transformers PR #36748). `x.cpu().clone()` copies a GPU tensor to the host, then
    copies the host copy.

    ## Example
    ```python
    next_token_logits = outputs.logits[:, -1, :].clone().float()
    saved = {k: v.detach().clone().to("cpu") for k, v in model.state_dict().items()}
    ```

    ## Fix
    ```python
    next_token_logits = outputs.logits[:, -1, :].to(torch.float32, copy=True)
    saved = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
    ```
    `.to(..., copy=True)` converts and copies once, and still returns a fresh tensor when
    nothing needs converting, as the `.clone()` did.
    Fix safety: safe when the analysis knows `x` is a tensor (same values, dtype, device,
    layout and autograd history, and a storage of its own, in every case); unsafe
    (`--unsafe-fixes`) when it only may be one, and for a `non_blocking=` move: the clone
    was a private source for the asynchronous copy, which would then read `x` itself while
    the code after it may write `x`. Offered for `.clone()` without arguments
    next to a cast method without arguments (`torch` imported under that name), `.cpu()`,
    `.cuda()`, or a `.to(...)` not already given `copy=` or `**kwargs`.
    """

    code = "VL308"
    name = "clone-and-convert"
    summary = "`x.clone().float()`, `x.cpu().clone()`: two copies where `.to(…, copy=True)` makes one"
    fix_applicability = Applicability.SAFE
    reports_a_cost = True
    default_enabled = False
    off_by_default_reason = (
        "On SGLang, transformers, diffusers and eight other libraries, 21 of 30 sampled findings held\n"
        "up (issue 26, fifteenth pass): the others convert what is already on that device and of that\n"
        "dtype (`latents.to(device=device, dtype=dtype).clone()` of latents made there), where only the\n"
        "clone copies. Which it is depends on devices and dtypes the code rarely states. The fix is\n"
        "never worse, so turning it on costs only the reading.")

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return features.calls("clone", "Tensor", "tensor")  # `.clone()` and the constructors that copy

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) and _is_conversion(node):
            self._check_construct(node, func.value)
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Call) \
                or not isinstance(func.value.func, cst.Attribute):
            return
        inner = func.value
        inner_func = func.value.func
        assert isinstance(inner_func, cst.Attribute)
        if func.attr.value == "clone" and not node.args and _is_conversion(inner):
            conversion, source = inner, inner_func.value  # `x.cpu().clone()`
        elif inner_func.attr.value == "clone" and not inner.args and _is_conversion(node):
            conversion, source = node, inner_func.value  # `x.clone().float()`
        else:
            return
        value = self.facts.value_of(source)
        if value.kind not in (Kind.TENSOR, Kind.UNKNOWN) or value.host_type is not None:
            return  # not a tensor: an object's own `clone`
        if self._converts_nothing(conversion, source, value.dtype):
            return
        facts = self.facts
        text = facts.short_source(node)
        shown = facts.short_source(source)
        method = conversion.func.attr.value  # type: ignore[attr-defined]
        fused = self._fused(conversion)
        called = f".{method}({'…' if conversion.args else ''})"
        order = (f"`.clone()` copies `{shown}`, then `{called}` copies the clone again"
                 if conversion is node else
                 f"`{called}` copies `{shown}`, then `.clone()` copies the result again")
        when = ("whenever the cast changes the dtype" if method in semantics.DTYPE_CAST_METHODS
                else "whenever the move changes the device" if method in semantics.DEVICE_MOVE_METHODS
                else "whenever `.to(…)` converts anything")
        edits: tuple[tuple[cst.CSTNode, str], ...] = ()
        if fused is not None:
            edits = ((node, f"{facts.source_for_edit(source)}.to({fused})"),)
        self.report(
            node,
            f"`{text}`: {order} {when}: two copies where one is asked for",
            fix_message=f"convert and copy once: `.to({fused or '…, copy=True'})`",
            edits=edits,
            applicability=None if value.is_tensor and not _asynchronous(conversion) else Applicability.UNSAFE,
        )

    def _check_construct(self, node: cst.Call, built: cst.Call) -> None:
        """`torch.Tensor(ids).long()`, `torch.tensor(values).float()`: the constructor copies the data in its own dtype
        (float32 for `torch.Tensor`, the data's for `torch.tensor`), then the cast copies it again."""
        constructor = self.facts.qualify(built.func)
        method = node.func.attr.value  # type: ignore[attr-defined]
        if constructor not in ("torch.Tensor", "torch.tensor") or method not in semantics.DTYPE_CAST_METHODS or node.args \
                or any(a.keyword is not None and a.keyword.value == "dtype" for a in built.args) or not built.args:
            return
        target = semantics.CAST_METHOD_DTYPES[method]
        if constructor == "torch.Tensor" and target == "torch.float32":
            return  # `torch.Tensor(x)` is float32 already: `.float()` returns it
        made_dtype = self.facts.value_of(built).dtype  # `torch.tensor([1.0])`: its literals say float32
        if _same_dtype(made_dtype, target):
            return
        data = self.facts.value_of(built.args[0].value)
        if constructor == "torch.tensor" and made_dtype is None and data.kind not in (Kind.ARRAY, Kind.INT, Kind.INT_LIST, Kind.TENSOR):
            return  # a Python number or a list of unknown kind: float32 or int64, the cast may convert nothing
        made = "a float32 tensor" if constructor == "torch.Tensor" else "a tensor of the data's dtype"
        when = "" if constructor == "torch.Tensor" else " whenever that is not the dtype cast to"
        self.report(
            node,
            f"`{self.facts.short_source(node)}`: `{self.facts.short_source(built.func)}(…)` copies the data into {made}, "
            f"then `.{method}()` copies it again{when}",
            fix_message=f"build it in its dtype at once: `torch.tensor(…, dtype={target})` (or `torch.as_tensor`)",
        )

    def _converts_nothing(self, conversion: cst.Call, source: cst.BaseExpression, dtype: Optional[str]) -> bool:
        """The conversion is known to leave `source` as it is: a cast to its own dtype, `.to(source.device)`."""
        method = conversion.func.attr.value  # type: ignore[attr-defined]
        if method in semantics.DTYPE_CAST_METHODS:
            return _same_dtype(dtype, semantics.CAST_METHOD_DTYPES[method])
        if method != "to" or len(conversion.args) != 1:
            return False
        argument = conversion.args[0].value
        root = _root(source)
        if isinstance(argument, cst.Attribute) and argument.attr.value in ("device", "dtype"):
            return root is not None and _root(argument.value) == root  # `x.clone().to(x.device)`
        return _same_dtype(dtype, self.facts.qualify(argument))

    def _fused(self, conversion: cst.Call) -> Optional[str]:
        """The arguments of the one `.to(…)` that converts and copies once, or None when there is no such rewrite."""
        method = conversion.func.attr.value  # type: ignore[attr-defined]
        if method in semantics.DTYPE_CAST_METHODS:
            if conversion.args or self.facts.index.aliases.get("torch") != "torch":
                return None
            return f"{semantics.CAST_METHOD_DTYPES[method]}, copy=True"
        if method in _MOVE_TARGETS:
            return None if conversion.args else f"{_MOVE_TARGETS[method]}, copy=True"
        if any(a.star or (a.keyword is not None and a.keyword.value == "copy") for a in conversion.args) or not conversion.args:
            return None
        code = self.facts.module.code_for_node
        arguments = [f"{a.keyword.value}={code(a.value)}" if a.keyword is not None else code(a.value) for a in conversion.args]
        return ", ".join([*arguments, "copy=True"])


def _same_dtype(known: Optional[str], qualified: Optional[str]) -> bool:
    """`known` (a `Value.dtype`: "float32") is the dtype `qualified` (`torch.float`, `torch.float32`) names."""
    target = semantics.canonical_dtype(qualified)
    return known is not None and target is not None and semantics.canonical_dtype(f"torch.{known}") == target


def _is_conversion(call: cst.Call) -> bool:
    """`.float()`/`.half()`/… `.cpu()`/`.cuda()`/… or `.to(…)` (not given `copy=`, which already says what it copies)."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return False
    method = func.attr.value
    if method in semantics.DTYPE_CAST_METHODS or method in semantics.DEVICE_MOVE_METHODS:
        return not any(a.keyword is not None and a.keyword.value == "memory_format" for a in call.args)
    return method == "to" and bool(call.args) and not any(a.keyword is not None and a.keyword.value == "copy" for a in call.args)


def _root(node: cst.BaseExpression) -> Optional[str]:
    """The dotted name a chain of subscripts and calls starts from: `x` of `x.detach()[0]`, `self.w` of `self.w.t()`."""
    current: cst.BaseExpression = node
    while True:
        name = dotted_name(current)
        if name is not None:
            return name
        if isinstance(current, (cst.Attribute, cst.Subscript)):
            current = current.value
        elif isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute):
            current = current.func.value
        else:
            return None


def _asynchronous(conversion: cst.Call) -> bool:
    """`.to(device, non_blocking=True)` (or any `non_blocking=` but a literal `False`): the copy may still be reading
    its source when the call returns."""
    return any(a.keyword is not None and a.keyword.value == "non_blocking"
               and not (isinstance(a.value, cst.Name) and a.value.value == "False") for a in conversion.args)
