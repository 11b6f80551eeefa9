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

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc and sends POSIX signals")

# libcst's parser takes time quadratic in the length of a chain and holds the interpreter meanwhile: this file
# keeps it busy for seconds in one call (and a single-process viewlint deaf to signals for as long).
DEEP = "import torch\nx = torch.zeros(3)\n" + "".join(f"y{i} = x" + ".contiguous()" * 300 + "\n" for i in range(60))


def _as_from_a_terminal() -> None:
    # A shell starts background jobs with SIGINT ignored, and Python then keeps ignoring it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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
                               start_new_session=True, preexec_fn=_as_from_a_terminal)
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
