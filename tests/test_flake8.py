"""The flake8 plugin: `flake8 --select VL` reports exactly what `viewlint` reports, same rows and columns."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, run_viewlint

pytest.importorskip("flake8")

FIXTURE = FIXTURES / "VL201" / "positive_inplace_on_gather.py"
FLAKE8_LINE = re.compile(r"^(?P<path>.+?):(?P<row>\d+):(?P<col>\d+): (?P<code>VL\d{3}) (?P<message>.*)$")


def flake8(*args: str, cwd: Path = ROOT, input: str | None = None) -> subprocess.CompletedProcess:
    """Run the real flake8 command line (with whatever plugins the environment registers)."""
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *args],
        cwd=cwd, input=input, capture_output=True, text=True, timeout=300,
    )


def flake8_findings(output: str) -> list[tuple[int, int, str, str]]:
    found = []
    for line in output.splitlines():
        match = FLAKE8_LINE.match(line)
        assert match, f"unexpected flake8 output line: {line!r}"
        found.append((int(match["row"]), int(match["col"]), match["code"], match["message"]))
    return found


def viewlint_findings(*args: str, cwd: Path = ROOT) -> list[tuple[int, int, str, str]]:
    result = run_viewlint("--no-cache", "--output-format", "json", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return [(d["location"]["row"], d["location"]["column"], d["code"], d["message"]) for d in json.loads(result.stdout)]


def test_plugin_is_registered_with_flake8() -> None:
    result = flake8("--version")
    assert result.returncode == 0, result.stderr
    assert "viewlint" in result.stdout


def test_flake8_reports_the_same_rows_columns_and_codes_as_viewlint() -> None:
    expected = viewlint_findings(str(FIXTURE))
    assert expected, "the fixture must have findings for this test to mean anything"
    result = flake8("--select", "VL", str(FIXTURE))
    assert result.returncode == 1, result.stderr
    assert flake8_findings(result.stdout) == expected


def test_flake8_reads_stdin_and_applies_the_config_of_the_display_name(tmp_path: Path) -> None:
    """`flake8 -` lints the text flake8 read; the display name picks the nearest [tool.viewlint]."""
    (tmp_path / "pyproject.toml").write_text('[tool.viewlint]\nper-file-ignores = { "legacy/*" = ["VL201"] }\n')
    source = FIXTURE.read_text()
    result = flake8("--select", "VL", "--stdin-display-name", "model.py", "-", cwd=tmp_path, input=source)
    assert result.returncode == 1, result.stderr
    assert [(row, col, code) for row, col, code, _ in flake8_findings(result.stdout)] == [
        (row, col, code) for row, col, code, _ in viewlint_findings(str(FIXTURE))
    ]
    ignored = flake8("--select", "VL", "--stdin-display-name", "legacy/model.py", "-", cwd=tmp_path, input=source)
    assert ignored.returncode == 0, ignored.stdout + ignored.stderr
    assert ignored.stdout == ""


def test_flake8_noqa_and_clean_files(tmp_path: Path) -> None:
    clean = FIXTURES / "VL201" / "negative_basic_index_writes_through.py"
    assert flake8("--select", "VL", str(clean)).stdout == ""
    suppressed = tmp_path / "suppressed.py"
    suppressed.write_text(
        "import torch\n\n\ndef f(buf: torch.Tensor, rows: list[int]) -> None:\n"
        "    buf[rows].zero_()  # noqa: VL201\n"
    )
    result = flake8("--select", "VL", str(suppressed), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_plugin_does_not_import_torch() -> None:
    script = (
        "import sys, ast\n"
        "from viewlint.flake8_plugin import ViewlintChecker\n"
        f"path = {str(FIXTURE)!r}\n"
        "lines = open(path).read().splitlines(keepends=True)\n"
        "found = list(ViewlintChecker(ast.parse(''.join(lines)), path, lines).run())\n"
        "assert found, found\n"
        "assert all(col >= 0 for _, col, _, _ in found)\n"
        "print('torch' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_flake8_skips_what_viewlint_skips_extend_exclude_and_gitignore(tmp_path: Path) -> None:
    """flake8 hands the plugin every .py file it walks; the plugin reports on the same files as
    `viewlint .`: not those under viewlint's `extend-exclude`, nor those `.gitignore` ignores."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "pyproject.toml").write_text('[tool.viewlint]\nextend-exclude = ["legacy"]\n')
    (tmp_path / ".gitignore").write_text("generated/\n")
    source = FIXTURE.read_text()
    for folder in ("src", "legacy", "generated"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "model.py").write_text(source)
    viewlint_paths = {d["filename"] for d in json.loads(run_viewlint("--no-cache", "--output-format", "json", ".",
                                                                     cwd=tmp_path).stdout)}
    assert viewlint_paths == {"src/model.py"}
    result = flake8("--select", "VL", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    flagged = {line.split(":", 1)[0] for line in result.stdout.splitlines()}
    assert flagged == {"./src/model.py"}
    # Without the settings, flake8 reports all three, as `viewlint --no-respect-gitignore` would lint them.
    (tmp_path / "pyproject.toml").write_text('[tool.viewlint]\nrespect-gitignore = false\n')
    every = flake8("--select", "VL", ".", cwd=tmp_path)
    assert {line.split(":", 1)[0] for line in every.stdout.splitlines()} == {
        "./src/model.py", "./legacy/model.py", "./generated/model.py"}
