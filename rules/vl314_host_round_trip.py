"""VL314: a device tensor copied to the host and straight back, or an array copied on the host before it moves."""

from __future__ import annotations

import libcst as cst

from viewlint.analysis import features
from viewlint.analysis.host_detour import PASSIVE_METHODS, host_copied, left_receivers, moved_expression
from viewlint.analysis.values import Kind
from viewlint.rule import Rule


class HostRoundTrip(Rule):
    """
    ## What it does
    Flags, in a hot path (see VL401), a value moved to the device (`.to(device)`, `.cuda()`, `torch.tensor(…,
    device=…)`) that one expression made from a tensor that may already be there, by taking it to the host (`.cpu()`,
    `.numpy()`, `.tolist()`) and only keeping, reordering, copying or casting it on the way
    (`torch.tensor(x.cpu().numpy()[::-1].copy()).to(x.device)`). Any other call in between (a NumPy or SciPy
    function, a helper) may be why the detour is there, and is left alone, as is a tensor known to live on the CPU.
    It also flags `torch.tensor(array).to(device)` of a value known to be a NumPy array: the array is copied into a
    new host tensor only to be copied again to the device.

    ## Why it matters
    The round trip waits for the GPU (the copy to the host is a sync), moves the tensor over the bus twice and
    allocates it three times, on every call, for work the device does in place: a reversal is `torch.flip`, a
    slice is a view, a cast is `.to(dtype)` (crop-type-mapping's bidirectional ConvLSTM reversed its input through
    NumPy in every `forward`, PR #92). `torch.tensor(array)` always copies; `torch.as_tensor(array, device=device)`
    copies the array straight to the device (abcdrl's DQN, PR #2, on every sampled batch).

    ## Example
    ```python
    rev_inputs = torch.tensor(inputs.cpu().detach().numpy()[::-1].copy()).to(inputs.device)
    batch = torch.tensor(obs).to(self.device)            # obs: np.ndarray
    ```

    ## Fix
    ```python
    rev_inputs = torch.flip(inputs, dims=[0])
    batch = torch.as_tensor(obs, device=self.device)
    ```
    No automatic fix: what the detour did is for the reader to redo on the device.
    """

    code = "VL314"
    reports_a_cost = True
    name = "host-round-trip"
    summary = "A device tensor taken to the host and straight back, or an array copied on the host before it moves"
    hot_path_only = True

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return tuple((("call", left), ("call", move)) for left in ("cpu", "numpy", "tensor", "tolist")
                     for move in ("cuda", "to", "tensor", "as_tensor") if left != move)

    def visit_Call(self, node: cst.Call) -> None:
        if not self.facts.in_hot_path:
            return
        facts = self.facts
        moved = moved_expression(node, facts.qualify)
        if moved is None:
            return
        source = next((r for r in left_receivers(moved, facts.qualify) if facts.may_be_on_device(facts.value_of(r))), None)
        while isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) \
                and source.func.attr.value in PASSIVE_METHODS:
            source = source.func.value  # `x` of `x.detach()`: the tensor itself
        if source is not None:
            self.report(
                node,
                f"`{facts.short_source(node)}` takes `{facts.short_source(source, 40)}` to the host and back to the "
                f"device on every call of hot path {facts.hot_path_name}: a sync and two copies over the bus for what "
                f"the device does itself",
                fix_message="do it on the device (`torch.flip`, a slice, `.to(dtype)`, `.clone()`)",
            )
            return
        array = host_copied(moved, facts.qualify)
        if array is not None and facts.value_of(array).kind is Kind.ARRAY:
            text = facts.short_source(array, 40)
            self.report(
                node,
                f"`{facts.short_source(node)}` copies the NumPy array `{text}` into a new host tensor, then copies that "
                f"to the device, on every call of hot path {facts.hot_path_name}",
                fix_message=f"copy it once, straight to the device: `torch.as_tensor({text}, device=…)`",
            )
