"""The inference layer on its own: values and joins, the call graph's hot reasons, and the evidence that makes
code hot, cold, CPU-side or long-lived. Each test states one kind of evidence real code gives."""

from __future__ import annotations

import ast
import textwrap

import pytest

from viewlint.analysis.callgraph import FunctionKey, callgraph_of, hot_reasons
from viewlint.analysis.module_index import build_index_from_ast
from viewlint.analysis.values import HOST, UNKNOWN, Device, Kind, Provenance, Value, join
from viewlint.engine import is_export_path, is_test_path, lint_text
from viewlint.settings import Settings


def reasons(source: str) -> dict[str, str]:
    """{"Class.method" or "function": why the call graph says it is hot}."""
    source = textwrap.dedent(source)
    index = build_index_from_ast(ast.parse(source), source)
    found = hot_reasons(callgraph_of(index), ())
    return {str(key): why for key, why in found.items()}


def codes(source: str, path: str = "snippet.py", select: tuple[str, ...] = ("ALL",)) -> list[tuple[int, str]]:
    diagnostics = lint_text(textwrap.dedent(source).lstrip("\n"), path, Settings(select=select))
    return [(d.start.row, d.code) for d in diagnostics]


# ---------------------------------------------------------------- values and joins
def test_a_join_keeps_a_view_from_either_path_and_contiguity_only_from_both():
    view = Value(kind=Kind.TENSOR, provenance=Provenance.VIEW, base="batch", partial=True, contiguous=True)
    owned = Value(kind=Kind.TENSOR, provenance=Provenance.FRESH, contiguous=None)
    joined = join(view, owned)
    assert joined.is_view and joined.base == "batch"  # "may" for what makes a bug
    assert joined.contiguous is None  # "must" for what excuses one


def test_a_join_keeps_a_device_both_paths_agree_on():
    cpu = Value(device=Device.CPU)
    assert join(cpu, Value(device=Device.CPU)).device is Device.CPU
    assert join(cpu, UNKNOWN).device is Device.UNKNOWN


def test_a_join_of_a_tensor_and_an_unknown_value_on_the_same_device_keeps_the_device():
    # `seq_lens[:bs].cpu()` from one caller, `forward_batch.seq_lens_cpu` (a host value of unknown kind) from another.
    tensor = Value(kind=Kind.TENSOR, device=Device.CPU)
    joined = join(tensor, Value(device=Device.CPU))
    assert joined.kind is Kind.TENSOR and joined.optional and joined.device is Device.CPU
    assert join(tensor, UNKNOWN).device is Device.UNKNOWN


def test_a_join_of_none_and_a_tuple_keeps_the_tuples_elements():
    # `return None` on one path, `return k, buffer` on another: what is unpacked comes from the tuple.
    view = Value(kind=Kind.TENSOR, provenance=Provenance.VIEW, base="buffer", partial=True)
    pair = Value(kind=Kind.WRAPPER, wrapper="tuple", elements=(view, Value(kind=Kind.TENSOR, label="buffer")))
    assert join(HOST, pair) == pair and join(pair, HOST) == pair
    assert join(UNKNOWN, pair) == UNKNOWN  # nothing known of the other path: it may be anything


@pytest.mark.parametrize("stored, found", [("(buffer, buffer[:2])", []), ("(pool, buffer[:2])", [(10, "VL101")])])
def test_a_tensor_bound_differently_on_two_paths_is_known_by_its_name(stored, found):
    # After the `if`, `buffer` is the pool's tensor or a new one: either way its views are views of `buffer`,
    # and storing `buffer` next to them stores their base.
    source = f"""
    import torch

    _CACHE = {{}}


    def keep(key, pool):
        buffer = pool.get(key)
        if buffer is None:
            buffer = torch.zeros(8, 4)
        _CACHE[key] = {stored}
    """
    assert codes(source, select=("VL101",)) == found


def test_a_slice_of_a_split_no_longer_covers_its_base():
    source = """
    import torch

    class Recorder:
        def __init__(self):
            self.cache = {}

        def all_pieces(self, k, x: torch.Tensor):
            self.cache[k] = list(x.chunk(4))

        def some_pieces(self, k, x: torch.Tensor):
            self.cache[k] = list(x.chunk(4))[:2]
    """
    assert codes(source, select=("VL101",)) == [(11, "VL101")]


# ---------------------------------------------------------------- the call graph
def test_helpers_called_from_forward_are_hot_and_say_why():
    found = reasons("""
    import torch.nn as nn

    def pad_lengths(x):
        return x

    class Attention(nn.Module):
        def forward(self, x):
            return self._project(pad_lengths(x))

        def _project(self, x):
            return x
    """)
    assert found["Attention._project"] == "called from `Attention.forward`"
    assert found["pad_lengths"] == "called from `Attention.forward`"


def test_calls_through_an_imported_module_never_resolve_to_a_local_method():
    found = reasons("""
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def forward(self, x):
            return F.interpolate(x, scale_factor=2)

    class Exporter:
        def interpolate(self, frames):
            return frames
    """)
    assert "Exporter.interpolate" not in found


def test_a_step_loop_is_the_loop_that_runs_the_step():
    found = reasons("""
    def collect(x):
        return x

    def denoise_step(x):
        return x

    def generate(pipe, scheduler, chunks):
        outputs = []
        for chunk in chunks:
            x = chunk
            for t in scheduler.timesteps:
                x = scheduler.step(denoise_step(x), t, x)
            outputs.append(collect(x))
        return outputs
    """)
    assert found["denoise_step"].startswith("called from a loop that runs `scheduler.step()`")
    assert "collect" not in found  # after the denoising loop: once per chunk, not per step


def test_a_function_that_runs_steps_in_a_loop_is_not_itself_a_step():
    found = reasons("""
    def run_step(sched, x, t):
        return sched.scheduler.step(x, t)

    def finish(x):
        return x

    def run_loop(sched, x, steps):
        for t in steps:
            x = run_step(sched, x, t)
        return x

    def denoise(sched, x, steps):
        x = run_loop(sched, x, steps)
        return finish(x)
    """)
    assert found["run_step"].startswith("runs `sched.scheduler.step()`")
    assert "denoise" not in found and "finish" not in found


def test_a_forward_that_returns_host_data_is_the_end_of_a_pipeline():
    found = reasons("""
    import torch.nn as nn

    def to_wave(x):
        return x

    class Vocoder(nn.Module):
        def forward(self, mel):
            wav = to_wave(mel)
            return wav.squeeze().cpu()
    """)
    assert "Vocoder.forward" not in found and "to_wave" not in found


def test_debugging_tools_are_not_hot():
    found = reasons("""
    def detect_overflow(var):
        return var

    class DebugUnderflowOverflow:
        def forward_hook(self, module, inputs, outputs):
            detect_overflow(outputs)
    """)
    assert found == {}


# ---------------------------------------------------------------- cold evidence inside hot code
PROBE_MODULE = """
import torch
import torch.nn as nn


class M(nn.Module):
    def forward(self, x: torch.Tensor):
{body}
"""


def probe(body: str) -> list[tuple[int, str]]:
    source = PROBE_MODULE.format(body=textwrap.indent(textwrap.dedent(body), " " * 8))
    return codes(source, select=("VL401",))


def test_a_run_once_guard_is_cold():
    assert probe("""
    if not self.ready:
        self.scale = x.max().item()
        self.ready = True
    if self.table is None:
        self.table = x.sum().item()
    return x
    """) == []


def test_dead_branches_are_cold():
    assert probe("if 0:\n    print(x.max().item())\nif False:\n    print(x.min().item())\nreturn x\n") == []


def test_an_early_return_unless_debugging_makes_the_rest_cold():
    source = """
    import torch
    import torch.nn as nn

    def diagnostics_enabled():
        return False

    def log_stats(x: torch.Tensor):
        if not diagnostics_enabled():
            return
        print(x.abs().max().item())

    class M(nn.Module):
        def forward(self, x: torch.Tensor):
            log_stats(x)
            return x
    """
    assert codes(source, select=("VL401",)) == []


def test_cuda_graph_capture_is_startup_work():
    source = """
    import torch

    class Backend:
        def init_forward_metadata(self, seq_lens: torch.Tensor):
            return self._capture_cuda_graph_metadata(seq_lens)

        def _capture_cuda_graph_metadata(self, seq_lens: torch.Tensor):
            return seq_lens.cpu()
    """
    assert codes(source, select=("VL402",)) == []


# ---------------------------------------------------------------- device and kind evidence
def test_a_flag_with_a_bool_default_is_not_a_tensor_whatever_its_annotation():
    source = """
    import torch
    import torch.nn as nn

    class Attention(nn.Module):
        def forward(self, x: torch.Tensor, output_attentions: torch.Tensor | None = False):
            if not output_attentions:
                return x
            return x * 2
    """
    assert codes(source, select=("VL403",)) == []


def test_numpy_results_are_host_arrays():
    assert probe("""
    import numpy as np
    idxs = np.broadcast_to(np.arange(3)[:, None], (3, 4)).reshape(-1) + np.arange(12)
    if idxs.max() > 5:
        return x
    return x
    """) == []


def test_callers_passing_host_tensors_put_a_parameter_on_the_cpu():
    source = """
    import torch
    import torch.nn as nn

    def step_size(sigma: torch.Tensor, sigma_next: torch.Tensor) -> float:
        return float((sigma_next - sigma).cpu().item())

    class Denoiser(nn.Module):
        def forward(self, x: torch.Tensor, sigma_val: float, next_val: float):
            h = step_size(torch.tensor(sigma_val, dtype=torch.float64), torch.tensor(next_val, dtype=torch.float64))
            return x * h
    """
    assert codes(source, select=("VL401", "VL402")) == []


def test_cpu_named_arguments_put_a_parameter_on_the_cpu():
    source = """
    import torch
    import torch.nn as nn

    class Backend(nn.Module):
        def forward(self, x: torch.Tensor, seq_lens_cpu, host_lens):
            return x[: self._total(seq_lens_cpu)] + self._total(host_lens)

        def _total(self, values):
            if isinstance(values, torch.Tensor):
                return int(values.sum())
            return sum(values)
    """
    assert codes(source, select=("VL401",)) == []


def test_a_config_value_narrowed_to_a_tensor_is_a_host_tensor():
    source = """
    import torch
    import torch.nn as nn

    class Vision(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.full_attention_layers = config.full_attention_layers

        def forward(self, x: torch.Tensor):
            layers = self.full_attention_layers
            if isinstance(layers, torch.Tensor):
                layers = layers.tolist()
            return x
    """
    assert codes(source, select=("VL401",)) == []


def test_a_string_split_is_not_a_tensor_split():
    assert probe("""
    start, end = self.window.split("-", 1)
    return x[: int(start)]
    """) == []


# ---------------------------------------------------------------- long-lived containers
def test_a_batch_a_method_takes_and_resets_to_none_is_not_long_lived():
    source = """
    import torch

    class Allocator:
        def __init__(self):
            self.group = None

        def begin(self):
            self.group = []

        def free(self, index: torch.Tensor):
            self.group.append(index[::4])

        def end(self):
            pending, self.group = self.group, None
            return torch.cat(pending)
    """
    assert codes(source, select=("VL101",)) == []


def test_every_piece_of_a_split_into_one_queue_pins_nothing_more_but_keyed_entries_do():
    source = """
    import torch

    class Releaser:
        def __init__(self):
            self.release_queue = []
            self.cache = {}

        def release(self, indices: torch.Tensor):
            for page in indices.split(16):
                self.release_queue.append(page)

        def remember(self, keys, indices: torch.Tensor):
            for key, page in zip(keys, indices.split(16)):
                self.cache[key] = page
    """
    assert codes(source, select=("VL101",)) == [(14, "VL101")]


# ---------------------------------------------------------------- test code
@pytest.mark.parametrize("path,expected", [
    ("tests/test_model.py", True), ("pkg/tests/helpers.py", True), ("test_model.py", True), ("model_test.py", True),
    ("conftest.py", True), ("torch/testing/_internal/common.py", True), ("pkg/model.py", False),
    ("pkg/latest/model.py", False), ("pkg/test_utils_dir/x.py", False),
])
def test_test_paths(path, expected):
    assert is_test_path(path) is expected


def test_cost_and_hot_path_rules_are_quiet_in_test_code_but_lost_writes_are_not():
    source = """
    import torch
    import torch.nn as nn

    class Tiny(nn.Module):
        def forward(self, x: torch.Tensor):
            return x.max().item()

    def test_update(buf: torch.Tensor, idx: torch.Tensor):
        state = torch.zeros(4, 4)
        state = state.index_copy(0, idx, buf)
        buf[idx].zero_()
        return state
    """
    assert sorted(codes(source, path="tests/test_model.py")) == [(11, "VL201")]
    assert {code for _, code in codes(source, path="pkg/model.py")} >= {"VL401", "VL201"}


@pytest.mark.parametrize("path,expected", [
    ("ultralytics/engine/exporter.py", True), ("torch/_export/db/examples/x.py", True), ("torch/export/_trace.py", True),
    ("transformers/exporters/exporter_openvino.py", True), ("pkg/export_onnx.py", True), ("pkg/onnx_export.py", True),
    ("pkg/export.py", True), ("pkg/exported_model.py", False), ("pkg/exporting.py", False), ("pkg/reexport.py", False),
    ("pkg/model.py", False),
])
def test_export_paths(path, expected):
    assert is_export_path(path) is expected


def test_export_code_is_quiet_on_costs_and_syncs_but_not_on_lost_writes():
    # ultralytics' `NMSModel.forward` in `engine/exporter.py` runs once, as the exporter's dry run and trace.
    source = """
    import torch
    import torch.nn as nn

    class NMSModel(nn.Module):
        def forward(self, x: torch.Tensor, mask: torch.Tensor, idx: torch.Tensor):
            x[idx].zero_()
            return x.nonzero(), x.max().item()
    """
    assert codes(source, path="ultralytics/engine/exporter.py") == [(6, "VL201")]
    assert {code for _, code in codes(source, path="ultralytics/engine/model.py")} >= {"VL201", "VL401", "VL404"}


def test_backends_named_for_the_cpu_hold_host_tensors():
    source = """
    import torch

    class IntelAMXAttnBackend:
        def forward_extend(self, q: torch.Tensor, extend_seq_lens: torch.Tensor):
            return q[: int(extend_seq_lens.max().item())]

    class CUDAAttnBackend:
        def forward_extend(self, q: torch.Tensor, extend_seq_lens: torch.Tensor):
            return q[: int(extend_seq_lens.max().item())]
    """
    assert codes(source, select=("VL401",)) == [(9, "VL401")]


def test_output_safety_checkers_run_once_per_output():
    source = """
    import torch
    import torch.nn as nn

    class StableDiffusionSafetyChecker(nn.Module):
        def forward(self, image_embeds: torch.Tensor, concept_embeds: torch.Tensor):
            scores = (image_embeds @ concept_embeds.T).cpu()
            return [bool(s > 0) for s in scores[0]]
    """
    assert codes(source, select=("VL401", "VL402", "VL403")) == []


def test_a_union_with_any_says_nothing():
    source = """
    import torch
    from typing import Any, Union

    def predict(inputs: dict[str, Union[torch.Tensor, Any]], flags: torch.Tensor | Any):  # viewlint: hot
        return_loss = inputs.get("return_loss")
        if return_loss and flags:
            return 1
        return 0
    """
    assert codes(source, select=("VL403",)) == []


def test_sync_allowed_contexts_setting_adds_to_the_defaults():
    source = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class M(nn.Module):
        def forward(self, x: torch.Tensor):
            with gpu_sync_allowed():
                a = x.max().item()
            with permit_host_reads():
                b = x.min().item()
            return a + b
    """).lstrip("\n")
    default = [d.start.row for d in lint_text(source, "m.py", Settings(select=("VL401",)))]
    configured = lint_text(source, "m.py", Settings(select=("VL401",), sync_allowed_contexts=("permit_host_reads",)))
    assert default == [9] and configured == []


def test_a_union_with_a_host_type_is_not_known_to_be_a_tensor():
    source = """
    import torch
    import torch.nn as nn
    from typing import Optional, Union

    class Merger(nn.Module):
        def forward(self, x: torch.Tensor, size: int | torch.Tensor, n: Union[int, torch.Tensor],
                    lengths: Optional[torch.Tensor] = None):
            h = int(size) + int(n)
            return x[:h] + int(lengths.sum())
    """
    assert codes(source, select=("VL401",)) == [(9, "VL401")]



def test_a_read_that_falls_back_when_no_host_copy_is_given_is_not_reported():
    source = """
    import logging
    import torch
    import torch.nn as nn

    logger = logging.getLogger(__name__)

    class Attention(nn.Module):
        def forward(self, x: torch.Tensor, cu_seqlens: torch.Tensor, cu_seqlens_host=None, seq_lens_cpu=None):
            bounds = cu_seqlens_host if cu_seqlens_host is not None else tuple(cu_seqlens.tolist())
            if seq_lens_cpu is None:
                seq_lens_cpu = cu_seqlens.cpu()
            if x.shape[0] != len(bounds):
                logger.warning("mismatch: %s", cu_seqlens.tolist())
                return None
            return x[: int(cu_seqlens[-1])]
    """
    assert codes(source, select=("VL401", "VL402")) == [(15, "VL401")]


def test_the_test_of_a_warn_and_give_up_branch_still_runs_every_call():
    source = """
    import logging
    import torch

    logger = logging.getLogger(__name__)

    def build(kv_slot: torch.Tensor, limit: int):  # viewlint: hot
        if int(kv_slot.max().item()) >= limit:
            logger.warning("out of range: %s", kv_slot.tolist())
            return None
        return kv_slot
    """
    assert codes(source, select=("VL401",)) == [(7, "VL401")]


@pytest.mark.parametrize(
    "qualified",
    ["torch.zeros", "torch.split", "torch.narrow", "torch.reshape", "torch.cat", "torch.topk", "torch.where",
     "torch.nn.functional.pad", "torch.linalg.norm", "torch.special.erf", "torch.frobnicate", "torch.t",
     "torch.cuda.get_device_capability", "torch.cuda.current_stream", "torch.distributed.get_rank",
     "torch.is_tensor", "torch.get_default_dtype", "torch.numel", "torch.Size", "torch.backends.cudnn.is_available",
     "torch._C._foo", "torch.ops.aten.add"],
)
def test_the_prefilter_and_the_walker_agree_on_which_torch_calls_give_tensors(qualified):
    """`semantics.torch_call_gives_tensor` (what the prefilter reads) is true exactly for the torch calls whose
    value the walker knows; any other gives UNKNOWN."""
    from viewlint.analysis import semantics
    from viewlint.analysis.facts import Facts

    module, _, name = qualified.rpartition(".")
    source = f"import {module}\nx = {qualified}(y, 1)\n"
    import libcst as cst

    tree = cst.parse_module(source)
    index = build_index_from_ast(ast.parse(source), source)
    facts = Facts(tree, Settings(), index)
    call = tree.body[1].body[0].value
    value = facts.value_of(call)
    assert (value.kind is not Kind.UNKNOWN) == semantics.torch_call_gives_tensor(qualified), value
