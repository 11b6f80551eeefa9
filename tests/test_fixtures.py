"""Every fixture is linted and must produce exactly its `# expect:` markers; every fixture runs on real torch."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT, expected_findings, fixture_files

from viewlint.engine import lint_path
from viewlint.registry import all_rules
from viewlint.settings import Settings

FILES = fixture_files()
IDS = [str(p.relative_to(FIXTURES)) for p in FILES]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_fixture_findings_match_markers(path):
    result = lint_path(path, str(path), Settings(select=("ALL",)))
    found = {(d.start.row, d.code) for d in result.diagnostics}
    assert found == expected_findings(path)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_fixture_findings_are_the_same_without_prefilter(path):
    fast = lint_path(path, str(path), Settings(select=("ALL",)))
    full = lint_path(path, str(path), Settings(select=("ALL",), prefilter=False))
    assert fast.diagnostics == full.diagnostics


def test_every_rule_has_positive_and_negative_fixtures():
    for code in all_rules():
        folder = FIXTURES / code
        files = sorted(folder.glob("*.py"))
        assert files, f"{code} has no fixtures"
        assert any((code_marker := expected_findings(f)) and any(c == code for _, c in code_marker) for f in files), f"{code}: no positive fixture"
        negatives = [f for f in files if f.name.startswith("negative")]
        assert negatives, f"{code}: no negative (look-alike) fixture"


def test_fixtures_run_on_real_torch():
    """All fixtures stay runnable: each executes as __main__ in one subprocess (torch imported once)."""
    pytest.importorskip("torch")
    script = (
        "import runpy, sys, traceback\n"
        "failed = []\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        runpy.run_path(path, run_name='__main__')\n"
        "    except BaseException as error:\n"
        "        failed.append(f'{path}: {type(error).__name__}: {error}')\n"
        "print('\\n'.join(failed))\n"
        "sys.exit(1 if failed else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", script, *map(str, FILES)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
