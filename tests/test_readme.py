"""The README's examples do what they say: its usage example is run and its output compared,
its configuration example is accepted and its per-rule option has an effect.

(The pre-commit snippet is checked in test_precommit.py, with the hook environment built there.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

from conftest import FIXTURES, run_viewlint
from readme_blocks import checked_block, console_session


def _shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run a README command as a user would, with this interpreter's `viewlint` first on PATH."""
    env = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])}
    env.pop("VIEWLINT_OUTPUT_FORMAT", None)
    return subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_usage_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "fixtures")  # "from the repository root", without writing a cache there
    session = console_session(checked_block("console"))
    assert len(session) >= 2
    for command, expected in session:
        assert command.startswith("viewlint ")
        result = _shell(command, tmp_path)
        # A terminal shows the findings (stdout), then the summary (stderr).
        assert result.stdout + result.stderr == expected, command
        assert result.returncode == 1, command  # findings


CAST_IN_FORWARD = '''\
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.empty(8, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.w.float()
'''


def test_configuration_example_is_accepted_and_its_rule_option_works(tmp_path: Path) -> None:
    example = checked_block("config")
    table = tomllib.loads(example)["tool"]["viewlint"]
    (code, options), = table["rules"].items()
    documented = json.loads(run_viewlint("rule", code, "--output-format", "json").stdout)["options"]
    assert documented and set(options) <= set(documented), f"{code} has options {documented}, the README sets {options}"

    (tmp_path / "pyproject.toml").write_text(example, encoding="utf-8")
    (tmp_path / "head.py").write_text(CAST_IN_FORWARD, encoding="utf-8")
    configured = run_viewlint("--no-cache", "head.py", cwd=tmp_path)
    assert configured.returncode == 1, configured.stderr
    assert "head.py:11:20: VL302" in configured.stdout
    # Without the README's `casts = true`, the cast is not reported.
    default = run_viewlint("--no-cache", "--isolated", "head.py", cwd=tmp_path)
    assert "VL302" not in default.stdout
