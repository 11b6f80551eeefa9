"""Output order never depends on hashing: findings that share a path, row, column and code come
out in the same order under any PYTHONHASHSEED (issue 14, item 14)."""

from __future__ import annotations

from pathlib import Path

from conftest import run_viewlint

# Every `.contiguous()` of this chain starts at the same row and column, with the same code.
SOURCE = "import torch\nx = torch.zeros(3)\ny = x" + ".contiguous()" * 12 + "\nz = x.contiguous().contiguous()\n"


def test_order_is_the_same_under_any_hash_seed(tmp_path: Path) -> None:
    (tmp_path / "chain.py").write_text(SOURCE)
    for output_format in ("concise", "json"):
        outputs = set()
        for seed in ("0", "1", "2", "3", "random"):
            result = run_viewlint("check", "--no-cache", "--select", "VL301", "--output-format", output_format, "chain.py",
                                  cwd=tmp_path, env={"PYTHONHASHSEED": seed})
            assert result.returncode == 1, result.stderr
            outputs.add(result.stdout)
        assert len(outputs) == 1
    concise = run_viewlint("check", "--no-cache", "--select", "VL301", "--output-format", "concise", "chain.py", cwd=tmp_path)
    rows = [line for line in concise.stdout.splitlines() if line.startswith("chain.py:3:5: VL301")]
    assert len(rows) == 12
    # Ties are broken by where the finding ends: the innermost call first.
    assert rows[0].startswith("chain.py:3:5: VL301 [*] `x` is already contiguous")
