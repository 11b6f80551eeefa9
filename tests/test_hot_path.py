"""The hot-path context: which functions and blocks count as hot, which stay cold, and the settings that change it.

VL401 (`.item()` on a tensor parameter) is the probe: it fires exactly where the walker says "hot".
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import lint_both_paths, run_viewlint


def hot_rows(lint_source, source: str, **settings) -> list[int]:
    """Rows where the probe `x.item()` fired."""
    source = "import torch\nimport torch.nn as nn\n\n" + textwrap.dedent(source).lstrip("\n")
    return [row for row, code, _ in lint_source(source, select=("VL401",), **settings)]


# ---------------------------------------------------------------- hot functions
def test_forward_and_forward_variants_of_a_module_are_hot(lint_source):
    source = """
    class M(nn.Module):
        def forward(self, x: torch.Tensor):
            return x.item()
        def forward_decode(self, x: torch.Tensor):
            return x.item()
        def _forward_impl(self, x: torch.Tensor):
            return x.item()
        def extra(self, x: torch.Tensor):
            return x.item()
    """
    assert hot_rows(lint_source, source) == [6, 8, 10]


def test_forward_of_a_mixin_without_bases_is_hot(lint_source):
    # sglang's attention `...ForwardMixin` classes and `ModelRunner.forward` have no nn.Module base.
    source = """
    class AttentionForwardMixin:
        def forward_mha(self, x: torch.Tensor):
            return x.item()
    """
    assert hot_rows(lint_source, source) == [6]


def test_call_is_hot_on_modules_and_tensor_taking_classes_only(lint_source):
    source = """
    class Block(nn.Module):
        def __call__(self, x: torch.Tensor):
            return x.item()

    class LogitsProcessor:
        def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor):
            x: torch.Tensor = scores.max()
            return x.item()

    class Collator:
        def __call__(self, features, x: "list" = None):
            x = torch.stack(features)
            return x.tolist()
    """
    assert hot_rows(lint_source, source) == [6, 11]


def test_call_of_data_preparation_classes_is_not_hot_even_with_tensor_parameters(lint_source):
    source = """
    class AudioFeatureExtractor(SequenceFeatureExtractor):
        def __call__(self, raw_speech: torch.Tensor):
            return raw_speech.max().item()

    class ImagePipeline(DiffusionPipeline):
        def __call__(self, latents: torch.Tensor):
            return latents.max().item()
    """
    assert hot_rows(lint_source, source) == []


def test_compiled_and_scripted_functions_are_hot(lint_source):
    source = """
    @torch.compile
    def a(x: torch.Tensor):
        return x.item()

    @torch.compile(dynamic=True)
    def b(x: torch.Tensor):
        return x.item()

    @torch.jit.script
    def c(x: torch.Tensor):
        return x.item()

    def d(x: torch.Tensor):
        return x.item()
    """
    assert hot_rows(lint_source, source) == [6, 10, 14]


def test_hot_marker_on_a_function_above_its_decorator_and_on_blocks(lint_source):
    source = """
    def a(x: torch.Tensor):  # viewlint: hot
        return x.item()

    # viewlint: hot
    def b(x: torch.Tensor):
        return x.item()

    @staticmethod
    # viewlint: hot
    def c(x: torch.Tensor):
        return x.item()

    def d(x: torch.Tensor, flag: bool):
        for _ in range(3):  # viewlint: hot
            x.item()
        if flag:  # viewlint: hot
            x.item()
        else:
            x.item()
        x.item()
    """
    assert hot_rows(lint_source, source) == [5, 9, 14, 18, 20]


def test_loops_and_nested_functions_keep_the_outer_context(lint_source):
    source = """
    class M(nn.Module):
        def forward(self, x: torch.Tensor):
            def helper():
                return x.item()
            for _ in range(2):
                while False:
                    x.item()
            return helper()
    """
    assert hot_rows(lint_source, source) == [7, 10]


def test_hot_functions_setting_adds_globs(lint_source):
    source = """
    def decode_step(x: torch.Tensor):
        return x.item()

    def prefill(x: torch.Tensor):
        return x.item()

    class Runner:
        def replay(self, x: torch.Tensor):
            return x.item()
    """
    assert hot_rows(lint_source, source) == []
    assert hot_rows(lint_source, source, hot_functions=("decode_*",)) == [5]
    assert hot_rows(lint_source, source, hot_functions=("decode_*", "Runner.replay")) == [5, 12]


# ---------------------------------------------------------------- cold places
def test_construction_and_loading_are_cold_even_when_configured_broadly(lint_source):
    source = """
    class M(nn.Module):
        def __init__(self, x: torch.Tensor):
            self.n = x.item()
        def load_weights(self, x: torch.Tensor):
            return x.item()
        @classmethod
        def from_pretrained(cls, x: torch.Tensor):
            return x.item()
        def step(self, x: torch.Tensor):
            return x.item()
    """
    assert hot_rows(lint_source, source, hot_functions=("*",)) == [13]


def test_an_explicit_marker_beats_a_cold_name(lint_source):
    source = """
    def load_step(x: torch.Tensor):  # viewlint: hot
        return x.item()
    """
    assert hot_rows(lint_source, source) == [5]


def test_tests_and_main_guard_are_cold_with_everything_inside(lint_source):
    source = """
    def test_model(x: torch.Tensor):
        class Tiny(nn.Module):
            def forward(self, x: torch.Tensor):
                return x.item()
        return x.item()

    class TestModel:
        def forward(self, x: torch.Tensor):
            return x.item()

    if __name__ == "__main__":
        class Script(nn.Module):
            def forward(self, x: torch.Tensor):
                return x.item()
    """
    assert hot_rows(lint_source, source) == []


def test_interval_and_debug_guards_are_cold_but_layer_parity_is_not(lint_source):
    source = """
    class M(nn.Module):
        def forward(self, x: torch.Tensor, step: int, layer_id: int):
            if step % 100 == 0:
                print(x.item())
            else:
                x.item()
            if (step + 1) % self.log_every == 0:
                print(x.item())
            if self.verbose:
                print(x.item())
            if self.training and step % 50 == 0:
                print(x.item())
            if layer_id % 2 == 0:
                x.item()
            return x
    """
    assert hot_rows(lint_source, source) == [9, 17]


def test_raise_and_except_are_cold(lint_source):
    source = """
    class M(nn.Module):
        def forward(self, x: torch.Tensor):
            try:
                y = x + 1
            except RuntimeError:
                print(x.item())
                raise
            if x.dim() > 3:
                raise ValueError(f"{x.max().item()}")
            return y.item()
    """
    assert hot_rows(lint_source, source) == [13]


# ---------------------------------------------------------------- configuration through pyproject.toml and the CLI
def test_hot_functions_in_pyproject_changes_the_cli_result(tmp_path: Path):
    code = "import torch\n\n\ndef decode_step(x: torch.Tensor) -> float:\n    return x.item()\n"
    (tmp_path / "model.py").write_text(code)
    (tmp_path / "pyproject.toml").write_text("[tool.viewlint]\nselect = [\"VL401\"]\n")

    quiet = run_viewlint("--no-cache", "--output-format", "concise", "model.py", cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert "VL401" not in quiet.stdout

    (tmp_path / "pyproject.toml").write_text('[tool.viewlint]\nselect = ["VL401"]\nhot-functions = ["decode_*"]\n')
    loud = run_viewlint("--no-cache", "--output-format", "concise", "model.py", cwd=tmp_path)
    assert loud.returncode == 1, loud.stdout + loud.stderr
    assert "model.py:5:12: VL401" in loud.stdout
    assert "`decode_step`" in loud.stdout


def test_cpu_names_in_pyproject_silence_the_cli(tmp_path: Path):
    code = (
        "import torch\n\n\nclass M(torch.nn.Module):\n"
        "    def forward(self, lens: torch.Tensor) -> list:\n        return lens.tolist()\n"
    )
    (tmp_path / "model.py").write_text(code)
    (tmp_path / "pyproject.toml").write_text('[tool.viewlint]\nselect = ["VL401"]\n')
    assert "VL401" in run_viewlint("--no-cache", "model.py", cwd=tmp_path).stdout
    (tmp_path / "pyproject.toml").write_text('[tool.viewlint]\nselect = ["VL401"]\ncpu-names = ["lens"]\n')
    result = run_viewlint("--no-cache", "model.py", cwd=tmp_path)
    assert result.returncode == 0 and "VL401" not in result.stdout, result.stdout + result.stderr


def test_pipeline_stages_are_orchestration_but_a_module_named_stage_is_a_layer(lint_source):
    source = """
    class DecodingStage(PipelineStage):
        def forward(self, x: torch.Tensor):
            return x.item()

    class ResNetStage(nn.Module):
        def forward(self, x: torch.Tensor):
            return x.item()
    """
    assert hot_rows(lint_source, source) == [10]


def test_data_transforms_are_preparation_but_modules_named_transform_and_transformers_are_layers(lint_source):
    # PyG's `BaseTransform` subclasses run per sample in a data pipeline, on the host.
    source = """
    class LineGraph(BaseTransform):
        def forward(self, x: torch.Tensor):
            return x.item()

    class PredictionHeadTransform(nn.Module):
        def forward(self, x: torch.Tensor):
            return x.item()

    class Transformer2DModel(ModelMixin):
        def forward(self, x: torch.Tensor):
            return x.item()
    """
    assert hot_rows(lint_source, source) == [10, 14]


def test_a_forward_that_hands_its_input_to_numpy_is_a_bridge_to_another_runtime(lint_source):
    # ultralytics' ONNX/TFLite/OpenVINO backends: `forward(self, im)` gives `im.cpu().numpy()` to the other runtime,
    # once per batch; a vision tower that reads its grid sizes into NumPy still runs on its pixels per layer.
    source = """
    class ONNXBackend:
        def forward(self, im: torch.Tensor, scale: torch.Tensor):
            outputs = self.session.run(None, {"images": im.permute(0, 2, 3, 1).cpu().numpy()})
            return outputs, scale.item()

    class VisionTower(nn.Module):
        def forward(self, x: torch.Tensor, grid_thw: torch.Tensor):
            sizes = grid_thw.cpu().numpy()
            return sizes, x.item()
    """
    assert hot_rows(lint_source, source) == [12]


def test_an_environment_switch_for_checks_guards_cold_code(lint_source):
    source = (
        "import os\n"
        "import torch\n"
        "from torch import nn\n"
        "from . import envs\n"
        "_validate_indices = envs.X_VALIDATE_STATE_INDICES.get()\n"
        "_verify_real = os.environ.get('X_FUSION_VERIFY_REAL_TENSORS', '0') == '1'\n"
        "_use_fused = os.environ.get('X_USE_FUSED') == '1'\n"
        "_check_names = ('verify', 'validate')\n"
        "class M(nn.Module):\n"
        "    def forward(self, x, idx):\n"
        "        if _validate_indices:\n"
        "            assert int(idx.max()) < 10\n"
        "        verify = _verify_real and self.layer_id not in self.seen\n"
        "        if verify:\n"
        "            assert not torch.any(idx < 0).item()\n"
        "        if _use_fused:\n"
        "            n = idx.max().item()\n"
        "        if _check_names:\n"
        "            m = idx.min().item()\n"
        "        return x\n"
    )
    # A switch that enables a feature (`_use_fused`) and a tuple that reads no environment stay hot.
    assert [(row, code) for row, code, _ in lint_source(source, select=("VL401",))] == [(17, "VL401"), (19, "VL401")]


def test_a_helper_called_only_under_an_environment_check_switch_is_cold(lint_source):
    source = (
        "import os\n"
        "import torch\n"
        "from torch import nn\n"
        "_VALIDATE = os.environ.get('X_VALIDATE_INDICES') == '1'\n"
        "def _inspect_indices(idx: torch.Tensor) -> None:\n"
        "    assert int(idx.max()) < 10\n"
        "def _count(idx: torch.Tensor) -> int:\n"
        "    return int(idx.sum())\n"
        "class M(nn.Module):\n"
        "    def forward(self, x: torch.Tensor, idx: torch.Tensor):\n"
        "        check = _VALIDATE and self.training\n"
        "        if check:\n"
        "            _inspect_indices(idx)\n"
        "        n = _count(idx)\n"
        "        return x\n"
    )
    assert [(row, code) for row, code, _ in lint_source(source, select=("VL401",))] == [(8, "VL401")]


def test_a_guard_that_calls_the_modules_own_interval_predicate_is_cold():
    # `is_gradient_accumulation_boundary()` returns an interval test: the sync it guards runs once per optimizer
    # step, for the log; `has_tokens()` returns a test of something else, so the sync it guards stays hot. The
    # helper called under the interval guard is not hot for being called there either.
    source = (
        "import torch\n"
        "class Engine:\n"
        "    def __init__(self, model, gas):\n"
        "        self.model, self.gas, self.micro_steps, self.tokens = model, gas, 0, 0\n"
        "    def is_gradient_accumulation_boundary(self):\n"
        "        \"\"\"Whether this micro-step ends an accumulation.\"\"\"\n"
        "        return (self.micro_steps + 1) % self.gas == 0\n"
        "    def has_tokens(self):\n"
        "        return self.tokens > 0\n"
        "    def _report(self, total: torch.Tensor):\n"
        "        return total.item()\n"
        "    def backward(self, loss: torch.Tensor):\n"
        "        mean_loss = loss.mean().detach()\n"
        "        if self.is_gradient_accumulation_boundary():\n"
        "            print(mean_loss.item())\n"
        "            self._report(mean_loss)\n"
        "        if self.has_tokens():\n"
        "            print(mean_loss.item())\n"
        "        loss.backward()\n"
        "        self.micro_steps += 1\n"
    )
    assert [(row, code) for row, code in lint_both_paths(source) if code == "VL401"] == [(18, "VL401")]


def test_work_on_a_cache_miss_runs_once_per_key(lint_source):
    source = (
        "import torch\n"
        "from torch import nn\n"
        "class M(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.cached_pos = {}\n"
        "    def _positions(self, mask: torch.Tensor) -> list:\n"
        "        return mask.sum(-1).tolist()\n"
        "    def forward(self, x: torch.Tensor, mask: torch.Tensor, key: str):\n"
        "        if key not in self.cached_pos or key not in self.cached_len:\n"
        "            self.cached_pos[key] = self._positions(mask)\n"
        "            n = int(mask.sum())\n"
        "        if key not in self.seen:\n"
        "            m = int(mask.max())\n"
        "        return x\n"
    )
    # The second test fills nothing: its body runs on every call.
    assert [(row, code) for row, code, _ in lint_source(source, select=("VL401",))] == [(14, "VL401")]


def test_an_epoch_loop_that_steps_a_learning_rate_schedule_is_not_a_step_loop(lint_source):
    # ultralytics' `_do_train`: the batch loop steps the optimizer; the epoch loop around it steps the learning-rate
    # schedule and validates once per epoch. A diffusion scheduler's `step(noise_pred, t, latents)` is the step.
    source = """
    def train(model, loader, optimizer, scheduler, lr_scheduler, score: torch.Tensor):
        for epoch in range(10):
            for batch in loader:
                loss = model(batch)
                loss.backward()
                optimizer.step()
                total = score.item()
            scheduler.step()
            lr_scheduler.step(epoch, score)
            best = score.item()

    def denoise(unet_fn, scheduler, latents, steps, x: torch.Tensor):
        for t in steps:
            latents = scheduler.step(unet_fn(latents, t), t, latents)
            peak = x.item()
    """
    assert hot_rows(lint_source, source) == [10, 18]


def test_a_helper_named_for_handling_a_model_does_not_run_one(lint_source):
    # `unwrap_model(self.model)` in an epoch loop returns the model; `text_model(ids)` runs one.
    source = """
    def epochs(model, ids, x: torch.Tensor):
        for epoch in range(10):
            inner = unwrap_model(model)
            v = x.item()

    def encode(text_model, batches, x: torch.Tensor):
        for ids in batches:
            out = text_model(ids)
            v = x.item()
    """
    assert hot_rows(lint_source, source) == [12]


def test_a_method_call_reaches_the_one_class_defining_it_only_when_the_receiver_can_be_that_class(lint_source):
    # deepspeed's `HybridEngineRollout._continuous_prefill_cache(self, module, ...)` calls `module.generate(...)`,
    # a Hugging Face model's, not the rollout's own `generate`; `rollout.generate(...)` and an instance the caller
    # builds (`r = Rollout()`) are the rollout's.
    template = """
    class Rollout:
        def generate(self, x: torch.Tensor):
            return x.item()

    class Model(nn.Module):
        def forward(self, module, x: torch.Tensor):
            return {call}
    """
    assert hot_rows(lint_source, template.format(call="module.generate(x)")) == []
    assert hot_rows(lint_source, template.format(call="module.rollout.generate(x)")) == [6]
    source = template.replace("            return {call}", "            r = Rollout()\n            return r.generate(x)")
    assert hot_rows(lint_source, source) == [6]


# ---------------------------------------------------------------- scripts and notebooks: step loops at the top level
TOP_LEVEL_LOOP = """
model = torch.nn.Linear(4, 1).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [torch.randn(8, 4) for _ in range(3)]

for batch in loader:
    loss = model(batch.cuda()).sum()
    loss.backward()
    opt.step()
    print(loss.item())
    if torch.isnan(loss):
        break
"""


def _codes(lint_source, source: str, prefilter: bool) -> list[tuple[int, str]]:
    source = "import torch\n\n" + textwrap.dedent(source).lstrip("\n")
    return [(row, code) for row, code, _ in lint_source(source, select=("VL4",), prefilter=prefilter)]


def test_a_training_loop_at_the_top_of_a_script_is_a_step_loop(lint_source):
    inside = "def main():\n" + textwrap.indent(textwrap.dedent(TOP_LEVEL_LOOP).lstrip("\n"), "    ")
    for prefilter in (True, False):
        top = _codes(lint_source, TOP_LEVEL_LOOP, prefilter)
        assert top == [(11, "VL401"), (12, "VL403")]
        # The same loop inside a function gets the same findings, one row lower (the `def` line).
        assert [(row - 1, code) for row, code in _codes(lint_source, inside, prefilter)] == top


def test_a_top_level_loop_that_runs_no_step_and_a_script_block_stay_cold(lint_source):
    plain = """
    values = [torch.randn(3).cuda() for _ in range(3)]
    for v in values:
        print(v.sum().item())
    """
    guarded = "if __name__ == \"__main__\":\n" + textwrap.indent(textwrap.dedent(TOP_LEVEL_LOOP).lstrip("\n"), "    ")
    for prefilter in (True, False):
        assert _codes(lint_source, plain, prefilter) == []
        assert _codes(lint_source, guarded, prefilter) == []  # a script's demo block: silent, as everywhere


def test_a_training_loop_in_a_notebook_cell_is_a_step_loop(tmp_path: Path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    setup, loop = textwrap.dedent(TOP_LEVEL_LOOP).lstrip("\n").split("\n\n", 1)
    notebook = new_notebook(cells=[new_code_cell("import torch\n" + setup), new_code_cell(loop)])
    path = tmp_path / "train.ipynb"
    nbformat.write(notebook, str(path))
    result = run_viewlint("--isolated", "--no-cache", "--select", "VL4", "--output-format", "json", str(path))
    import json

    found = [(d["cell"], d["location"]["row"], d["code"]) for d in json.loads(result.stdout)]
    assert found == [(2, 5, "VL401"), (2, 6, "VL403")], result.stdout


def test_a_branch_every_hot_caller_switches_off_is_cold():
    # `self.merge()` from `forward` leaves `safe_merge` at its default `False`: the check it guards never runs on
    # the hot path. Where a hot caller passes `safe_merge=True`, or the callee rebinds it, the branch stays hot.
    source = textwrap.dedent("""
        import torch
        from torch import nn

        class Adapter(nn.Module):
            def merge(self, safe_merge: bool = False) -> None:
                merged = self.weight.detach().clone() + 1.0
                if safe_merge:
                    if not torch.isfinite(merged).all():
                        raise ValueError("NaNs detected")
                self.weight.data = merged

            def merge_checked(self, safe_merge: bool = False) -> None:
                if safe_merge:
                    if not torch.isfinite(self.weight).all():
                        raise ValueError("NaNs detected")

            def merge_rebound(self, safe_merge: bool = False) -> None:
                safe_merge = safe_merge or self.always_check
                if safe_merge:
                    if not torch.isfinite(self.weight).all():
                        raise ValueError("NaNs detected")

            def merge_through_class(self, fast: bool = True, checked: bool = True) -> None:
                if checked:
                    if not torch.isfinite(self.weight).all():
                        raise ValueError("NaNs detected")

            def merge_switched_off(self, fast: bool = True, checked: bool = True) -> None:
                if checked:
                    if not torch.isfinite(self.weight).all():
                        raise ValueError("NaNs detected")

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                self.merge()
                self.merge(False)
                self.merge_checked(safe_merge=True)
                self.merge_rebound()
                Adapter.merge_through_class(self, False, True)  # `checked` is True: the first argument is `self`
                Adapter.merge_switched_off(self, True, False)  # `checked` is False here, as in every hot call
                return x @ self.weight
    """)
    assert lint_both_paths(source) == [(15, "VL403"), (21, "VL403"), (26, "VL403")]
