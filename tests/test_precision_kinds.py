"""Kinds of false findings met on libraries the team had never read (issue 27: timm, torchvision, open_clip,
vllm), each reduced to a file in `tests/data/precision_kinds/` whose first lines say what it stands for.

Each must stay silent on both paths (the prefilter on and off), except for the findings listed as true;
next to each kind, a twin without the evidence that excused it is still reported, so the fix is the
evidence and not a blind spot."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import lint_both_paths

DATA = Path(__file__).parent / "data" / "precision_kinds"


findings = lint_both_paths


# kind -> the findings that are true in it (all others were false, and are gone)
KINDS = {
    "cpu_named": [],                    # values computed from `*_cpu` host tensors stay on the host
    "cpu_device_of": [],                # `torch.zeros(..., device=t.device)` of a host `t`
    "cpu_distribution": [],             # a `torch.distributions` sample of Python floats
    "optimizer_state_dict": [],         # `Optimizer.state[p][k] = v` stores into a dict
    "hot_memoised": [],                 # `if layer._scale is None: layer._scale = x.cpu().item()`: once
    "hot_tracing_only": [],             # ONNX-export helpers: not hot, and out-of-place is what export needs
    "hot_error_path": [(12, "VL403")],  # the check itself syncs (true); what the error path computes does not
    "hot_profiling": [],                # `if force_cpu: model = model.to("cpu")`: the copy is the point
    "vl304_arg_attribute": [],          # `x.last_hidden_state.masked_fill(...)`: activations, not a cache
    "vl104_accounting": [],             # counters of a class that stores pointers and sizes, not tensors
    "callee_consumes": [],              # a method that keeps a matmul of its arguments, not the arguments
    "view_flat_buffer": [],             # split pieces of a flat buffer the object keeps, into `param.data`
    "view_size1_dim": [],               # `t[0]` of a batch of one
    "view_loop_over_input": [],         # a loop over the caller's list makes no new tensors
    "vl102_permute_contiguous": [],     # `.contiguous()` after `.permute()` always copies
    # The second audit (seed 28) on the same libraries:
    "cpu_attr_slice_renamed": [],       # `q = cm.query_start_loc_cpu[...]`: an attribute named for the host
    "cpu_distribution_torchfn": [],     # `torch.sqrt(1. - lam)` of a number: made on the host
    "cpu_ifexp_cpu": [],                # `x.cpu() if cond else None`: on the host, or nothing
    "vl301_param_layout_from_warmup": [],  # a public method's layout is not its in-file warm-up call's
    # The third audit (seed 29):
    "cpu_mixed_with_host": [],          # mixed with a host tensor of one or more dimensions: on the host
    # After the third audit:
    "cpu_memo_tuple": [],               # a memoised helper's host element, cat'ed: still on the host
    # The fifth audit (peft, torchao, kornia):
    "str_keyed_flags": [],              # a base class's `dict[str, bool]`, a `str` key: no tensor
    "optimizer_state_by_string": [],    # `opt.state[p]["latent"] = v`: what a string indexes is a dict
    "inplace_then_cast": [],            # `w.add_(d).to(orig_dtype)`: the write landed; the cast is dead code
    "cpu_device_local": [],             # `host = torch.device("cpu")`; `.to(host)`: on the host
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_kind_of_false_finding_stays_silent(kind):
    source = (DATA / f"{kind}.py").read_text(encoding="utf-8")
    assert findings(source) == KINDS[kind]


TWINS = {
    # The same host-side arithmetic on metadata not named for the host: a device tensor.
    "cpu_named": ("""
        import torch
        from torch import nn


        class Builder(nn.Module):
            def forward(self, meta, x: torch.Tensor) -> torch.Tensor:
                qsl = meta.query_start_loc.cuda()
                query_lens = qsl[1:] - qsl[:-1]
                if torch.any(query_lens == 1).item():
                    x = x + 1
                return x
    """, [(9, "VL401")]),
    # A distribution of device tensors samples on the device.
    "cpu_distribution": ("""
        import torch
        from torch import nn


        class Model(nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                lam = torch.distributions.Beta(x.mean(), x.mean()).sample()
                return x * lam.item()
    """, [(8, "VL401")]),
    # A flag that is not a memo (nothing in the block sets it): every call.
    "hot_memoised": ("""
        import torch
        from torch import nn


        class Impl(nn.Module):
            def forward(self, layer, q: torch.Tensor, output_scale: torch.Tensor) -> torch.Tensor:
                if layer.use_scale:
                    scale = output_scale.cpu().item()
                    q = q * scale
                return q
    """, [(8, "VL402")]),
    # Without the raise, the block is the normal path.
    "hot_error_path": ("""
        import torch
        from torch import nn


        class Detector(nn.Module):
            def forward(self, boxes: torch.Tensor) -> torch.Tensor:
                bad = boxes[:, 2:] <= boxes[:, :2]
                if bad.any():
                    boxes = boxes[torch.where(bad.any(dim=1))[0]]
                return boxes
    """, [(8, "VL403"), (9, "VL404")]),
    # Storing one piece of a split, not all of them: the rest of the buffer stays pinned.
    "view_flat_buffer": ("""
        import torch


        class Holder:
            def __init__(self):
                self.saved = []

            def keep_first(self, packed: torch.Tensor, rows: list) -> None:
                first = packed.split(rows)[0]
                self.saved.append(first)
    """, [(10, "VL101")]),
    # The memoised helper's element is made from a parameter: on the model's device.
    "cpu_memo_tuple": ("""
        import torch
        from torch import nn


        class Vision(nn.Module):
            def __init__(self):
                super().__init__()
                self.freqs = nn.Parameter(torch.randn(64, 8))
                self._cache = {}

            def rope_by_thw(self, t: int, h: int, w: int):
                key = (t, h, w)
                if key in self._cache:
                    return self._cache[key]
                cos = self.freqs[: h * w].cos()
                cu = (cos[:, 0] > 0).cumsum(0)
                self._cache[key] = (cos, cu)
                return cos, cu

            def forward(self, x: torch.Tensor, grid: list) -> torch.Tensor:
                parts: list[torch.Tensor] = []
                for t, h, w in grid:
                    cos, cu_thw = self.rope_by_thw(t, h, w)
                    parts.append(cu_thw)
                cu_seqlens = torch.cumsum(torch.cat(parts), dim=0, dtype=torch.int32)
                cu_np = cu_seqlens.cpu().numpy()
                return x[: int(cu_np[-1])]
    """, [(26, "VL402")]),
}


# The fifth audit's kinds: without the evidence, still reported.
TWINS.update({
    "str_keyed_flags": ("""
        import torch
        from torch import nn

        class Linear(nn.Module):
            def forward(self, x: torch.Tensor, adapter) -> torch.Tensor:
                if self.lora_bias[adapter]:
                    x = x + 1.0
                return x
    """, [(6, "VL403")]),
    "optimizer_state_by_string": ("""
        import torch

        def remember(buf: torch.Tensor, x: torch.Tensor) -> None:
            p = x.argsort()
            buf[p][0] = 1.0
    """, [(5, "VL202")]),
    "inplace_then_cast": ("""
        import torch
        from torch import nn

        def merge_bias(layer: nn.Linear, delta: torch.Tensor) -> None:
            orig_dtype = layer.bias.data.dtype
            layer.bias.data.to(orig_dtype)
    """, [(6, "VL205")]),
    "cpu_device_local": ("""
        import torch
        from torch import nn

        class Estimator(nn.Module):
            def forward(self, kp: torch.Tensor) -> torch.Tensor:
                host = torch.device("cuda")
                kp_host = kp.detach().to(host).double()
                finite = torch.isfinite(kp_host).all(1)
                kp_host = kp_host[finite]
                return kp_host
    """, [(9, "VL404")]),
})


@pytest.mark.parametrize("kind", sorted(TWINS))
def test_the_twin_without_the_evidence_is_still_reported(kind):
    source, expected = TWINS[kind]
    assert findings(textwrap.dedent(source).lstrip("\n")) == expected
