"""`viewlint beliefs`: what the analysis believes of each binding, as JSON lines, and the same on hover."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from viewlint.beliefs import beliefs_of_text, hover_text, package_relative

SOURCE = textwrap.dedent("""\
    import torch


    class Attention(torch.nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.qkv = torch.nn.Linear(dim, 3 * dim)
            self.scale = dim ** -0.5

        def forward(self, x):
            qkv = self.qkv(x)
            q, k, v = qkv.unbind(-1)
            rows = [r for r in q]
            for head in k.split(2):
                pass
            n = q.shape[0]
            return q.contiguous() * self.scale
""")


def records(source: str = SOURCE) -> dict[tuple[int, str], dict]:
    return {(r["line"], r["target"]): r for r in beliefs_of_text(source, "model.py")}


def test_each_binding_gets_what_the_analysis_believes():
    found = records()
    assert found[(7, "self.qkv")]["tensor"] is False  # a module, not a tensor
    # A linear layer's output owns its storage; on an input of unknown rank it may be a view of its own product.
    assert (found[(11, "qkv")]["tensor"], found[(11, "qkv")]["view"]) == (True, None)
    q = found[(12, "q")]
    assert (q["tensor"], q["view"], q["base"]) == (True, True, "qkv")
    assert found[(13, "rows")]["tensor"] is False  # a list of rows
    head = found[(14, "head")]
    assert (head["tensor"], head["view"], head["base"]) == (True, True, "qkv")  # the storage `k` views
    assert found[(16, "n")]["tensor"] is False  # a shape entry: an int
    assert set(found[(12, "k")]) == {"path", "line", "target", "tensor", "view", "base", "device", "contiguous", "rank", "why"}


def test_unknown_stays_null_and_module_level_code_is_not_recorded():
    found = records("import torch\nx = torch.zeros(3)\n\ndef f(a):\n    b = a\n    return b\n")
    assert list(found) == [(5, "b")]
    assert found[(5, "b")]["tensor"] is None and found[(5, "b")]["view"] is None


def test_the_cli_prints_json_lines_with_paths_relative_to_the_top_package(tmp_path: Path):
    package = tmp_path / "pkg" / "models"
    package.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "attn.py").write_text(SOURCE, encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "viewlint", "beliefs", str(tmp_path / "pkg")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert {line["path"] for line in lines} == {"pkg/models/attn.py"}
    assert any(line["target"] == "q" and line["view"] is True for line in lines)
    assert package_relative(str(package / "attn.py")) == "pkg/models/attn.py"


def test_a_missing_path_is_an_error_not_a_traceback(tmp_path: Path):
    result = subprocess.run([sys.executable, "-m", "viewlint", "beliefs", str(tmp_path / "nope.py")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr


@pytest.mark.parametrize("row, word, expected", [
    (12, "q", "`q`: tensor, view of qkv (via .unbind()), device: unknown, contiguous: unknown, returned by `Linear` module"),
    (11, "qkv", "`qkv`: tensor, owns its storage, device: unknown, contiguous: yes, returned by `Linear` module"),
    (7, "qkv", "`self.qkv`: not a tensor"),
    (17, "scale", None),  # not a binding on this row
])
def test_hover_shows_the_belief_of_the_binding_under_the_cursor(row, word, expected):
    line = SOURCE.splitlines()[row - 1]
    assert hover_text(SOURCE, row, line.index(word) + 1) == expected


MIN_MAX = """
import torch


def f(a: torch.Tensor, b: torch.Tensor):
    c = torch.min(a, b)
    d = a.max(1)
    e = a.max(b)
    g = torch.max(a, 1)
    h = a.sum(1)
    k = a.sum()
    return c, d, e, g, h, k
"""


def test_min_and_max_of_two_tensors_are_elementwise_and_of_a_dimension_are_pairs():
    found = records(MIN_MAX)
    assert found[(6, "c")]["tensor"] is True  # torch.min(a, b): the elementwise minimum, a tensor
    assert found[(8, "e")]["tensor"] is True  # a.max(b)
    assert found[(7, "d")]["tensor"] is False  # a.max(1): (values, indices)
    assert found[(9, "g")]["tensor"] is False  # torch.max(a, 1)
    assert found[(10, "h")]["tensor"] is True


def test_a_value_only_known_to_be_on_the_host_keeps_its_device_when_its_use_shows_it_is_a_tensor():
    source = """
def build(meta, n: int):
    lens_cpu = meta.seq_lens.cpu() if n > 0 else None
    query_lens_cpu = meta.query_start_loc_cpu[1:] - meta.query_start_loc_cpu[:-1]
    kv_lens = lens_cpu[:n] - query_lens_cpu[:n]
    starts = kv_lens.unsqueeze(0)
    return starts
"""
    found = records(source)
    assert found[(5, "kv_lens")]["tensor"] is True
    assert found[(5, "kv_lens")]["device"] == "cpu"


def test_a_host_tensor_of_one_or_more_dimensions_stays_on_the_host_through_unsqueeze_and_expand():
    source = """
import torch


def chunks(n: int, m, k):
    starts = torch.arange(n, dtype=torch.int32).unsqueeze(1).expand(-1, m) * k
    return starts
"""
    assert records(source)[(6, "starts")]["device"] == "cpu"  # `k`, whatever it is, cannot move it


def test_diff_and_negation_of_host_metadata_stay_on_the_host():
    source = """
import torch


def schedule(query_start_loc_cpu: torch.Tensor, block: int):
    nums = (-(-query_start_loc_cpu.diff() // block)).to(torch.int64)
    return nums
"""
    found = records(source)[(6, "nums")]
    assert (found["tensor"], found["device"]) == (True, "cpu")


def test_a_tuple_annotation_gives_each_position_its_own_value():
    source = """
import torch


def split(x: torch.Tensor) -> tuple[torch.Tensor, list[int]]:
    return x, [1]


def run(x: torch.Tensor):
    hidden, lengths = split(x)
    return hidden, lengths
"""
    found = records(source)
    assert found[(10, "hidden")]["tensor"] is True
    assert found[(10, "lengths")]["tensor"] is False  # `list[int]`, not the first position's tensor


def test_what_a_traced_or_scripted_branch_binds_does_not_reach_an_eager_run():
    source = """
import torch


def resize(image: torch.Tensor):
    if torch.jit.is_scripting():
        shape = torch.tensor(image.shape[-2:])
    else:
        shape = image.shape[-2:]
    return shape
"""
    assert records(source)[(9, "shape")]["tensor"] is False


OPTIONAL = """
import torch


def pool(x: torch.Tensor, flag: bool):
    pooled = x[:, 0] if flag else None
    return pooled
"""


def test_a_tensor_on_some_paths_only_is_reported_unknown_and_its_hover_says_why():
    from viewlint.beliefs import beliefs_of_text

    found = {(r["line"], r["target"]): r for r in beliefs_of_text(OPTIONAL, "m.py")}
    assert found[(6, "pooled")]["tensor"] is None
    line = OPTIONAL.splitlines()[5]
    assert hover_text(OPTIONAL, 6, line.index("pooled") + 1) == \
        "`pooled`: a tensor on some paths only (`None`, a number or something unknown on others)"
