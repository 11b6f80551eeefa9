"""The launcher of `check --verify`: imports torch once, then runs each flagged file in a fresh process.

``python -m viewlint.verify.launcher JOB PROGRESS START`` (started by :mod:`viewlint.verify.runner`,
in a process group of its own) reads the job, imports torch, and forks one process per file from
that clean state: no CUDA initialised (the device is chosen in each file's process), no user code
run. What a file changes (its working folder, a monkeypatched torch function, a global switch)
dies with its process. Each event is one JSON line appended to PROGRESS: ``ready`` (device),
``start`` (file), ``end`` (file, how it ended, the probe records of its sites), ``fatal``.

This module imports nothing heavy at the top: viewlint's own process imports it too (for
:func:`describe_exit`), and must never import torch.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, Optional

from viewlint.verify import PROBE_MODULE


def describe_exit(returncode: Optional[int]) -> str:
    """How a process ended, from its return code (negative: the signal that killed it)."""
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return f"the interpreter was killed by {name}"
    return f"the interpreter exited with status {returncode} (os._exit or a crash)"


class _Reporter:
    """Writes the child's events, one JSON line each, flushed at once (the parent may kill us)."""

    def __init__(self, path: str) -> None:
        self.stream = open(path, "a", encoding="utf-8")

    def __call__(self, **event: Any) -> None:
        self.stream.write(json.dumps(event) + "\n")
        self.stream.flush()


def _setup_device(requested: str, report: _Reporter) -> Optional[str]:
    """Import torch and choose the device; None after reporting a fatal problem."""
    try:
        import torch
    except Exception as error:
        report(event="fatal", reason=f"--verify needs torch, which {sys.executable} cannot import: {error}")
        return None
    note = ""
    available = torch.cuda.is_available()
    if requested == "cuda" and not available:
        report(event="fatal", reason="--device cuda: no CUDA device is available to torch "
                                     "(torch.cuda.is_available() is False); use --device cpu or auto")
        return None
    if requested == "host":  # a file that raised on CUDA, again: factories on the host, the program's own moves kept
        if available:
            from viewlint.verify import probes

            probes.enable_sync_debug()
        report(event="ready", device="cpu", note="")
        return "cpu"
    device = "cuda" if requested == "cuda" or (requested == "auto" and available) else "cpu"
    if requested == "auto" and not available:
        note = "no CUDA device: verified on cpu (syncs are reported as cpu-only)"
    if device == "cuda":
        from viewlint.verify import probes

        torch.set_default_device("cuda")  # factories allocate on the GPU: fixtures exercise CUDA tensors
        probes.enable_sync_debug()
        device = f"cuda:{torch.cuda.current_device()}"
    report(event="ready", device=device, note=note)
    return device


def _failure_line(error: BaseException, path: str) -> str:
    """`ValueError: boom (line 12)`: the error and the last traceback line inside the user's file."""
    line = None
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    where = f" (line {line})" if line else ""
    return f"{type(error).__name__}{': ' + message if message else ''}{where}"[:300]


def _prepare_module(module: Any, name: str, path: str) -> None:
    """Make ``module`` (the new ``__main__``) what ``python -m name`` runs: its package imported
    first, ``__package__`` and ``__spec__`` set, so relative imports work."""
    import importlib
    import importlib.util

    is_package = os.path.basename(path) == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    module.__package__ = package
    if package:
        importlib.import_module(package)
    locations = [os.path.dirname(path)] if is_package else None
    module.__spec__ = importlib.util.spec_from_file_location(name, path, submodule_search_locations=locations)
    module.__loader__ = module.__spec__.loader if module.__spec__ is not None else None


def _run_one(entry: dict[str, Any]) -> tuple[str, str, str]:
    """Run one instrumented file as ``__main__`` in this process (the file's own): a package module
    from its import root (as ``python -m`` would), a script from its folder (as ``python file.py``
    would); (status, reason, error)."""
    import builtins
    import types

    from viewlint.verify import probes

    path, name = entry["path"], entry.get("module")
    what = f"module {name}" if name else "script"
    module = types.ModuleType("__main__")
    module.__file__ = path
    module.__dict__["__builtins__"] = builtins
    module.__dict__[PROBE_MODULE] = probes
    sys.modules["__main__"] = module  # dataclasses and pickle look their module up here
    sys.argv = [path]
    sys.path.insert(0, entry.get("root") or os.path.dirname(path))
    try:
        if name:
            _prepare_module(module, name, path)
        if "compile" in entry["source"]:
            probes.hide_from_compiler()
        code = compile(entry["source"], path, "exec", dont_inherit=True)  # real filename: tracebacks point at the user's lines
        exec(code, module.__dict__)
        return "ok", "", ""
    except SystemExit as stop:
        if stop.code in (None, 0):
            return "ok", "", ""
        return "exit", f"the {what} called sys.exit({stop.code!r})", ""
    except BaseException as error:  # noqa: B036 - user code may raise anything, KeyboardInterrupt included
        failure = _failure_line(error, path)
        return "raised", f"{what} raised {failure}", failure


def _file_process(job: dict[str, Any], index: int, report: _Reporter) -> None:
    """In the file's own process: enter its working folder, pick the device, run it, report how it ended."""
    from viewlint.verify import probes

    entry = job["files"][index]
    own = os.getpid()

    def stopped(signum: int, frame: Any) -> None:  # the parent's timeout: report what we measured, then go
        if os.getpid() == own:  # not in a process the file forked (a worker): it holds a copy of our records
            report(event="end", file=index, status="timeout", reason="timed out", records=probes.take(entry["sites"]))
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stopped)
    folder = job["cwd"] or os.path.join(job["scratch"], str(index))
    try:
        if not job["cwd"]:
            os.makedirs(folder, exist_ok=True)  # also when an earlier file removed the folder above
        os.chdir(folder)
    except OSError as error:  # the folder named with --verify-cwd is gone (an earlier file removed it)
        report(event="end", file=index, status="error", reason=f"cannot run in {folder}: {error.strerror or error}")
        return
    if _setup_device(job["device"], report) is None:
        return
    status, reason, error = _run_one(entry)
    report(event="end", file=index, status=status, reason=reason, error=error, records=probes.take(entry["sites"]))


def _fork_file(job: dict[str, Any], index: int, report: _Reporter) -> Optional[int]:
    """Run one file in a process forked from the launcher; its exit status when it ended without
    reporting (``os._exit``, a crash, a signal), else None."""
    import traceback
    import warnings

    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns about forking with threads: torch's are idle, the launcher runs no code of its own.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(read_end)
            _file_process(job, index, report)
            os.write(write_end, b"1")  # reported: the launcher need not report a death
        except BaseException:  # noqa: B036 - a bug here: the launcher reports the exit status
            traceback.print_exc()
            code = 70
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)  # no atexit handlers: they belong to the launcher
    os.close(write_end)
    _, wait_status = os.waitpid(pid, 0)
    os.set_blocking(read_end, False)  # a process the file started may still hold the other end
    try:
        reported = os.read(read_end, 1) == b"1"
    except BlockingIOError:
        reported = False
    finally:
        os.close(read_end)
    return None if reported else os.waitstatus_to_exitcode(wait_status)


def child_main(job_path: str, progress_path: str, start: int) -> None:
    """The launcher: import torch once, then run files ``start:`` of the job, each in a fresh process
    forked from this clean state (no CUDA initialised, no user code run), and report each."""
    report = _Reporter(progress_path)
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    try:
        import torch  # noqa: F401 - imported once here, every file's process starts with it
    except Exception as error:
        report(event="fatal", reason=f"--verify needs torch, which {sys.executable} cannot import: {error}")
        return
    from viewlint.verify import probes  # noqa: F401

    if sys.path and os.path.abspath(sys.path[0] or ".") == os.getcwd():
        del sys.path[0]  # `-m` put the launcher's folder first: a file's own folder takes its place
    sys.dont_write_bytecode = True  # the user's modules are imported, never compiled into their folders
    for index in range(start, len(job["files"])):
        report(event="start", file=index)
        status = _fork_file(job, index, report)
        if status is not None:
            report(event="end", file=index, status="died", reason=describe_exit(status))


if __name__ == "__main__":
    child_main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
