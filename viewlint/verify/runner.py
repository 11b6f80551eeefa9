"""Run instrumented code in child processes, with a timeout, and turn what it measured into verdicts.

Two modes:

- :func:`verify_scripts` (``check --verify``): every flagged file runs as ``__main__`` in a fresh
  process of its own: a file inside a package as ``python -m package.module`` would, from its
  import root (:mod:`viewlint.verify.layout`), any other file as ``python file.py`` would. A
  launcher (``python -m viewlint.verify.launcher``) imports torch once and forks one process per
  file from that clean state, so what a file changes (the working folder, a monkeypatched torch
  function, a global switch) dies with its process and never reaches the next file's verdicts.
  Each file works in a fresh temporary folder of its own (or the one the user names), never
  writes bytecode, and gets PYTHONPATH as its only change to the environment: the import roots
  of the package files, then viewlint's own. The processes append one JSON line per event to a
  progress file: ``ready`` (device), ``start`` (file), ``end`` (file, how it ended, the probe
  records of its sites). The parent follows that file: a file that runs past the timeout is
  stopped with its whole process group (SIGTERM, which makes the file's process report what it
  measured so far, then SIGKILL for whatever is left), and a fresh launcher carries on with the
  next file. A file that raises, calls ``sys.exit``, kills its interpreter or removes its own
  folder is reported and the run continues.
- :func:`verify_command` (``verify --run``): the user's command runs in the current folder with a
  hook (:mod:`viewlint.verify.hook`) that instruments the flagged files however the command runs
  them (imported, ``python -m``, ``python file.py``); PYTHONPATH gains the hook's folder first
  and the flagged files' import roots last. Each Python process of the command that ran a
  flagged file leaves a JSON file of records behind, in a temporary folder. At the timeout the
  command's process group gets SIGTERM, then SIGKILL.

Ctrl-C and SIGTERM stop every child process group within a second (``finally`` blocks here), and
the command line exits 130 or 143. The viewlint process never executes user code and never
imports torch.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Optional, Sequence

from viewlint.diagnostics import RESERVED_CODES, Diagnostic, Verdict
from viewlint.verify.launcher import describe_exit

if TYPE_CHECKING:  # the child process imports this module: keep libcst out of its start-up
    from viewlint.verify.instrument import InstrumentedFile, Site
    from viewlint.verify.layout import ImportTarget

# How long the child may take to start (import torch, pick a device) before its first file.
STARTUP_TIMEOUT = 300.0
# After SIGTERM, how long a stopped child gets to report its partial measurements before SIGKILL.
TERM_GRACE = 2.0
# The same, when viewlint itself was interrupted (Ctrl-C, SIGTERM): it must be gone within a second.
INTERRUPT_GRACE = 0.3
POLL_INTERVAL = 0.02


# `verify --run`'s exit status when the command ran past --timeout (as GNU timeout's).
COMMAND_TIMED_OUT = 124


class VerifyError(Exception):
    """--verify cannot run at all (no CUDA for --device cuda, torch missing): a usage error."""


@dataclass
class FileOutcome:
    """How running one file ended: ok, raised, exit, timeout, died, not-run; ``reason`` says more,
    ``error`` is what it raised."""

    status: str
    reason: str = ""
    error: str = ""


@dataclass
class VerifyResult:
    """Every finding given to verify (same order), with a verdict on those that were probed."""

    diagnostics: list[Diagnostic]
    sites: dict[int, Site] = field(default_factory=dict)
    records: dict[int, dict[str, Any]] = field(default_factory=dict)
    files: dict[str, FileOutcome] = field(default_factory=dict)
    device: Optional[str] = None
    notes: list[str] = field(default_factory=list)
    # verify --run: the exit status to pass on when the command failed (see _run_command), else None.
    command_status: Optional[int] = None

    def counts(self) -> dict[str, int]:
        """Number of findings per verdict status."""
        counts: dict[str, int] = {}
        for diagnostic in self.diagnostics:
            if diagnostic.verdict is not None:
                counts[diagnostic.verdict.status] = counts.get(diagnostic.verdict.status, 0) + 1
        return counts

    def messages(self, include_summary: bool = True) -> list[str]:
        """Lines for stderr: device notes, files that did not run to the end, and a count per verdict."""
        lines = list(self.notes)
        for path, outcome in self.files.items():
            if outcome.status not in ("ok", "not-run"):
                lines.append(f"{path}: {outcome.reason}")
        if include_summary:
            order = ("confirmed", "refuted", "cpu-only", "not reached", "error")
            counts = self.counts()
            parts = [f"{counts[status]} {'errors' if status == 'error' and counts[status] > 1 else status}"
                     for status in order if counts.get(status)]
            where = f"device: {self.device}" if self.device else "no flagged code ran on a device"
            lines.append(f"{', '.join(parts) or 'nothing to verify'} ({where})")
        return lines


# ---------------------------------------------------------------------------------------------- parent side
def _instrument_all(diagnostics: Sequence[Diagnostic]) -> tuple[list[InstrumentedFile], dict[tuple[str, int], Verdict]]:
    """Instrument each file with findings; verdicts for the findings that cannot be probed.

    A notebook is instrumented as the module its code cells were linted as, its findings moved
    from their cells to that module's rows; its sites keep the findings as reported (in cells).
    """
    from viewlint.notebook import is_notebook
    from viewlint.verify.instrument import instrument
    by_path: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        if diagnostic.code not in RESERVED_CODES and diagnostic.path != "-":
            by_path.setdefault(diagnostic.path, []).append(diagnostic)
    files: list[InstrumentedFile] = []
    early: dict[tuple[str, int], Verdict] = {}
    next_site = 0
    for path, found in by_path.items():
        try:
            if is_notebook(path):
                source, in_module = _notebook_module(path, found)
            else:
                source, in_module = _module_source(path, strict=True), list(found)
            instrumented = instrument(path, source, in_module, first_site=next_site)
        except Exception as error:  # unreadable, changed since linting, or unparsable
            for diagnostic in found:
                early[_key(diagnostic)] = Verdict("error", f"cannot instrument {path}: {type(error).__name__}: {error}")
            continue
        reported = {id(moved): diagnostic for moved, diagnostic in zip(in_module, found)}
        for site in instrumented.sites:
            site.diagnostic = reported[id(site.diagnostic)]
        for diagnostic, reason in instrumented.unprobed:
            early[_key(reported[id(diagnostic)])] = Verdict("error", reason)
        if instrumented.sites:
            next_site = instrumented.sites[-1].site_id + 1
            files.append(instrumented)
    return files, early


def _notebook_module(path: str, found: Sequence[Diagnostic]) -> tuple[str, list[Diagnostic]]:
    """A notebook's code cells as one module, and its findings at their rows in that module."""
    from dataclasses import replace

    from viewlint.diagnostics import Location
    from viewlint.notebook import Notebook

    notebook = Notebook.from_bytes(Path(path).read_bytes())
    moved = []
    for diagnostic in found:
        cell = diagnostic.cell
        if cell is None:
            moved.append(diagnostic)
            continue
        start = Location(notebook.python_row(cell, diagnostic.start.row), diagnostic.start.column)
        end = Location(notebook.python_row(cell, diagnostic.end.row), diagnostic.end.column)
        moved.append(replace(diagnostic, cell=None, start=start, end=end))
    return notebook.python_source, moved


def _key(diagnostic: Diagnostic) -> tuple[str, int]:
    return diagnostic.path, id(diagnostic)


def _python_path(first: Sequence[str] = (), last: Sequence[str] = ()) -> str:
    """PYTHONPATH for a child: ``first``, the parent's own PYTHONPATH, then ``last``."""
    existing = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    ordered: list[str] = []
    for folder in (*first, *existing, *last):
        if folder not in ordered:
            ordered.append(folder)
    return os.pathsep.join(ordered)


def _package_roots(targets: Sequence[ImportTarget]) -> list[str]:
    """The import roots of the files that run as package modules, once each, in order."""
    roots: list[str] = []
    for target in targets:
        if target.module is not None and target.root not in roots:
            roots.append(target.root)
    return roots


def verify_scripts(diagnostics: Sequence[Diagnostic], *, timeout: float = 60.0, device: str = "auto",
                   python: Optional[str] = None, roots: Sequence[str] = (), cwd: Optional[str] = None
                   ) -> VerifyResult:
    """Run every file with findings as ``__main__``, each in a fresh process, and judge its sites.

    A file inside a package runs as ``python -m package.module`` from its import root (found from
    the layout, or among ``roots``); any other file, and a notebook's code cells, as
    ``python file.py`` would. Each file works in a fresh temporary folder unless ``cwd`` names one.
    """
    from viewlint.verify.layout import runs_anything
    from viewlint.verify.verdicts import judge
    files, early = _instrument_all(diagnostics)
    result = VerifyResult(list(diagnostics))
    sites = {site.site_id: site for f in files for site in f.sites}
    result.sites = sites
    outcomes: dict[int, FileOutcome] = {}
    targets = [_target(f.path, roots) for f in files]
    run = _FileRunner(files, targets, timeout=timeout, python=python or sys.executable, cwd=cwd)
    run(range(len(files)), device, result, outcomes)
    devices = {f.path: result.device for f in files}
    if result.device and result.device.startswith("cuda"):
        _rerun_on_the_host(run, result, outcomes, devices)
    unreached: dict[str, str] = {}
    for index, f in enumerate(files):
        outcome = outcomes.get(index, FileOutcome("not-run", "the file did not run"))
        result.files[f.path] = outcome
        unreached[f.path] = _unreached_reason(outcome, timeout, runs_anything(_module_source(f.path)))
    verdicts = {_key(site.diagnostic): judge(site, result.records.get(site.site_id),
                                             device=devices[site.diagnostic.path],
                                             unreached=unreached[site.diagnostic.path])
                for site in sites.values()}
    verdicts.update(early)
    result.diagnostics = [d.with_verdict(verdicts[_key(d)]) if _key(d) in verdicts else d for d in diagnostics]
    return result


class _FileRunner:
    """Runs some of the instrumented files, each as ``__main__`` in a fresh process, on one device."""

    def __init__(self, files: Sequence[InstrumentedFile], targets: Sequence[ImportTarget], *, timeout: float,
                 python: str, cwd: Optional[str]) -> None:
        self.files, self.targets = files, targets
        self.timeout, self.python, self.cwd = timeout, python, cwd

    def __call__(self, indices: Sequence[int], device: str, result: VerifyResult,
                 outcomes: dict[int, FileOutcome]) -> None:
        chosen = list(indices)
        if not chosen:
            return
        work = tempfile.mkdtemp(prefix="viewlint-verify-")  # the job, the progress files, the logs
        scratch = tempfile.mkdtemp(prefix="viewlint-verify-cwd-")  # the files' folders, apart: a file may remove its own
        try:
            job = Path(work) / "job.json"
            job.write_text(json.dumps({
                "device": device,
                "cwd": os.path.abspath(self.cwd) if self.cwd else None,
                "scratch": scratch,
                "files": [{"path": os.path.abspath(self.files[i].path), "source": self.files[i].source,
                           "sites": [s.site_id for s in self.files[i].sites],
                           "root": self.targets[i].root, "module": self.targets[i].module}
                          for i in chosen],
            }), encoding="utf-8")
            # The folder holding viewlint goes last: the child imports it, and it never shadows the user's modules.
            viewlint_folder = str(Path(__file__).resolve().parent.parent.parent)
            env = {**os.environ,
                   "PYTHONPATH": _python_path(first=_package_roots([self.targets[i] for i in chosen]),
                                              last=[viewlint_folder])}
            if device == "cpu":
                env["CUDA_VISIBLE_DEVICES"] = ""  # --device cpu: the files see no GPU, as on a CPU-only machine
            ran: dict[int, FileOutcome] = {}
            _run_children(job, Path(work), len(chosen), self.timeout, self.python, result, ran, env=env)
            outcomes.update({chosen[position]: outcome for position, outcome in ran.items()})
        finally:
            shutil.rmtree(work, ignore_errors=True)
            shutil.rmtree(scratch, ignore_errors=True)


def _rerun_on_the_host(run: _FileRunner, result: VerifyResult, outcomes: dict[int, FileOutcome],
                       devices: dict[str, Optional[str]]) -> None:
    """Files that raised on CUDA run again with factories on the host, as the program itself makes them.

    On CUDA every factory allocates on the GPU, which a program written for host tensors may not
    survive (``pin_memory=True``, a tensor made with ``device="cpu"`` meeting one made without). Such
    a file's measurements are those of a run as the program is written (its own ``.cuda()`` calls
    still reach the GPU), and a note says why.
    """
    failed = [i for i, outcome in outcomes.items() if outcome.status == "raised"]
    if not failed:
        return
    again = VerifyResult([])
    retried: dict[int, FileOutcome] = {}
    run(failed, "host", again, retried)
    for index in failed:
        outcome = retried.get(index)
        if outcome is None or outcome.status == "raised" and outcome.error == outcomes[index].error:
            continue  # it fails as written too: the file's own error stands
        path = run.files[index].path
        for site in run.files[index].sites:
            result.records.pop(site.site_id, None)
            if site.site_id in again.records:
                result.records[site.site_id] = again.records[site.site_id]
        result.notes.append(f"{path}: {outcomes[index].reason} with factories on the GPU; "
                            "verified again with factories on the host")
        outcomes[index] = outcome
        devices[path] = again.device


def _target(path: str, roots: Sequence[str]) -> ImportTarget:
    """How a flagged file runs: a notebook always as a script, from its folder (as Jupyter starts it)."""
    from viewlint.notebook import is_notebook
    from viewlint.verify.layout import ImportTarget, import_target
    if is_notebook(path):
        return ImportTarget(str(Path(path).resolve().parent))
    return import_target(path, roots)


NOTHING_RUNS = 'nothing runs this code; verify through your tests with verify --run "pytest …"'


def _module_source(path: str, strict: bool = False) -> str:
    """The Python a flagged file runs: its text, or a notebook's code cells joined into one module as
    they were linted (IPython escapes neutralised, row for row). When it cannot be read: "", or the
    error with ``strict``."""
    from viewlint.engine import decode_source
    from viewlint.notebook import Notebook, NotebookError, is_notebook
    try:
        data = Path(path).read_bytes()
        return Notebook.from_bytes(data).python_source if is_notebook(path) else decode_source(data)
    except (OSError, ValueError, NotebookError):
        if strict:
            raise
        return ""


def _unreached_reason(outcome: FileOutcome, timeout: float, runs_anything: bool = True) -> str:
    """Evidence for a site that never ran; a leading "!" makes it an `error` verdict.

    A file that only defines things (no ``__main__`` block, no top-level call) is library code:
    running it cannot reach its functions, so its sites are not reached, even when importing it
    failed (a dependency missing here); its tests are what exercise it.
    """
    if not runs_anything and outcome.status in ("ok", "raised"):
        return NOTHING_RUNS + (f" (importing it raised {outcome.error})" if outcome.status == "raised" else "")
    if outcome.status == "ok":
        return "the script ran to the end without reaching this line"
    if outcome.status == "exit":
        return f"!{outcome.reason} before reaching this line"
    if outcome.status == "timeout":
        return f"!timed out after {timeout:g} s before reaching this line"
    return f"!{outcome.reason}" + (" before reaching this line" if outcome.status == "raised" else "")


def _run_children(job: Path, work: Path, count: int, timeout: float, python: str, result: VerifyResult,
                  outcomes: dict[int, FileOutcome], *, env: dict[str, str]) -> None:
    """Run launchers until every file has an outcome: a file that hangs is charged to that file, and a
    fresh launcher starts at the next one. However this ends (Ctrl-C included), nothing a launcher
    started is left running."""
    start = 0
    attempt = 0
    while start < count:
        attempt += 1
        progress = work / f"progress-{attempt}.jsonl"
        log = work / f"child-{attempt}.log"
        try:
            progress.touch()
            with open(log, "wb") as log_file:
                child = subprocess.Popen(
                    [python, "-m", "viewlint.verify.launcher", str(job), str(progress), str(start)],
                    stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT, env=env, cwd=str(work),
                    start_new_session=True,  # its own process group: stopping it stops whatever the files started
                )
        except OSError as error:  # a file removed viewlint's own temporary folder
            for index in range(start, count):
                outcomes[index] = FileOutcome("error", f"no process could be started to run it ({error})")
            return
        try:
            start = _follow(child, progress, log, start, count, timeout, result, outcomes)
        except BaseException:
            _end_group(child, INTERRUPT_GRACE)
            raise
        _end_group(child, TERM_GRACE)  # anything a file left running in the background


def _follow(child: "subprocess.Popen[bytes]", progress: Path, log: Path, start: int, count: int, timeout: float,
            result: VerifyResult, outcomes: dict[int, FileOutcome]) -> int:
    """Read the launcher's progress until it ends; returns the index of the next file to run."""
    from viewlint.interrupts import raise_if_stopped
    from viewlint.verify.verdicts import merge_records
    current: Optional[int] = None
    deadline = time.monotonic() + STARTUP_TIMEOUT
    with open(progress, "r", encoding="utf-8") as stream:
        while True:
            raise_if_stopped()  # a stop whose exception a finaliser swallowed
            exited = child.poll() is not None
            buffer = stream.read()
            for event in _events(buffer, stream):
                kind = event["event"]
                if kind == "ready":
                    result.device = event["device"]
                    if event.get("note") and event["note"] not in result.notes:
                        result.notes.append(event["note"])
                elif kind == "fatal":
                    raise VerifyError(event["reason"])
                elif kind == "start":
                    current = event["file"]
                    deadline = time.monotonic() + timeout
                elif kind == "end":
                    outcomes[event["file"]] = FileOutcome(event["status"], event.get("reason", ""), event.get("error", ""))
                    for site, record in event.get("records", {}).items():
                        merge_records(result.records.setdefault(int(site), {}), record)
                    current = None
                    deadline = time.monotonic() + STARTUP_TIMEOUT  # between files: no user code runs
            if exited:
                if current is not None and current not in outcomes:
                    outcomes[current] = FileOutcome("died", describe_exit(child.returncode))
                    return current + 1
                if current is None and not outcomes and start == 0 and child.returncode != 0:
                    raise VerifyError(f"the verify child process failed to start: {_tail(log)}")
                done = [i for i in outcomes if i >= start]
                return max(done) + 1 if done else count
            if time.monotonic() > deadline:
                if current is None:
                    raise VerifyError(f"the verify child process stalled outside user code for {STARTUP_TIMEOUT:g} s: {_tail(log)}")
                _end_group(child, TERM_GRACE)
                for event in _events(stream.read(), stream):  # the partial measurements the file's process reported
                    if event["event"] == "end":
                        for site, record in event.get("records", {}).items():
                            merge_records(result.records.setdefault(int(site), {}), record)
                outcomes[current] = FileOutcome("timeout", f"timed out after {timeout:g} s")
                return current + 1
            time.sleep(POLL_INTERVAL)


_PARTIAL: dict[int, str] = {}


def _events(buffer: str, stream: IO[str]) -> list[dict[str, Any]]:
    """Complete JSON lines from the progress file; a half-written last line waits for the next read."""
    key = id(stream)
    text = _PARTIAL.pop(key, "") + buffer
    lines = text.split("\n")
    if lines and lines[-1]:
        _PARTIAL[key] = lines[-1]
    return [json.loads(line) for line in lines[:-1] if line.strip()]


def _tail(log: Path, lines: int = 3) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "no output"
    return " / ".join(text[-lines:]) or "no output"


def _end_group(child: "subprocess.Popen[bytes]", grace: float) -> None:
    """Stop the child's whole process group: SIGTERM (a file's process then reports what it measured),
    and SIGKILL after ``grace`` seconds for whatever is still running (a process that traps SIGTERM,
    one the child left behind). Quick when nothing is left; the child is reaped."""
    from viewlint.interrupts import signals_deferred
    try:
        if _group_alive(child.pid):
            _signal_group(child.pid, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline and _group_alive(child.pid):
                time.sleep(POLL_INTERVAL)
    finally:  # even when Ctrl-C cut the grace short
        with signals_deferred():
            if _group_alive(child.pid):
                _signal_group(child.pid, signal.SIGKILL)
            child.wait()


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(group: int) -> bool:
    """Whether a process of the group still runs. Zombies, which nothing can stop and which are gone
    once their parent (or init) reaps them, do not count where /proc tells them apart."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not os.path.isdir("/proc/self"):
        return True
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()  # state, ppid, pgrp, ... after the command name
        if len(fields) > 2 and fields[2] == str(group).encode() and fields[0] not in (b"Z", b"X"):
            return True
    return False


# ---------------------------------------------------------------------------------------------- verify --run
_BOOTSTRAP = '''"""Written by `viewlint verify --run`: install the import hook that instruments flagged modules."""
import os as _os
import sys as _sys


def _viewlint_install():
    folder = _os.path.dirname(_os.path.abspath(__file__))
    added = {package!r} not in _sys.path
    if added:
        _sys.path.append({package!r})  # at the end: never shadows the user's own modules
    try:
        from viewlint.verify import hook
        hook.install(_os.environ["VIEWLINT_VERIFY_PLAN"])
    finally:
        if added:
            _sys.path.remove({package!r})
    # Chain to a sitecustomize of the user's own, which this file shadows.
    if folder in _sys.path:
        index = _sys.path.index(folder)
        _sys.path.pop(index)
        own = _sys.modules.pop("sitecustomize", None)
        try:
            import sitecustomize  # noqa: F401
        except ImportError:
            pass
        finally:
            _sys.path.insert(index, folder)
            if own is not None and "sitecustomize" not in _sys.modules:
                _sys.modules["sitecustomize"] = own


_viewlint_install()
'''


def verify_command(diagnostics: Sequence[Diagnostic], command: str, *, timeout: Optional[float] = None,
                   device: str = "auto", python: Optional[str] = None, roots: Sequence[str] = ()) -> VerifyResult:
    """Run ``command`` (a shell command line, in the current folder) with the hook that instruments
    the flagged files however it runs them; judge the sites it reached.

    The command's PYTHONPATH gains the hook's folder first and the flagged package files' import
    roots (from the layout, or among ``roots``) last, so an installed copy still wins as it would
    without viewlint, and a package that is not installed can still be imported.
    """
    from viewlint.notebook import is_notebook
    from viewlint.verify.verdicts import judge, merge_records
    files, early = _instrument_all(diagnostics)
    result = VerifyResult(list(diagnostics))
    result.sites = {site.site_id: site for f in files for site in f.sites}
    targets = [_target(f.path, roots) for f in files]
    loaded: set[str] = set()
    elsewhere: dict[str, str] = {}
    if device == "cuda":
        _require_cuda(python or sys.executable)
    if files:
        work = tempfile.mkdtemp(prefix="viewlint-verify-")
        try:
            workdir = Path(work)
            bootstrap = workdir / "bootstrap"
            bootstrap.mkdir()
            package = str(Path(__file__).resolve().parent.parent.parent)
            (bootstrap / "sitecustomize.py").write_text(_BOOTSTRAP.format(package=package), encoding="utf-8")
            records_dir = workdir / "records"
            records_dir.mkdir()
            plan = {
                "records": str(records_dir),
                "device": device,
                "files": {
                    os.path.realpath(f.path): {
                        "source": f.source,
                        "sha256": hashlib.sha256(Path(f.path).read_bytes()).hexdigest(),
                        "sites": [s.site_id for s in f.sites],
                    }
                    for f in files
                },
                "modules": {t.module: os.path.realpath(f.path) for f, t in zip(files, targets) if t.module},
            }
            plan_path = workdir / "plan.json"
            plan_path.write_text(json.dumps(plan), encoding="utf-8")
            env = {**os.environ, "VIEWLINT_VERIFY_PLAN": str(plan_path)}
            env["PYTHONPATH"] = _python_path(first=[str(bootstrap)], last=_package_roots(targets))
            if device == "cpu":
                env["CUDA_VISIBLE_DEVICES"] = ""
            status, result.command_status = _run_command(command, env, timeout)
            result.notes.append(status)
            for record_file in sorted(records_dir.glob("*.json")):
                try:
                    data = json.loads(record_file.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                loaded.update(data.get("loaded", []))
                elsewhere.update(data.get("elsewhere", {}))
                for site, record in data.get("records", {}).items():
                    merge_records(result.records.setdefault(int(site), {}), record)
                if data.get("device"):
                    result.device = data["device"]
        finally:
            shutil.rmtree(work, ignore_errors=True)
    verdicts: dict[tuple[str, int], Verdict] = {}
    for f, target in zip(files, targets):
        ran = os.path.realpath(f.path) in loaded
        result.files[f.path] = FileOutcome("ok" if ran else "not-run", "" if ran else "never imported or run")
        if ran:
            reason = "the command never ran this line"
        elif is_notebook(f.path):
            reason = "verify --run does not instrument notebooks; check --verify runs their cells"
        elif target.module in elsewhere:
            reason = f"the command imported {target.module} from {elsewhere[target.module]}, not from {f.path}"
        else:
            reason = f"the command never imported or ran {f.path}"
        for site in f.sites:
            verdicts[_key(site.diagnostic)] = judge(site, result.records.get(site.site_id), device=result.device,
                                                    unreached=reason)
    verdicts.update(early)
    result.diagnostics = [d.with_verdict(verdicts[_key(d)]) if _key(d) in verdicts else d for d in diagnostics]
    return result


def _run_command(command: str, env: dict[str, str], timeout: Optional[float]) -> tuple[str, Optional[int]]:
    """Run the user's command (its output goes to our stderr: stdout is for findings). Returns a line
    saying how it ended, and the exit status `verify` passes on when it failed: its own, 128 + N
    when signal N killed it, ``COMMAND_TIMED_OUT`` when it ran past ``timeout``; None when it passed."""
    child = subprocess.Popen(command, shell=True, env=env, stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno(),
                             stderr=sys.stderr.fileno(), start_new_session=True)
    try:
        code = _wait_stoppable(child, timeout)
    except subprocess.TimeoutExpired:
        _end_group(child, TERM_GRACE)
        return f"`{command}` timed out after {timeout:g} s", COMMAND_TIMED_OUT
    except BaseException:  # Ctrl-C, SIGTERM: the command goes too
        _end_group(child, INTERRUPT_GRACE)
        raise
    _end_group(child, TERM_GRACE)  # what it left running in the background: its records are about to be read
    if code < 0:
        return f"`{command}` {describe_exit(code)[len('the interpreter '):]}", 128 - code
    return f"`{command}` exited with status {code}", code or None


def _wait_stoppable(child: "subprocess.Popen[bytes]", timeout: Optional[float]) -> int:
    """``child.wait(timeout)``, polled: a blocking wait hears a stop signal only when the kernel hands it
    to this thread, and Python drops the exception a handler raises inside a finaliser. Polling, the
    stop is raised within ``POLL_INTERVAL`` either way."""
    from viewlint.interrupts import raise_if_stopped
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        code = child.poll()
        if code is not None:
            return code
        raise_if_stopped()
        if deadline is not None and time.monotonic() > deadline:
            raise subprocess.TimeoutExpired(child.args, timeout or 0.0)
        time.sleep(POLL_INTERVAL)


def _require_cuda(python: str) -> None:
    """--device cuda without a usable GPU is a usage error, found before anything runs."""
    probe = subprocess.run([python, "-c", "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)"],
                           capture_output=True, text=True)
    if probe.returncode == 3:
        raise VerifyError("--device cuda: no CUDA device is available to torch (torch.cuda.is_available() is False); "
                          "use --device cpu or auto")
    if probe.returncode != 0:
        raise VerifyError(f"--device cuda: cannot import torch with {python}: {probe.stderr.strip().splitlines()[-1:]}")
