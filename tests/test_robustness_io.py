"""Hostile input and surroundings: never a traceback, never a hang, never a corrupted file.

Pipes, devices, unreadable folders, closed or endless stdin, file names that are not UTF-8,
odd output encodings, signals, links. Each test builds its input on the spot. Permission
tests need a user the permissions apply to: as root they run viewlint as `nobody`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import jsonschema
import pytest

from viewlint.config import CliOverrides, SettingsResolver

BAD = (
    "import torch\n"
    "\n"
    "\n"
    "def write_rows(buf: torch.Tensor, rows: list[int], value: torch.Tensor) -> None:\n"
    "    buf[rows].copy_(value)\n"
)
FIXED_LINE = "    buf[rows] = value\n"
FINDING = "bad.py:5:5: VL201"
SCHEMA_PATH = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to find child processes")


def viewlint(*args: str, cwd: Path, input: Optional[bytes] = None, env: Optional[dict[str, str]] = None,
             timeout: float = 120, **popen: Any) -> "subprocess.CompletedProcess[bytes]":
    """The real command line; bytes out. A hang fails the test instead of stalling the suite."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("VIEWLINT_OUTPUT_FORMAT", None)
    try:
        return subprocess.run([sys.executable, "-m", "viewlint", *args], cwd=cwd, input=input, capture_output=True,
                              env=full_env, timeout=timeout, **popen)
    except subprocess.TimeoutExpired:
        pytest.fail(f"viewlint {' '.join(args)} did not finish in {timeout} s")


def out(result: "subprocess.CompletedProcess[bytes]") -> str:
    return result.stdout.decode("utf-8", "replace")


def err(result: "subprocess.CompletedProcess[bytes]") -> str:
    return result.stderr.decode("utf-8", "replace")


def assert_clean_exit(result: "subprocess.CompletedProcess[bytes]", code: int) -> None:
    assert "Traceback" not in err(result), err(result)
    assert result.returncode == code, (result.returncode, err(result))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "bad.py").write_text(BAD)
    return tmp_path


# ---------------------------------------------------------------------------- item 6: pipes and devices


@needs_fifo
@pytest.mark.parametrize("output_format", ["concise", "full"])
def test_a_named_pipe_on_the_command_line_is_vl001_not_a_hang(project: Path, output_format: str) -> None:
    os.mkfifo(project / "pipe.py")
    result = viewlint("--output-format", output_format, "pipe.py", "bad.py", cwd=project, timeout=60)
    assert_clean_exit(result, 1)
    assert "pipe.py:1:1: VL001 cannot read file: not a regular file (a named pipe)" in out(result).splitlines()
    assert FINDING in out(result)


@needs_fifo
def test_a_named_pipe_found_in_a_folder_is_reported(project: Path) -> None:
    (project / "pkg").mkdir()
    os.mkfifo(project / "pkg" / "pipe.py")
    os.mkfifo(project / "pkg" / "notes.txt")  # not a Python file: not ours to report
    for jobs in ("1", "2"):
        result = viewlint("-j", jobs, ".", cwd=project, timeout=60)
        assert_clean_exit(result, 1)
        lines = out(result).splitlines()
        assert "pkg/pipe.py:1:1: VL001 cannot read file: not a regular file (a named pipe)" in lines
        assert not any("notes.txt" in line for line in lines)


@needs_fifo
def test_fix_skips_a_named_pipe(project: Path) -> None:
    os.mkfifo(project / "pipe.py")
    result = viewlint("--fix", "pipe.py", "bad.py", cwd=project, timeout=60)
    assert_clean_exit(result, 1)
    assert out(result) == "pipe.py:1:1: VL001 cannot read file: not a regular file (a named pipe)\n"
    assert FIXED_LINE in (project / "bad.py").read_text()


def _limit_memory() -> None:
    import resource

    limit = 1536 * 1024 * 1024  # a regression then fails with MemoryError, not by eating the machine
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_endless_character_device_is_vl001_and_memory_stays_flat(project: Path) -> None:
    result = viewlint("--no-cache", "/dev/zero", "bad.py", cwd=project, timeout=60, preexec_fn=_limit_memory)
    assert_clean_exit(result, 1)
    assert "/dev/zero:1:1: VL001 cannot read file: not a regular file (a character device)" in out(result).splitlines()
    assert FINDING in out(result)


@needs_fifo
def test_a_named_pipe_in_place_of_a_cache_entry_is_a_miss(project: Path) -> None:
    assert viewlint("--cache-dir", "cache", "bad.py", cwd=project).returncode == 1
    (entry,) = (project / "cache" / "entries").glob("*/*.json")
    entry.unlink()
    os.mkfifo(entry)
    result = viewlint("--cache-dir", "cache", "bad.py", cwd=project, timeout=60)
    assert_clean_exit(result, 1)
    assert out(result).startswith(FINDING)
    assert stat.S_ISREG(entry.stat().st_mode), "the entry is written again as a regular file"


# ---------------------------------------------------------------------------- item 16: stdin


def _close_stdin() -> None:
    os.close(0)


def test_closed_stdin_is_vl001(project: Path) -> None:
    for extra in ((), ("--fix",)):
        result = viewlint(*extra, "-", cwd=project, preexec_fn=_close_stdin)
        assert_clean_exit(result, 1)
        assert "-:1:1: VL001 cannot read stdin: it is closed" in (out(result) + err(result)).splitlines()


def test_undecodable_stdin_is_vl001_at_the_bad_byte(project: Path) -> None:
    data = b"# -*- coding: utf-8 -*-\nimport torch\nname = 'caf\xe9'\n"
    result = viewlint("-", cwd=project, input=data)
    assert_clean_exit(result, 1)
    assert out(result) == "-:3:12: VL001 cannot decode as utf-8: byte 0xe9: invalid continuation byte\n"
    fixed = viewlint("--fix", "-", cwd=project, input=data)
    assert_clean_exit(fixed, 1)
    assert fixed.stdout == data, "--fix - gives back what it cannot fix, byte for byte"
    assert "-:3:12: VL001 cannot decode as utf-8" in err(fixed)


def test_stdin_has_the_same_size_cap_as_files(project: Path) -> None:
    data = b"x = 1\n" * (8 * 1024 * 1024 // 6 + 1)  # just over 8 MiB
    result = viewlint("-", cwd=project, input=data)
    assert_clean_exit(result, 1)
    assert out(result) == "-:1:1: VL001 file too large to lint (more than 8 MiB)\n"
    fixed = viewlint("--fix", "-", cwd=project, input=data)
    assert_clean_exit(fixed, 1)
    assert fixed.stdout == data, "--fix - streams back all of what it does not fix"


