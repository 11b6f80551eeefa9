"""Shared helpers for the tests: run viewlint in-process or as a subprocess, and read fixtures."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9 ,]+)")


def fixture_files() -> list[Path]:
    return sorted(FIXTURES.glob("VL*/*.py"))


def expected_findings(path: Path) -> set[tuple[int, str]]:
    """(row, code) for every `# expect: CODE[, CODE]` marker in a fixture."""
    found = set()
    for row, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            for code in match.group(1).replace(",", " ").split():
                found.add((row, code))
    return found


def as_from_a_terminal() -> None:
    """A `preexec_fn` for a viewlint the tests stop with SIGINT: a shell starts background jobs with SIGINT
    ignored (a suite run as `pytest &`, or by a runner that does), and Python then keeps ignoring it; give
    viewlint the default disposition an interactive command gets."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_viewlint(*args: str, cwd: Path | None = None, input: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the real `viewlint` command line in a subprocess."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("VIEWLINT_OUTPUT_FORMAT", None)
    return subprocess.run(
        [sys.executable, "-m", "viewlint", *args],
        cwd=cwd or ROOT,
        input=input,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=300,
    )


@pytest.fixture
def lint_source():
    """Lint a source string with every rule enabled; returns [(row, code, message)]."""
    from viewlint.engine import lint_text
    from viewlint.settings import Settings

    def lint(source: str, select: tuple[str, ...] = ("ALL",), **settings) -> list[tuple[int, str, str]]:
        diagnostics = lint_text(source, "snippet.py", Settings(select=select, **settings))
        return [(d.start.row, d.code, d.message) for d in diagnostics]

    return lint


# VL101, VL102, VL104 and VL203 are off by default (issue 27): tests whose scenario is one of their findings
# turn them on, as a user who wants them does.
OPT_IN_RULES = ("VL101", "VL102", "VL104", "VL203", "VL401")
OPT_IN_CONFIG = "[tool.viewlint]\nextend-select = [" + ", ".join(f'"{code}"' for code in OPT_IN_RULES) + "]\n"


def verify_script(directory: Path, name: str, source: str, code: str, device: str = "cpu") -> tuple[list[dict], subprocess.CompletedProcess]:
    """Write `source` as `directory/name` and `check --verify` it for `code` alone: its findings (JSON), and the run."""
    script = directory / name
    script.write_text(source, encoding="utf-8")
    completed = run_viewlint("check", "--isolated", "--no-cache", "--select", code, "--verify", "--device", device,
                             "--output-format", "json", str(script))
    return json.loads(completed.stdout), completed


def lint_both_paths(source: str, path: str = "snippet.py") -> list[tuple[int, str]]:
    """(row, code) of every finding of every rule, asserted equal with the prefilter on and off: the
    prefilter must never hide what the analysis finds."""
    from viewlint.engine import lint_text
    from viewlint.settings import Settings

    found = []
    for prefilter in (True, False):
        diagnostics = lint_text(source, path, Settings(select=("ALL",), prefilter=prefilter))
        found.append(sorted((d.start.row, d.code) for d in diagnostics))
    assert found[0] == found[1], f"prefilter {found[0]} != full {found[1]}"
    return found[0]


def lint_snippet(source: str) -> list[tuple[int, str]]:
    """`lint_both_paths` of an indented snippet (a test's triple-quoted source)."""
    return lint_both_paths(textwrap.dedent(source).lstrip("\n"))


def run_snippet(source: str) -> dict:
    """Run an indented snippet with real torch (skipped without it); its module scope, named `probe`."""
    torch = pytest.importorskip("torch")
    scope: dict = {"torch": torch, "__name__": "probe"}
    exec(compile(textwrap.dedent(source).lstrip("\n"), "m.py", "exec"), scope)  # noqa: S102 - a test's own snippet
    return scope

