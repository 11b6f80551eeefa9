"""`viewlint verify --run CMD PATHS` on the command line: its exit status says when CMD failed,
and it writes nothing into the folder it runs in."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, run_viewlint

pytest.importorskip("torch")

FLAGGED = FIXTURES / "VL201" / "positive_inplace_on_gather.py"
PYTHON = shlex.quote(sys.executable)


@pytest.mark.parametrize("command, options, status", [
    ("-c 'import sys; sys.exit(5)'", [], 5),
    ("-c 'import sys; sys.exit(5)'", ["--exit-zero"], 5),  # --exit-zero is about findings, not the command
    ("-c 'import os, signal; os.kill(os.getpid(), signal.SIGKILL)'", [], 128 + 9),
    ("-c 'import time; time.sleep(60)'", ["--timeout", "1"], 124),
    ("-c 'pass'", [], 1),  # the command passed; the findings it never reached remain
    ("-c 'pass'", ["--exit-zero"], 0),
], ids=["fails", "fails-exit-zero", "killed", "timed-out", "passes", "passes-exit-zero"])
def test_verify_run_exits_with_the_commands_failure(tmp_path: Path, command: str, options: list, status: int) -> None:
    completed = run_viewlint("verify", "--isolated", "--device", "cpu", *options, "--run", f"{PYTHON} {command}",
                             str(FLAGGED), cwd=tmp_path)
    assert completed.returncode == status, completed.stderr
    assert "Traceback" not in completed.stderr
    assert "VL201" in completed.stdout  # the findings are printed whatever the command did


def test_verify_run_on_the_fixtures_exits_non_zero_when_the_command_fails(tmp_path: Path) -> None:
    """The issue's own command line, on a part of fixtures/."""
    completed = run_viewlint("verify", "--isolated", "--run", "python -c 'import sys; sys.exit(5)'",
                             str(FIXTURES / "VL201"), cwd=tmp_path)
    assert completed.returncode == 5, completed.stderr
    assert "exited with status 5" in completed.stderr


SCRIPT = '''\
import torch

import helper


def bump(buf: torch.Tensor) -> None:
    buf[[0, 1]].fill_(1.0)


if __name__ == "__main__":
    bump(torch.zeros(4))
    helper.reset(torch.zeros(4))
'''

HELPER = '''\
import torch


def reset(buf: torch.Tensor) -> None:
    buf[[2, 3]].zero_()
'''


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file and folder under ``folder`` (relative path -> bytes; b"/" for a folder)."""
    found = {}
    for root, folders, files in os.walk(folder):
        for name in folders:
            found[os.path.relpath(os.path.join(root, name), folder)] = b"/"
        for name in files:
            path = os.path.join(root, name)
            found[os.path.relpath(path, folder)] = Path(path).read_bytes()
    return found


def test_verify_run_writes_nothing_into_the_project(tmp_path: Path) -> None:
    """No .viewlint_cache, no bytecode for the flagged modules it instruments, nothing else."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(SCRIPT, encoding="utf-8")
    (project / "helper.py").write_text(HELPER, encoding="utf-8")
    (project / "pyproject.toml").write_text("[tool.viewlint]\n", encoding="utf-8")
    before = _tree(project)
    completed = run_viewlint("verify", "--output-format", "json", "--run", f"{PYTHON} train.py", ".", cwd=project)
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout.count('"status": "confirmed"') == 2  # the command ran both flagged files
    assert _tree(project) == before
