"""VL301's safe fix must never change what a program does: `cat`/`stack`/advanced indexing keep a
transposed or channels_last input's layout, so `.contiguous()` on their results is not always a
no-op (issue 14, item 2). The program below runs before and after `--fix` on real torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_viewlint

torch = pytest.importorskip("torch")

PROGRAM = '''
import torch


def converted_then_cat():
    x = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
    return torch.cat([x, x]).contiguous().view(-1)


def converted_in_two_steps_then_stack():
    x = torch.randn(2, 3, 4, 5)
    x = x.to(memory_format=torch.channels_last)
    return torch.stack([x, x]).contiguous().view(-1)


def transposed_then_gathered():
    x = torch.randn(4, 3, 2)
    idx = torch.tensor([0, 1])
    return x.transpose(0, 2)[idx].contiguous().view(-1)


def built_channels_last_then_vstack():
    x = torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).fill_(1.0)
    return torch.vstack([x, x]).contiguous().view(-1)


def channels_last_contiguous_then_ops():
    x = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    y = torch.concat([x, x]).contiguous().view(-1)
    z = (x + 1).contiguous().view(-1)
    w = x[torch.tensor([0])].contiguous().view(-1)
    return torch.cat([y, z, w])


def permuted_then_cat():
    x = torch.randn(2, 3, 4, 5).permute(0, 2, 3, 1)
    return torch.cat([x, x]).contiguous().view(-1)


def helper_results_and_padding_then_cat():
    layer = torch.nn.Conv2d(3, 3, 1).to(memory_format=torch.channels_last)
    weights = [getattr(m, "weight") for m in (layer, layer)]  # nothing known of their layout
    weights.append(weights[0].new_zeros(weights[0].shape))  # one known row-major item does not make all known
    return torch.cat(weights).contiguous().view(-1)


def row_major_inputs():
    a = torch.ones(3, 4)
    b = torch.zeros(3, 4)
    return torch.cat([a, b]).contiguous().view(-1)


torch.manual_seed(0)
results = [f() for f in (converted_then_cat, converted_in_two_steps_then_stack, transposed_then_gathered,
                         built_channels_last_then_vstack, channels_last_contiguous_then_ops, permuted_then_cat,
                         helper_results_and_padding_then_cat, row_major_inputs)]
print(repr([round(float(r.detach().sum()), 4) for r in results]))
'''


def run(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)


def test_strided_inputs_are_not_flagged_and_the_fixed_program_behaves_the_same(tmp_path: Path) -> None:
    path = tmp_path / "layouts.py"
    path.write_text(PROGRAM)
    before = run(path)
    assert before.returncode == 0, before.stderr

    found = run_viewlint("check", "--no-cache", "--select", "VL301", "--output-format", "concise", "layouts.py", cwd=tmp_path)
    flagged_rows = sorted(int(line.split(":")[1]) for line in found.stdout.splitlines() if ": VL301" in line)
    # Only the row-major `cat` is provably contiguous.
    assert flagged_rows == [PROGRAM.splitlines().index("    return torch.cat([a, b]).contiguous().view(-1)") + 1]

    fixed = run_viewlint("check", "--no-cache", "--select", "VL301", "--fix", "--unsafe-fixes", "layouts.py", cwd=tmp_path)
    assert "Traceback" not in fixed.stderr
    after = run(path)
    assert after.returncode == 0, after.stderr
    assert after.stdout == before.stdout
    assert path.read_text().count(".contiguous()") == PROGRAM.count(".contiguous()") - 1
