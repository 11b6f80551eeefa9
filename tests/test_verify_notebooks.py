"""`check --verify` on a Jupyter notebook: its code cells run as one script, and each finding,
reported in its cell, gets the verdict measured at that cell's line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import OPT_IN_RULES, run_viewlint

pytest.importorskip("torch")
nbformat = pytest.importorskip("nbformat")

CELLS = [
    ("markdown", "# Caching rows\nA cache that keeps views, and a write that is lost."),
    ("code", "import torch\n%matplotlib inline\n\n_CACHE = {}"),
    ("code", "def keep(x: torch.Tensor) -> None:\n    _CACHE['col'] = x[:, 0]\n\n\nkeep(torch.randn(64, 32))"),
    ("markdown", "Now the write:"),
    ("code", "buf = torch.zeros(8, 4)\nbuf[[3]].fill_(2.0)\nprint(buf.sum())"),
]


def _notebook(path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(text) if kind == "code" else nbformat.v4.new_markdown_cell(text)
                      for kind, text in CELLS]
    nbformat.write(notebook, str(path))


def test_check_verify_confirms_the_findings_of_a_notebook(tmp_path: Path) -> None:
    path = tmp_path / "analysis.ipynb"
    _notebook(path)
    before = path.read_bytes()
    completed = run_viewlint("check", "--isolated", "--extend-select", ",".join(OPT_IN_RULES), "--no-cache", "--verify", "--device", "cpu", "--output-format",
                             "json", path.name, cwd=tmp_path)
    assert completed.returncode == 1, completed.stderr
    found = {(f["cell"], f["location"]["row"], f["code"]): f["verdict"] for f in json.loads(completed.stdout)}
    assert set(found) == {(3, 2, "VL101"), (5, 2, "VL201")}
    retained = found[(3, 2, "VL101")]
    assert retained["status"] == "confirmed", retained
    assert retained["evidence"].startswith("pins 8.00 KiB for a 0.25 KiB payload (32.0x)")
    lost = found[(5, 2, "VL201")]
    assert lost == {"status": "confirmed", "evidence": "write lost: result does not share storage with 'buf'",
                    "device": "cpu", "hits": 1}
    assert path.read_bytes() == before
