"""Ctrl-C and SIGTERM are honoured within a second in every phase, even while libcst reads deeply nested
code (issue 29): exit 130 or 143, no traceback, no abort, no process left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import as_from_a_terminal

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and sends POSIX signals")

# libcst's parser takes time quadratic in the length of a chain and holds the interpreter meanwhile: this file
# keeps it busy for seconds in one call (and a single-process viewlint deaf to signals for as long).
DEEP = "import torch\nx = torch.zeros(3)\n" + "".join(f"y{i} = x" + ".contiguous()" * 300 + "\n" for i in range(60))


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(child) for child in handle.read().split()]
    except OSError:
        return []


@pytest.mark.parametrize(("send", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("fix", [False, True])
def test_a_stop_signal_during_a_long_parse_exits_at_once(tmp_path: Path, send: int, code: int, fix: bool) -> None:
    (tmp_path / "deep.py").write_text(DEEP)
    env = {k: v for k, v in os.environ.items() if k != "VIEWLINT_OUTPUT_FORMAT"}
    process = subprocess.Popen([sys.executable, "-m", "viewlint", "check", "--no-cache", *(["--fix"] if fix else []),
                                "deep.py"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                               start_new_session=True, preexec_fn=as_from_a_terminal)
    try:
        # Well into the lint: past the imports, into the parse (a worker process reads the file, when there is one).
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline and not _children(process.pid):
            time.sleep(0.05)
        time.sleep(1.0)
        assert process.poll() is None, "viewlint finished before the signal: the file is not deep enough"
        workers = _children(process.pid)
        sent = time.monotonic()
        if send == signal.SIGINT:
            os.killpg(process.pid, send)  # Ctrl-C: the terminal signals the whole process group
        else:
            process.send_signal(send)  # `kill PID`: the main process only
        try:
            stderr = process.communicate(timeout=10)[1].decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running 10 s after {signal.Signals(send).name}")
        waited = time.monotonic() - sent
        assert process.returncode == code, stderr[-2000:]
        assert waited < 2.0, f"exited {waited:.1f} s after the signal"
        for trace in ("Traceback", "Fatal Python error", "Aborted"):
            assert trace not in stderr, stderr[-2000:]
        time.sleep(0.5)
        assert not [pid for pid in workers if Path(f"/proc/{pid}").exists() and
                    Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"], "a worker outlived viewlint"
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        process.wait()


# ------------------------------------------------------------------ a stop whose exception Python dropped
class _RaisesTheStopInAFinaliser:
    """Python runs a signal handler wherever the interpreter is, a finaliser included, and drops what it
    raises there (printed as "Exception ignored in"): the stop is then only recorded. (SIGTERM: a suite run
    as a background job has SIGINT ignored.)"""

    def __del__(self) -> None:
        signal.raise_signal(signal.SIGTERM)


def _a_swallowed_stop() -> None:
    _RaisesTheStopInAFinaliser()  # collected at once: the exception the handler raises is dropped


def _sleeper(tmp_path: Path) -> "subprocess.Popen[bytes]":
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], cwd=tmp_path,
                            start_new_session=True)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_verify_run_stops_for_a_stop_a_finaliser_swallowed(tmp_path: Path) -> None:
    from viewlint.interrupts import Terminated, handle_stop_signals
    from viewlint.verify.runner import _run_command

    started = time.monotonic()
    with pytest.raises(Terminated):
        with handle_stop_signals():
            _a_swallowed_stop()
            _run_command(f"{sys.executable} -c 'import time; time.sleep(30)'", dict(os.environ), None)
    assert time.monotonic() - started < 5.0


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_verified_file_stops_for_a_stop_a_finaliser_swallowed(tmp_path: Path) -> None:
    from viewlint.interrupts import Terminated, handle_stop_signals
    from viewlint.verify.runner import VerifyResult, _follow

    progress, log = tmp_path / "progress.jsonl", tmp_path / "child.log"
    progress.touch()
    child = _sleeper(tmp_path)
    started = time.monotonic()
    try:
        with pytest.raises(Terminated):
            with handle_stop_signals():
                _a_swallowed_stop()
                _follow(child, progress, log, 0, 1, 300.0, VerifyResult([]), {})
        assert time.monotonic() - started < 5.0
    finally:
        child.kill()
        child.wait()
