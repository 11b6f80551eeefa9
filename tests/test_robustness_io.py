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

from conftest import as_from_a_terminal
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


# ---------------------------------------------------------------------------- a user permissions apply to


class Unprivileged:
    """A scratch folder and a way to run viewlint there so that file permissions bind."""

    def __init__(self, folder: Path, lower: Optional[Callable[[], None]] = None, owner: Optional[tuple[int, int]] = None):
        self.folder = folder
        self.lower = lower  # run in the child before viewlint starts; None: we are not root already
        self.owner = owner  # hand the tree to this (uid, gid) first (when running as `nobody`)

    def run(self, *args: str, **kwargs: Any) -> "subprocess.CompletedProcess[bytes]":
        if self.owner is not None:
            for path in [self.folder, *self.folder.rglob("*")]:  # modes stay as the test set them
                os.lchown(path, *self.owner)
        return viewlint(*args, cwd=self.folder, preexec_fn=self.lower, **kwargs)


def _without_permission_override() -> None:
    """Stay root but lose CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (from the bounding set, so also
    after exec): root then meets file modes as their owner does. Linux only."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def _as_nobody() -> Optional[Unprivileged]:
    import pwd

    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return None

    def become_nobody() -> None:
        os.setgroups([])
        os.setgid(entry.pw_gid)
        os.setuid(entry.pw_uid)

    return Unprivileged(Path(), become_nobody, (entry.pw_uid, entry.pw_gid))


def _binds(user: Unprivileged) -> bool:
    """Whether viewlint starts under ``user`` and a file of mode 000 is then refused to it."""
    locked = user.folder / "probe-locked"
    locked.write_text("")
    locked.chmod(0)
    if user.owner is not None:
        os.lchown(locked, *user.owner)
    code = "import sys, viewlint.cli\ntry:\n    open(sys.argv[1]).close()\nexcept PermissionError:\n    print('denied')\n"
    try:
        probe = subprocess.run([sys.executable, "-c", code, str(locked)], cwd=user.folder, capture_output=True,
                               preexec_fn=user.lower, timeout=120)
    except OSError:  # e.g. `nobody` may not run this interpreter
        return False
    finally:
        locked.unlink()
    return probe.stdout == b"denied\n"


@pytest.fixture
def unprivileged() -> Iterator[Unprivileged]:
    """As a normal user, permissions simply apply. As root, drop the capabilities that ignore them
    (Linux), else become `nobody`; skip when neither works."""
    if not hasattr(os, "geteuid"):
        pytest.skip("POSIX permissions only")
    folder = Path(tempfile.mkdtemp(prefix="viewlint-perm-"))
    folder.chmod(0o755)
    try:
        if os.geteuid() != 0:
            yield Unprivileged(folder)
            return
        candidates = [Unprivileged(folder, _without_permission_override)] if sys.platform == "linux" else []
        nobody = _as_nobody()
        if nobody is not None:
            candidates.append(Unprivileged(folder, nobody.lower, nobody.owner))
        for user in candidates:
            if _binds(user):
                yield user
                return
        pytest.skip("running as root and cannot run viewlint where file permissions bind")
    finally:
        # Open every folder again, top down (a locked one hides what it holds), then remove the tree.
        folder.chmod(0o700)
        for parent, folders, _ in os.walk(folder):
            for name in folders:
                if not os.path.islink(os.path.join(parent, name)):
                    os.chmod(os.path.join(parent, name), 0o700)
        shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------------------- item 4: folders we may not search


def test_a_folder_without_search_permission_does_not_stop_the_run(unprivileged: Unprivileged) -> None:
    folder = unprivileged.folder
    (folder / "bad.py").write_text(BAD)
    (folder / "pyproject.toml").write_text('[tool.viewlint]\nselect = ["VL2"]\n')
    listable = folder / "pkg" / "listable"  # r-- : names can be read, nothing inside reached
    listable.mkdir(parents=True)
    (listable / "inner.py").write_text(BAD)
    (listable / "deeper").mkdir()
    sealed = folder / "pkg" / "sealed"  # --- : not even listed
    sealed.mkdir()
    listable.chmod(0o444)
    sealed.chmod(0)
    result = unprivileged.run("--no-cache", ".")
    assert_clean_exit(result, 1)
    lines = out(result).splitlines()
    assert [line for line in lines if line.startswith("pkg/")] == [
        "pkg/listable/deeper:1:1: VL001 cannot read directory: permission denied",
        "pkg/listable/inner.py:1:1: VL001 cannot read file: permission denied",
        "pkg/sealed:1:1: VL001 cannot read directory: permission denied",
    ]
    assert any(line.startswith(FINDING) for line in lines)


def test_config_discovery_treats_an_unsearchable_folder_as_holding_no_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root permissions never bind, so the stat that a real user gets EACCES from is simulated."""
    (tmp_path / "viewlint.toml").write_text('select = ["VL2"]\n')
    locked = tmp_path / "locked"
    locked.mkdir()
    real_is_file = Path.is_file

    def is_file(self: Path) -> bool:
        if self.parent == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_file(self)

    monkeypatch.setattr(Path, "is_file", is_file)
    settings = SettingsResolver(CliOverrides(), cwd=tmp_path).settings_for(locked / "module.py")
    assert settings.select == ("VL2",)  # the config above the locked folder governs it


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
    result = viewlint("--fix", "--unsafe-fixes", "pipe.py", "bad.py", cwd=project, timeout=60)
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


# ---------------------------------------------------------------------------- item 7: deeply nested TOML


@pytest.mark.parametrize("nested", ["a = " + "[" * 5000 + "]" * 5000, "a = " + "{b = " * 3000 + "1" + "}" * 3000])
def test_a_deeply_nested_pyproject_is_a_one_line_config_error(project: Path, nested: str) -> None:
    (project / "pyproject.toml").write_text(nested + "\n")  # no [tool.viewlint] at all
    result = viewlint("--no-cache", "bad.py", cwd=project)
    assert_clean_exit(result, 2)
    assert err(result) == "viewlint: error: pyproject.toml: invalid TOML: arrays or tables nested too deeply\n"


# ---------------------------------------------------------------------------- item 8: signals


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _many_files(folder: Path, count: int = 600) -> None:
    for i in range(count):
        (folder / f"m{i:04}.py").write_text(BAD)


@pytest.fixture
def start_with_workers() -> Iterator[Callable[..., tuple["subprocess.Popen[bytes]", list[int]]]]:
    """Start viewlint -j2 in its own process group and wait until both workers run. Whatever the
    test's outcome, the group is killed afterwards: a failing run leaves no orphan behind."""
    groups: list[int] = []

    def start(folder: Path, *args: str) -> tuple["subprocess.Popen[bytes]", list[int]]:
        env = {k: v for k, v in os.environ.items() if k != "VIEWLINT_OUTPUT_FORMAT"}
        process = subprocess.Popen([sys.executable, "-m", "viewlint", "-j", "2", "--no-cache", *args, "."],
                                   cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                                   start_new_session=True, preexec_fn=as_from_a_terminal)
        groups.append(process.pid)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            workers = _children(process.pid)
            if len(workers) >= 2:
                return process, workers
            time.sleep(0.05)
        pytest.fail("viewlint never started two workers")

    yield start
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _assert_workers_gone(workers: list[int]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.1)
    assert not [pid for pid in workers if _alive(pid)], "worker processes outlived viewlint"


@needs_proc
@pytest.mark.parametrize(("send", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_the_workers_too_and_exits_128_plus_the_signal(
    tmp_path: Path, start_with_workers: Callable[..., Any], send: int, code: int
) -> None:
    _many_files(tmp_path)
    process, workers = start_with_workers(tmp_path)
    if send == signal.SIGINT:
        os.killpg(process.pid, send)  # Ctrl-C: the terminal signals the whole process group
    else:
        process.send_signal(send)  # `kill PID`: the main process only
    stderr = process.communicate(timeout=60)[1].decode("utf-8", "replace")
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr and "Aborted!" not in stderr, stderr
    _assert_workers_gone(workers)


@needs_proc
def test_workers_leave_when_the_main_process_is_killed(tmp_path: Path, start_with_workers: Callable[..., Any]) -> None:
    _many_files(tmp_path)
    process, workers = start_with_workers(tmp_path)
    process.kill()
    process.wait(timeout=60)
    _assert_workers_gone(workers)


@needs_proc
def test_sigterm_during_fix_leaves_no_temporary_file_and_no_half_file(
    tmp_path: Path, start_with_workers: Callable[..., Any]
) -> None:
    _many_files(tmp_path)
    process, workers = start_with_workers(tmp_path, "--fix", "--unsafe-fixes")
    first = tmp_path / "m0000.py"
    deadline = time.monotonic() + 120
    while process.poll() is None and first.read_text() == BAD and time.monotonic() < deadline:
        time.sleep(0.01)  # files are written in order: once the first changed, writing is under way
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=60)
    assert process.returncode in (0, 143)  # 0: it had finished already
    _assert_workers_gone(workers)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".viewlint")] == []
    for path in tmp_path.glob("m*.py"):
        assert path.read_text() in (BAD, BAD.replace("    buf[rows].copy_(value)\n", FIXED_LINE))


def test_sigterm_while_a_fixed_file_is_written_waits_for_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from viewlint.fix import write_atomically
    from viewlint.interrupts import Terminated, handle_stop_signals

    target = tmp_path / "module.py"
    target.write_bytes(b"old\n")
    real_fsync = os.fsync

    def fsync_then_signal(descriptor: int) -> None:  # SIGTERM lands in the middle of the write
        os.kill(os.getpid(), signal.SIGTERM)
        real_fsync(descriptor)

    monkeypatch.setattr(os, "fsync", fsync_then_signal)
    with pytest.raises(Terminated), handle_stop_signals():
        write_atomically(target, b"new\n", expected=b"old\n")
    assert target.read_bytes() == b"new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["module.py"]


# ---------------------------------------------------------------------------- item 9: file names that are not UTF-8


@pytest.fixture
def undecodable_name(project: Path) -> Path:
    try:
        os.mkdir(os.fsencode(project / "pkg"))
        with open(os.path.join(os.fsencode(project / "pkg"), b"caf\xe9.py"), "wb") as handle:
            handle.write(BAD.encode())
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses file names that are not UTF-8")
    (project / "bad.py").unlink()
    return project


# A strict UTF-8 stdout, as under most UTF-8 locales (C.UTF-8 would use surrogateescape).
STRICT_UTF8 = {"PYTHONIOENCODING": "utf-8"}


def test_concise_output_names_a_non_utf8_file_with_its_own_bytes(undecodable_name: Path) -> None:
    result = viewlint("--no-cache", ".", cwd=undecodable_name, env=STRICT_UTF8)
    assert_clean_exit(result, 1)
    assert result.stdout.startswith(b"pkg/caf\xe9.py:5:5: VL201 ")


@pytest.mark.parametrize("output_format", ["json", "json-lines", "sarif", "junit", "github", "full", "pylint"])
def test_every_output_format_survives_a_non_utf8_file_name(undecodable_name: Path, output_format: str) -> None:
    result = viewlint("--no-cache", "--output-format", output_format, ".", cwd=undecodable_name, env=STRICT_UTF8)
    assert_clean_exit(result, 1)
    if output_format in ("json", "json-lines", "sarif", "junit", "github"):
        text = result.stdout.decode("utf-8")  # machine formats are valid UTF-8: U+FFFD for the bad byte
    else:
        text = result.stdout.decode("utf-8", "surrogateescape")
    if output_format == "json":
        assert json.loads(text)[0]["filename"] == "pkg/caf\ufffd.py"
    elif output_format == "json-lines":
        assert json.loads(text.splitlines()[0])["filename"] == "pkg/caf\ufffd.py"
    elif output_format == "sarif":
        log = json.loads(text)
        schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
        jsonschema.validators.validator_for(schema)(schema).validate(log)
        location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
        assert location["uri"] == "pkg/caf%E9.py"  # the name's real bytes, percent-encoded
    elif output_format == "junit":
        suite = ET.fromstring(result.stdout).find("testsuite")
        assert suite is not None and suite.get("name") == "pkg/caf\ufffd.py"
    elif output_format == "github":
        assert text.startswith("::warning file=pkg/caf\ufffd.py,line=5,")
    else:
        assert text.startswith("pkg/caf\udce9.py:5:")


def test_output_file_keeps_a_non_utf8_name(undecodable_name: Path) -> None:
    result = viewlint("--no-cache", "-o", "findings.txt", ".", cwd=undecodable_name, env=STRICT_UTF8)
    assert_clean_exit(result, 1)
    assert (undecodable_name / "findings.txt").read_bytes().startswith(b"pkg/caf\xe9.py:5:5: VL201 ")


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


# ---------------------------------------------------------------------------- item 17: config not UTF-8


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("pyproject.toml", b'[tool.viewlint]\nselect = ["VL2"]\nhot-functions = ["f\xe9"]\n',
         "pyproject.toml: line 3, column 20: invalid UTF-8 (byte 0xe9); TOML files must be UTF-8 "
         "(in tool.viewlint.hot-functions)"),
        ("viewlint.toml", b'# caf\xe9\nselect = ["VL2"]\n',
         "viewlint.toml: line 1, column 6: invalid UTF-8 (byte 0xe9); TOML files must be UTF-8"),
    ],
)
def test_a_config_that_is_not_utf8_names_the_file_the_place_and_the_key(
    project: Path, name: str, content: bytes, expected: str
) -> None:
    (project / name).write_bytes(content)
    result = viewlint("--no-cache", "bad.py", cwd=project)
    assert_clean_exit(result, 2)
    assert err(result) == f"viewlint: error: {expected}\n"


# ---------------------------------------------------------------------------- item 18: unreadable paths


def test_unreadable_paths_named_on_the_command_line_are_vl001(unprivileged: Unprivileged) -> None:
    folder = unprivileged.folder
    (folder / "bad.py").write_text(BAD)
    (folder / "secret.py").write_text(BAD)
    (folder / "closed").mkdir()
    (folder / "closed" / "inner.py").write_text(BAD)
    (folder / "hidden").mkdir()
    (folder / "hidden" / "inside.py").write_text(BAD)
    (folder / "secret.py").chmod(0)
    (folder / "closed").chmod(0)
    (folder / "hidden").chmod(0o600)  # readable, not searchable: inside.py cannot even be stat'ed
    result = unprivileged.run("--no-cache", "secret.py", "closed", "hidden/inside.py", "bad.py")
    assert_clean_exit(result, 1)
    assert out(result).splitlines()[1:] == [
        "closed:1:1: VL001 cannot read directory: permission denied",
        "hidden/inside.py:1:1: VL001 cannot read file: permission denied",
        "secret.py:1:1: VL001 cannot read file: Permission denied",
    ]
    assert out(result).startswith(FINDING)


def test_a_missing_path_is_still_a_usage_error(project: Path) -> None:
    result = viewlint("--no-cache", "nowhere/module.py", "bad.py", cwd=project)
    assert_clean_exit(result, 2)
    assert err(result) == "viewlint: error: nowhere/module.py: No such file or directory\n"


def test_an_unreadable_cache_folder_is_a_warning_and_the_run_goes_on(unprivileged: Unprivileged) -> None:
    folder = unprivileged.folder
    (folder / "bad.py").write_text(BAD)
    (folder / "cache").mkdir()
    (folder / "cache").chmod(0)
    result = unprivileged.run("--cache-dir", "cache", "bad.py")
    assert_clean_exit(result, 1)
    assert out(result).startswith(FINDING)
    assert "viewlint: warning: cannot use the cache (cache" in err(result)
    assert "Permission denied); linting without it" in err(result)


def test_a_cache_folder_that_is_a_file_is_a_warning_and_the_run_goes_on(project: Path) -> None:
    (project / "cache").write_text("not a folder\n")
    result = viewlint("--cache-dir", "cache", "bad.py", cwd=project)
    assert_clean_exit(result, 1)
    assert out(result).startswith(FINDING)
    assert "viewlint: warning: cannot use the cache (cache: File exists); linting without it\n" in err(result)
    assert (project / "cache").read_text() == "not a folder\n"


# ---------------------------------------------------------------------------- item 19: output encodings


# (PYTHONIOENCODING=ascii is no test: click then writes UTF-8 anyway.)
LATIN_1 = {"PYTHONIOENCODING": "latin-1"}


def test_an_output_encoding_without_the_ellipsis_spells_it_in_ascii(project: Path) -> None:
    result = viewlint("--no-cache", "bad.py", cwd=project, env=LATIN_1)
    assert_clean_exit(result, 1)
    assert result.stdout.startswith(b"bad.py:5:5: VL201 `buf[rows].copy_(...)` writes into a temporary copy")


def test_source_text_the_output_encoding_lacks_is_escaped(project: Path) -> None:
    (project / "bad.py").write_text(BAD.replace("copy_(value)", "copy_(value)  # 5 \u20ac, caf\u00e9"))
    full = viewlint("--no-cache", "--output-format", "full", "bad.py", cwd=project, env=LATIN_1)
    assert_clean_exit(full, 1)
    assert b"5 |     buf[rows].copy_(value)  # 5 \\u20ac, caf\xe9\n" in full.stdout
    assert b"= help: Assign through the index: `buf[rows] = ...`\n" in full.stdout


def test_show_fixes_in_an_encoding_without_the_multiplication_sign(project: Path) -> None:
    fixed = viewlint("--no-cache", "--fix", "--unsafe-fixes", "--show-fixes", "bad.py", cwd=project, env={"PYTHONIOENCODING": "iso8859-5"})
    assert_clean_exit(fixed, 0)
    assert b"      1 x VL201 (inplace-on-advanced-index)\n" in fixed.stderr


# ---------------------------------------------------------------------------- item 20: links and file metadata


def test_fix_through_a_symbolic_link_and_its_target_fixes_once(project: Path) -> None:
    (project / "alias.py").symlink_to("bad.py")
    result = viewlint("--no-cache", "--fix", "--unsafe-fixes", ".", cwd=project)
    assert_clean_exit(result, 0)
    assert err(result) == "Found 1 finding (1 fixed, 0 remaining).\n"
    assert (project / "alias.py").is_symlink()
    assert FIXED_LINE in (project / "bad.py").read_text()


def test_fix_keeps_hard_links_together(project: Path) -> None:
    os.link(project / "bad.py", project / "twin.py")
    result = viewlint("--no-cache", "--fix", "--unsafe-fixes", ".", cwd=project)
    assert_clean_exit(result, 0)
    assert os.path.samefile(project / "bad.py", project / "twin.py")
    assert (project / "bad.py").stat().st_nlink == 2
    assert FIXED_LINE in (project / "twin.py").read_text()


def test_fix_keeps_setuid_and_setgid_bits(project: Path) -> None:
    target = project / "bad.py"
    target.chmod(0o6755)
    if target.stat().st_mode & 0o7777 != 0o6755:
        pytest.skip("this file system does not keep setuid/setgid bits")
    result = viewlint("--no-cache", "--fix", "--unsafe-fixes", "bad.py", cwd=project)
    assert_clean_exit(result, 0)
    assert FIXED_LINE in target.read_text()
    assert target.stat().st_mode & 0o7777 == 0o6755


@pytest.mark.skipif(not hasattr(os, "setxattr"), reason="no extended attributes on this platform")
def test_fix_keeps_extended_attributes(project: Path) -> None:
    target = project / "bad.py"
    try:
        os.setxattr(target, "user.viewlint-test", b"kept")
    except OSError:
        pytest.skip("this file system has no user extended attributes")
    result = viewlint("--no-cache", "--fix", "--unsafe-fixes", "bad.py", cwd=project)
    assert_clean_exit(result, 0)
    assert FIXED_LINE in target.read_text()
    assert os.getxattr(target, "user.viewlint-test") == b"kept"


def test_fix_a_writable_file_in_a_read_only_folder(unprivileged: Unprivileged) -> None:
    folder = unprivileged.folder / "readonly"
    folder.mkdir()
    (folder / "bad.py").write_text(BAD)
    folder.chmod(0o555)
    result = unprivileged.run("--no-cache", "--fix", "--unsafe-fixes", "readonly/bad.py")
    assert_clean_exit(result, 0)
    assert FIXED_LINE in (folder / "bad.py").read_text()
    assert sorted(p.name for p in folder.iterdir()) == ["bad.py"]


def test_write_falls_back_to_in_place_when_no_temporary_file_can_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same case simulated, for runs as root where folder permissions never bind."""
    from viewlint.fix import write_atomically

    target = tmp_path / "module.py"
    target.write_bytes(b"old text\n")
    inode = target.stat().st_ino

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied", str(tmp_path))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    write_atomically(target, b"new\n", expected=b"old text\n")
    assert target.read_bytes() == b"new\n"
    assert target.stat().st_ino == inode
