"""VL405: `torch.tensor(host_data, device=d)` in a hot path: a blocking copy to the device, which waits for the GPU."""

from __future__ import annotations

import libcst as cst

from viewlint.analysis import features
from viewlint.analysis.torch_functions import is_host_data
from viewlint.analysis.values import Kind
from viewlint.rule import Rule

_CONSTRUCTORS = ("torch.tensor", "torch.as_tensor")


class HostSyncUpload(Rule):
    """
    ## What it does
    Flags `torch.tensor(data, device=d)` and `torch.as_tensor(data, device=d)` inside a hot
    path (see VL401 for what is hot) when `data` is host data (a number, a list, a tuple, a
    comprehension, a NumPy array, or a name the analysis knows holds one) and `d` is not
    known to be the CPU: `strides = torch.tensor([8, 16, 32], device=x.device)` in
    `forward`. `torch.tensor` is given host data unless the analysis knows a tensor
    (copy-constructing from a tensor warns); `torch.as_tensor` of an unknown value is not
    flagged, as it returns a tensor it is given as it is. An empty literal (`torch.tensor([],
    device=d)`) copies nothing and is not flagged.

    ## Why it matters
    PyTorch builds the tensor in pageable host memory and then copies it to the device
    with a blocking copy, which synchronises the stream: the CPU waits for every kernel
    queued before it, and the GPU then idles until the next launch. Once per layer or
    per decode step, this serialises the model. torchvision removed such calls from
    `AnchorGenerator.forward` (PR #5515), and a zero-size constant this way is a sync
    too.

    ## Example
    ```python
    def forward(self, x):
        scale = torch.tensor(0.5, device=x.device)          # a blocking upload
        offsets = torch.tensor([0, 1, 2], device=x.device)  # another
        return x * scale + offsets
    ```

    ## Fix
    Make constants once (a buffer registered in `__init__`, which moves with the module),
    build them on the device (`torch.full((), 0.5, device=...)`, `torch.arange(3,
    device=...)`), use a Python number where an op takes one (`x * 0.5`), or copy from
    pinned memory with `non_blocking=True`. No automatic fix.
    """

    code = "VL405"
    name = "host-sync-upload"
    summary = "`torch.tensor(host_data, device=d)` in a hot path: a blocking copy to the device that waits for the GPU"
    hot_path_only = True
    default_enabled = False
    off_by_default_reason = (
        "On 26 libraries (sglang, transformers, diffusers, torch and 22 others) its first version found\n"
        "334 uploads in hot paths (395 now). A helper labelled 40: 37 true (92.5%), but most run once per\n"
        "request (a vision encoder's offsets, a prefill's positions), and 3 of the 37 only when a\n"
        "caller passes a Python number where diffusers' own pipelines pass a tensor. Strictly read,\n"
        "34 of 40 (85%). It stays a sharp check on `forward`s and decode loops you write yourself.")

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        return features.calls("tensor", "as_tensor")

    def visit_Call(self, node: cst.Call) -> None:
        if self.facts.qualify(node.func) not in _CONSTRUCTORS or not node.args or node.args[0].keyword is not None:
            return
        if not any(a.keyword is not None and a.keyword.value == "device" for a in node.args):
            return
        data = node.args[0].value
        if isinstance(data, (cst.List, cst.Tuple)) and not data.elements:
            return  # `torch.tensor([], device=d)`: no element, so no copy (the copy returns before it starts)
        held = self.facts.value_of(data)
        if not (is_host_data(data, held) or (
                # `torch.tensor(t)` of a tensor warns (copy-construct with `t.clone()`): what it is given is host data
                # unless the analysis knows otherwise. `torch.as_tensor(t)` of a tensor is the tensor: evidence needed.
                self.facts.qualify(node.func) == "torch.tensor" and held.kind is Kind.UNKNOWN)):
            return
        hot = self.facts.sync_path_name()
        if hot is None or self.facts.in_fallback_path(node) or not self.facts.may_be_on_device(self.facts.value_of(node)):
            return
        self.report(
            node,
            f"`{self.facts.short_source(node)}` copies host data to the device in hot path {hot}: a blocking copy "
            f"from pageable memory waits for every queued kernel",
            fix_message="make it once (a registered buffer), build it on the device (`torch.full`, `torch.arange`), "
                        "or copy from pinned memory with `non_blocking=True`",
        )
