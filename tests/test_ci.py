"""`.ci/run` picks, for each Python it tests the static path on, the newest pyenv build there is."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from readme_blocks import checked_block

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="the CI script is a bash script")


def _fake_pyenv(root: Path, versions: list[str]) -> None:
    for version in versions:
        python = root / "versions" / version / "bin" / "python"
        python.parent.mkdir(parents=True)
        python.write_text("#!/bin/sh\nexit 0\n")
        python.chmod(0o755)


def _plan(pyenv_root: Path) -> list[str]:
    env = {**os.environ, "PYENV_ROOT": str(pyenv_root)}
    env.pop("VIEWLINT_CI_STATIC_PYTHONS", None)
    result = subprocess.run(["bash", str(ROOT / ".ci" / "run"), "--list-pythons"], env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_the_newest_build_of_each_python_is_used_and_a_missing_one_is_skipped(tmp_path: Path) -> None:
    # 3.11 is left out (the full suite runs there); 3.12 is missing; a free-threaded build is not 3.13.
    _fake_pyenv(tmp_path, ["3.9.2", "3.9.18", "3.10.13", "3.11.7", "3.13.0t", "3.13.0", "3.1.5"])
    versions = tmp_path / "versions"
    assert _plan(tmp_path) == [
        f"3.9 {versions}/3.9.18/bin/python",
        f"3.10 {versions}/3.10.13/bin/python",
        "3.12 none",
        f"3.13 {versions}/3.13.0/bin/python",
    ]


def test_no_pyenv_at_all_skips_every_static_run(tmp_path: Path) -> None:
    assert _plan(tmp_path / "absent") == ["3.9 none", "3.10 none", "3.12 none", "3.13 none"]


def test_ci_runs_the_readme_test_command() -> None:
    """CI's full suite runs the README's test command verbatim, after the command's own venv steps."""
    readme = checked_block("setup-test").strip()
    venv, activate, rest = readme.split(" && ", 2)
    assert (venv, activate) == ("python3 -m venv .venv", ". .venv/bin/activate")
    script = (ROOT / ".ci" / "run").read_text().splitlines()
    marker = script.index("# The README's test command, after its venv lines.")
    assert script[marker + 1] == "set +e"
    assert script[marker + 2] == rest
