"""`--verify` and `verify --run` own the processes they start: one fresh process per flagged file,
the whole process group stopped at a timeout (SIGTERM, then SIGKILL), nothing left behind on
Ctrl-C or SIGTERM, and no traceback when a script removes the folder it runs in.

The scripts here write their process ids to a file given by absolute path, so the test can
look for survivors of their process group afterwards (through /proc: Linux only).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import pytest

from conftest import ROOT, as_from_a_terminal, run_viewlint
from viewlint.diagnostics import Diagnostic, Location
from viewlint.engine import lint_path
from viewlint.settings import Settings
from viewlint.verify.runner import COMMAND_TIMED_OUT, verify_command, verify_scripts

pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads process groups from /proc")


def survivors(group: int) -> list[int]:
    """Processes of ``group`` that still run (zombies are dead: they only wait to be reaped)."""
    alive = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if int(fields[2]) == group and fields[0] not in (b"Z", b"X"):
            alive.append(int(name))
    return alive


def survivors_after(group: int, seconds: float = 1.0) -> list[int]:
    """Survivors once ``seconds`` have passed (a killed process needs a moment to become a zombie)."""
    deadline = time.monotonic() + seconds
    while survivors(group) and time.monotonic() < deadline:
        time.sleep(0.02)
    return survivors(group)


def kill_all(group: Optional[int]) -> None:
    """Clean up after a failing test: never leave a spinning process on a shared machine."""
    if group is not None:
        for pid in survivors(group):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def wait_for(path: Path, seconds: float = 120.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            return path.read_text()
        time.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


def lint(paths: list[Path]) -> list[Diagnostic]:
    settings = Settings(select=("ALL",))
    return sorted((d for p in paths for d in lint_path(p, str(p), settings).diagnostics), key=lambda d: d.sort_key)


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


# A child that ignores SIGTERM and runs until it is killed, once it says it is ready.
IGNORES_SIGTERM = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('ready', flush=True)\n"
    "while True:\n"
    "    time.sleep(0.01)\n"
)


# Ignores SIGTERM, says where it runs, and runs until it is killed.
STUBBORN = '''\
import os
import signal
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open({marks!r}, "w") as marks:
    marks.write(f"{{os.getpid()}} {{os.getpgid(0)}}\\n")
while True:
    time.sleep(0.01)
'''


# ---------------------------------------------------------------------------------------------- one process per file
CHANGES_THE_WORLD = '''\
import os
import tempfile

import torch

gone = tempfile.mkdtemp()
os.chdir(gone)
os.rmdir(gone)  # whatever runs next in this process starts in a folder that no longer exists
torch.Tensor.clone = lambda self, *args, **kwargs: self  # and clone no longer copies
buf = torch.zeros(4)
buf[[0, 1]].fill_(1.0)
'''

WRITES_RELATIVE = '''\
from pathlib import Path

import torch

Path("out.txt").write_text("ok")  # relative: needs a working folder that exists
buf = torch.zeros(4)
buf[[0, 1]].fill_(1.0)
'''

CLONES = '''\
import torch

x = torch.randn(64, 32)
cache = {}
cache["col"] = x[:, 0].clone()
'''


def test_each_file_runs_in_a_fresh_process(tmp_path: Path) -> None:
    """A file that changes the working folder and monkeypatches torch changes nothing for the next files."""
    first = write(tmp_path, "a_changes_the_world.py", CHANGES_THE_WORLD)
    second = write(tmp_path, "b_writes_relative.py", WRITES_RELATIVE)
    third = write(tmp_path, "c_clones.py", CLONES)
    found = lint([first, second])
    row = CLONES.splitlines().index('cache["col"] = x[:, 0].clone()') + 1
    clone = Diagnostic(str(third), "VL101", "look-alike", "look-alike", Location(row, 16), Location(row, 31))
    result = verify_scripts([*found, clone], timeout=60, device="cpu")
    verdicts = {(Path(d.path).name, d.code): d.verdict for d in result.diagnostics}

    assert verdicts[("a_changes_the_world.py", "VL201")].status == "confirmed"
    written = verdicts[("b_writes_relative.py", "VL201")]
    assert written.status == "confirmed", written  # not FileNotFoundError from a's removed folder
    cloned = verdicts[("c_clones.py", "VL101")]
    assert cloned.status == "refuted" and "owns its storage" in cloned.evidence, cloned  # the real clone ran
    assert {outcome.status for outcome in result.files.values()} == {"ok"}


# ---------------------------------------------------------------------------------------------- timeouts
def test_check_verify_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    """The file's process reports what it measured on SIGTERM; a child it started that ignores
    SIGTERM is killed with SIGKILL, not left running."""
    marks = tmp_path / "pids"
    script = write(tmp_path, "starts_a_stubborn_child.py", f'''\
import os
import subprocess
import sys

import torch

child = subprocess.Popen([sys.executable, "-c", {IGNORES_SIGTERM!r}], stdout=subprocess.PIPE)
child.stdout.readline()
with open({str(marks)!r}, "w") as marks:
    marks.write(f"{{child.pid}} {{os.getpgid(0)}}\\n")
buf = torch.zeros(4)
buf[[0, 1]].fill_(1.0)
child.wait()
''')
    group = None
    try:
        result = verify_scripts(lint([script]), timeout=3, device="cpu")
        _, group_text = marks.read_text().split()
        group = int(group_text)
        assert survivors_after(group) == []
        [outcome] = result.files.values()
        assert outcome.status == "timeout"
        [diagnostic] = result.diagnostics
        assert diagnostic.verdict.status == "confirmed"  # reported by the stopped process
    finally:
        kill_all(group)


def test_verify_run_timeout_kills_the_whole_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`CMD` is a shell running a script that ignores SIGTERM: the shell goes on SIGTERM, the
    script gets SIGKILL, and the exit status says the command timed out."""
    marks = tmp_path / "pids"
    write(tmp_path, "flagged.py", RUNS)  # something to verify: the command runs only then
    write(tmp_path, "stubborn.py", STUBBORN.format(marks=str(marks)))
    monkeypatch.chdir(tmp_path)
    group = None
    try:
        result = verify_command(lint([Path("flagged.py")]), f"{sys.executable} stubborn.py; echo finished",
                                timeout=2, device="cpu")
        _, group_text = marks.read_text().split()
        group = int(group_text)
        assert survivors_after(group) == []
        assert result.command_status == COMMAND_TIMED_OUT
        assert "timed out after 2 s" in " ".join(result.notes)
    finally:
        kill_all(group)


# ---------------------------------------------------------------------------------------------- a file removes its folder
REMOVES_ITS_FOLDER = '''\
import os
import shutil

import torch

buf = torch.zeros(4)
shutil.rmtree(os.getcwd())
os._exit(3)
buf[[0, 1]].fill_(1.0)
'''

RUNS = '''\
import torch

buf = torch.zeros(4)
buf[[0, 1]].fill_(1.0)
'''


def _verdicts(stdout: str) -> dict[str, dict]:
    return {finding["filename"].rsplit("/", 1)[-1]: finding["verdict"] for finding in json.loads(stdout)}


def test_a_script_that_removes_its_folder_gets_an_error_and_the_next_file_runs(tmp_path: Path) -> None:
    write(tmp_path, "a_removes.py", REMOVES_ITS_FOLDER)
    write(tmp_path, "b_runs.py", RUNS)
    completed = run_viewlint("check", "--isolated", "--no-cache", "--verify", "--device", "cpu", "--output-format",
                             "json", "a_removes.py", "b_runs.py", cwd=tmp_path)
    assert "Traceback" not in completed.stderr, completed.stderr
    assert completed.returncode == 1
    verdicts = _verdicts(completed.stdout)
    assert verdicts["a_removes.py"]["status"] == "error"
    assert verdicts["a_removes.py"]["evidence"] == "the interpreter exited with status 3 (os._exit or a crash)"
    assert verdicts["b_runs.py"]["status"] == "confirmed"  # in a fresh folder of its own


def test_a_removed_verify_cwd_is_an_error_for_the_files_after(tmp_path: Path) -> None:
    write(tmp_path, "a_removes.py", REMOVES_ITS_FOLDER)
    write(tmp_path, "b_runs.py", RUNS)
    work = tmp_path / "work"
    work.mkdir()
    completed = run_viewlint("check", "--isolated", "--no-cache", "--verify", "--device", "cpu", "--verify-cwd",
                             str(work), "--output-format", "json", "a_removes.py", "b_runs.py", cwd=tmp_path)
    assert "Traceback" not in completed.stderr, completed.stderr
    assert completed.returncode == 1
    verdicts = _verdicts(completed.stdout)
    assert verdicts["a_removes.py"]["status"] == "error"
    assert verdicts["b_runs.py"]["status"] == "error"
    assert verdicts["b_runs.py"]["evidence"] == f"cannot run in {work}: No such file or directory"


# ---------------------------------------------------------------------------------------------- Ctrl-C and SIGTERM
HANGS = '''\
import os
import time

import torch

buf = torch.zeros(4)
buf[[0, 1]].fill_(1.0)
with open({marks!r}, "w") as marks:
    marks.write(f"{{os.getpid()}} {{os.getpgid(0)}}\\n")
while True:
    time.sleep(0.01)
'''

# On the launcher's PYTHONPATH: it announces itself, then takes its time starting (as importing torch can).
SLOW_LAUNCHER = '''\
import os
import time

with open("/proc/self/cmdline", "rb") as cmdline:
    if b"viewlint.verify.launcher" in cmdline.read():
        with open({marks!r}, "w") as marks:
            marks.write(f"{{os.getpid()}} {{os.getpgid(0)}}\\n")
        time.sleep(60)
'''


def _stop_viewlint(arguments: list[str], marks: Path, signum: int, cwd: Path, env: Optional[dict] = None
                   ) -> tuple[int, float, str, list[int]]:
    """Start viewlint, send ``signum`` once the marks file appears; (exit status, seconds it took
    to exit after the signal, stderr, the processes of the group it ran code in still running)."""
    process = subprocess.Popen([sys.executable, "-m", "viewlint", *arguments], cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})},
                               preexec_fn=as_from_a_terminal)
    group = None
    try:
        _, group_text = wait_for(marks).split()
        group = int(group_text)
        sent = time.monotonic()
        process.send_signal(signum)
        process.wait(30)
        took = time.monotonic() - sent
        alive = survivors_after(group, 0.5)
        kill_all(group)  # before reading: a survivor would hold the pipes open
        _, stderr = process.communicate(timeout=30)
        return process.returncode, took, stderr, alive
    finally:
        kill_all(group)
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_check_verify_stops_within_a_second_while_a_file_runs(tmp_path: Path, signum: int, status: int) -> None:
    marks = tmp_path / "pids"
    write(tmp_path, "hangs.py", HANGS.format(marks=str(marks)))
    code, took, stderr, alive = _stop_viewlint(
        ["check", "--isolated", "--no-cache", "--verify", "--device", "cpu", "--verify-timeout", "300", "hangs.py"],
        marks, signum, tmp_path)
    assert code == status, stderr
    assert took < 1.0, took
    assert "Traceback" not in stderr
    assert alive == []


def test_check_verify_stops_within_a_second_while_the_launcher_starts(tmp_path: Path) -> None:
    marks = tmp_path / "pids"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    write(hooks, "sitecustomize.py", SLOW_LAUNCHER.format(marks=str(marks)))
    write(tmp_path, "runs.py", RUNS)
    code, took, stderr, alive = _stop_viewlint(
        ["check", "--isolated", "--no-cache", "--verify", "--device", "cpu", "runs.py"], marks, signal.SIGTERM,
        tmp_path, env={"PYTHONPATH": os.pathsep.join(filter(None, [str(hooks), os.environ.get("PYTHONPATH")]))})
    assert code == 143, stderr
    assert took < 1.0, took
    assert alive == []


def test_verify_run_stops_within_a_second_and_kills_a_command_that_ignores_sigterm(tmp_path: Path) -> None:
    marks = tmp_path / "pids"
    write(tmp_path, "flagged.py", RUNS)
    write(tmp_path, "stubborn.py", STUBBORN.format(marks=str(marks)))
    code, took, stderr, alive = _stop_viewlint(
        ["verify", "--isolated", "--device", "cpu", "--run", f"{sys.executable} stubborn.py; echo finished",
         "flagged.py"], marks, signal.SIGINT, tmp_path)
    assert code == 130, stderr
    assert took < 1.0, took
    assert "Traceback" not in stderr
    assert alive == []


def test_the_tests_read_process_groups_right() -> None:
    """`survivors` sees a live process of a group, and not once it is killed."""
    process = subprocess.Popen([sys.executable, "-c", IGNORES_SIGTERM], stdout=subprocess.PIPE,
                               start_new_session=True, cwd=ROOT)
    try:
        process.stdout.readline()
        assert survivors(process.pid) == [process.pid]
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert survivors(process.pid) == []
