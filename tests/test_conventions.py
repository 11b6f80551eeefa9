"""Conventions Ruff users look for: --show-files, --show-settings, `rule VL000`, --statistics
markers, reserved codes in --ignore, mistyped commands, annotation levels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import OPT_IN_CONFIG, run_viewlint

from viewlint.cli import run_check

LOST_WRITE = (
    "import torch\n"
    "\n"
    "\n"
    "def write_rows(buf: torch.Tensor, rows: list[int], value: torch.Tensor) -> None:\n"
    "    buf[rows].copy_(value)\n"
)
# VL101's fix (`.clone()`) is unsafe: it changes what the cache holds.
CACHED_VIEW = (
    "import torch\n"
    "\n"
    "\n"
    "class Store:\n"
    "    def __init__(self) -> None:\n"
    "        self.cache = {}\n"
    "\n"
    "    def put(self, k: int, x: torch.Tensor) -> None:\n"
    "        self.cache[k] = torch.split(x, 2)[0]\n"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(OPT_IN_CONFIG + 'extend-exclude = ["legacy"]\nhot-functions = ["step"]\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(LOST_WRITE)
    (tmp_path / "src" / "notes.ipynb").write_text(
        json.dumps({"cells": [{"cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": [],
                               "execution_count": None}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (tmp_path / "src" / "README.txt").write_text("not python")
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "old.py").write_text(LOST_WRITE)
    return tmp_path


def test_show_files_lists_what_would_be_linted(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_check((".",), show_files=True, no_cache=True)
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines() == ["src/model.py", "src/notes.ipynb"]  # not legacy/ (excluded), not README.txt
    assert not (project / ".viewlint_cache").exists()  # nothing was linted


def test_show_settings_names_the_file_and_its_configuration(project: Path) -> None:
    result = run_viewlint("--show-settings", "src", cwd=project)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Resolved settings for: 'src/model.py'"
    assert lines[1] == f"Settings path: {str(project / 'pyproject.toml')!r}"
    assert 'extend-exclude = ["legacy"]' in lines
    assert 'hot-functions = ["step"]' in lines
    assert 'include = ["*.py", "*.pyi", "*.ipynb"]' in lines
    assert any(line.startswith("enabled-rules = [") and '"VL201"' in line for line in lines)


@pytest.mark.parametrize(("code", "name"), [("VL000", "syntax-error"), ("VL001", "io-error"), ("VL002", "internal-error")])
def test_rule_documents_reserved_codes(code: str, name: str) -> None:
    result = run_viewlint("rule", code.lower())
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"# {name} ({code})\n\n## What it does\n")
    assert "## Why is this bad?" in result.stdout
    as_json = json.loads(run_viewlint("rule", code, "--output-format", "json").stdout)
    assert (as_json["code"], as_json["name"], as_json["fix"]) == (code, name, "none")
    assert as_json["explanation"] == result.stdout


def test_statistics_marks_only_fixes_that_fix_would_apply(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "src" / "store.py").write_text(CACHED_VIEW)
    run_check(("src",), statistics=True, no_cache=True, quiet=True)
    lines = capsys.readouterr().out.splitlines()
    # Both fixes here are unsafe (VL201's makes the lost write land: a change of behaviour).
    assert lines == ["    1\tVL101\tview-stored-in-long-lived-container", "    1\tVL201\tinplace-on-advanced-index"]
    run_check(("src",), statistics=True, no_cache=True, quiet=True, unsafe_fixes=True)
    assert capsys.readouterr().out.splitlines() == ["    1\tVL101\t[*] view-stored-in-long-lived-container",
                                                    "    1\tVL201\t[*] inplace-on-advanced-index"]
    run_check(("src",), statistics=True, no_cache=True, quiet=True, output_format="json")
    fixable = {row["code"]: row["fixable"] for row in json.loads(capsys.readouterr().out)}
    assert fixable == {"VL101": False, "VL201": False}


def test_ignoring_a_reserved_code_warns_and_still_reports(project: Path) -> None:
    (project / "broken.py").write_text("def f(:\n")
    result = run_viewlint("--no-cache", "--ignore", "VL000,VL201", "broken.py", cwd=project)
    assert result.returncode == 1
    assert "viewlint: warning: --ignore: VL000 cannot be ignored" in result.stderr
    assert result.stdout.startswith("broken.py:1:7: VL000 syntax error")


def test_mistyped_command_is_an_unknown_command(project: Path) -> None:
    result = run_viewlint("chek", "src", cwd=project)
    assert result.returncode == 2
    assert "viewlint: error: unknown command 'chek'; did you mean 'check'?" in result.stderr
    assert "No such file" not in result.stderr
    # A path of that name is linted, as `viewlint PATH` always did.
    (project / "chek").mkdir()
    (project / "chek" / "model.py").write_text(LOST_WRITE)
    linted = run_viewlint("--no-cache", "chek", cwd=project)
    assert linted.returncode == 1 and linted.stdout.startswith("chek/model.py:5:5: VL201")
    # A word like no command is still a missing path.
    assert "srcx: No such file or directory" in run_viewlint("srcx", cwd=project).stderr


def test_github_annotations_errors_for_input_problems_warnings_for_rules(project: Path) -> None:
    (project / "src" / "broken.ipynb").write_text("{")
    result = run_viewlint("--no-cache", "--output-format", "github", "src", cwd=project)
    lines = result.stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == ["::error", "::warning"]
    assert lines[0].startswith("::error file=src/broken.ipynb,line=1,col=1,")
    assert "VL001 invalid notebook: not valid JSON" in lines[0]
