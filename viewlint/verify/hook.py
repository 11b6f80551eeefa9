"""The hook of `viewlint verify --run`: instrument the flagged files however the user's command runs them.

`viewlint verify --run CMD PATHS` writes a plan (instrumented source per flagged file) and puts a
generated ``sitecustomize.py`` first on the command's PYTHONPATH; every Python process the
command starts runs it, which calls :func:`install`. A flagged file is instrumented when it is:

- imported (``import pkg.mod`` in a test, a worker, a plugin): a meta-path finder hands the
  flagged module, found by its real path, to a loader that runs the instrumented source;
- run as ``python -m pkg.mod``: runpy asks that same loader for the module's code;
- run as ``python path/to/file.py``: an audit hook catches the interpreter's ``cpython.run_file``
  event (after ``sys.path[0]`` and ``sys.argv`` are set, before the file is read), runs the
  instrumented source as ``__main__`` instead, and ends the run with its exit status.

The instrumented source is compiled with the real filename, so tracebacks and coverage still
point at the user's lines; instrumented code finds its probes as the builtin ``__viewlint__``.
A file changed since it was linted is left alone.

At exit, each process that ran a flagged file writes ``records-<pid>.json``: the files it
instrumented and the probes' records. Nothing here imports torch until an instrumented file
actually runs.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.abc
import importlib.machinery
import json
import os
import sys
from types import CodeType, ModuleType
from typing import Any, Optional, Sequence

PROBE_MODULE = "__viewlint__"  # same name as viewlint.verify.instrument.PROBE_MODULE (not imported: keep this light)

_PLAN: dict[str, Any] = {}
_LOADED: list[str] = []
# Flagged modules the command imported from another file: module name -> the file it ran.
_ELSEWHERE: dict[str, str] = {}


class _InstrumentingLoader(importlib.abc.Loader):
    """Executes the instrumented source instead of the file's own; delegates everything else."""

    def __init__(self, original: Any, path: str, source: str) -> None:
        self.original = original
        self.path = path
        self.source = source

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Optional[ModuleType]:
        return None

    def get_code(self, fullname: str) -> CodeType:
        """The instrumented code; runpy (``python -m``) runs it as ``__main__``, :meth:`exec_module` as a module."""
        filename = getattr(self.original, "path", None) or self.path  # the path the import system found
        return _instrumented_code(self.path, self.source, filename)

    def exec_module(self, module: ModuleType) -> None:
        exec(self.get_code(module.__name__), module.__dict__)

    def get_source(self, fullname: str) -> Optional[str]:
        return self.original.get_source(fullname) if hasattr(self.original, "get_source") else None

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, get_filename, ...
        return getattr(self.original, name)


def _instrumented_code(path: str, source: str, filename: str) -> CodeType:
    """Compile a flagged file's instrumented source, with the probes reachable and the file counted as run."""
    import builtins

    from viewlint.verify import probes  # imports torch: the code being run uses it anyway

    setattr(builtins, PROBE_MODULE, probes)
    if "compile" in source:
        probes.hide_from_compiler()
    if path not in _LOADED:
        _LOADED.append(path)
    return compile(source, filename, "exec", dont_inherit=True)


class _MainScript:
    """Audit hook for ``python file.py``: runs the flagged file's instrumented source as ``__main__``
    when the interpreter is about to run the file itself, then ends the run with its exit status."""

    __cantrace__ = True  # debuggers and coverage trace the script as usual

    def __init__(self, path: str, entry: dict[str, Any]) -> None:
        self.path = path
        self.entry = entry
        self.started = False

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if event != "cpython.run_file" or self.started:
            return
        self.started = True
        filename = os.fsdecode(args[0])
        if os.path.realpath(filename) != self.path or not _unchanged(self.path, self.entry["sha256"]):
            return
        _run_as_main(filename, self.path, self.entry["source"])


def _run_as_main(filename: str, path: str, source: str) -> None:
    """Run the instrumented script in the real ``__main__``; raises SystemExit, which the interpreter
    turns into its exit status (then runs atexit, joins threads and flushes, as after any script)."""
    main = sys.modules["__main__"]
    main.__dict__.update(__file__=filename, __cached__=None,
                         __loader__=importlib.machinery.SourceFileLoader("__main__", filename))
    code = _instrumented_code(path, source, filename)
    try:
        exec(code, main.__dict__)
    except SystemExit:
        raise
    except BaseException as error:  # noqa: B036 - printed as the interpreter would, without our frames
        trace = error.__traceback__
        while trace is not None and trace.tb_frame.f_code.co_filename == __file__:
            trace = trace.tb_next
        sys.excepthook(type(error), error.with_traceback(trace), trace)  # the default hook prints error.__traceback__
        raise SystemExit(1) from None
    raise SystemExit(0)


class _Finder(importlib.abc.MetaPathFinder):
    """Asks the other finders where a module is; takes over when it is a flagged file."""

    def find_spec(self, fullname: str, path: Optional[Sequence[str]], target: Optional[ModuleType] = None
                  ) -> Optional[importlib.machinery.ModuleSpec]:
        finders = sys.meta_path
        after = finders[finders.index(self) + 1:] if self in finders else finders
        for finder in after:  # those before us have already said no
            if not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.origin is None or not spec.has_location:
            return None
        real = os.path.realpath(spec.origin)
        entry = _PLAN.get("files", {}).get(real)
        if entry is None:
            flagged = _PLAN.get("modules", {}).get(fullname)
            if flagged is not None and flagged != real:  # e.g. an installed copy instead of the linted source
                _ELSEWHERE[fullname] = real
            return None
        if not _unchanged(real, entry["sha256"]):
            return None
        spec.loader = _InstrumentingLoader(spec.loader, real, entry["source"])
        return spec


def _unchanged(path: str, digest: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest() == digest
    except OSError:
        return False


def _write_records() -> None:
    if not _LOADED and not _ELSEWHERE:
        return
    probes = sys.modules.get("viewlint.verify.probes")
    if probes is not None:
        probes.settle()  # what kept snapshots hold at the end
    records = dict(getattr(probes, "RECORDS", {})) if probes is not None else {}
    device = None
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            device = str(torch.get_default_device())
        except Exception:
            device = None
    data = {"pid": os.getpid(), "loaded": _LOADED, "elsewhere": _ELSEWHERE, "records": records, "device": device}
    target = os.path.join(_PLAN["records"], f"records-{os.getpid()}.json")
    with open(target + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(target + ".tmp", target)


def install(plan_path: str) -> None:
    """Read the plan, put the finder first on ``sys.meta_path``, and watch for a flagged script; once per process."""
    if _PLAN:
        return
    try:
        with open(plan_path, encoding="utf-8") as handle:
            _PLAN.update(json.load(handle))
    except (OSError, ValueError):
        return  # the plan went away (a process outliving viewlint): run uninstrumented
    if _PLAN.get("device") == "cuda":
        import torch

        from viewlint.verify import probes

        torch.set_default_device("cuda")
        probes.enable_sync_debug()
    sys.meta_path.insert(0, _Finder())
    atexit.register(_write_records)
    script = _script_argument()
    if script is not None and script in _PLAN.get("files", {}):
        sys.addaudithook(_MainScript(script, _PLAN["files"][script]))


def _script_argument() -> Optional[str]:
    """The real path of the file this interpreter was started to run (``python file.py``), if any.

    While site runs, ``sys.argv[0]`` is the script as given, or ``-c``/``-m``/empty for the other forms.
    """
    argv: list[str] = getattr(sys, "argv", [])
    if not argv or argv[0] in ("", "-", "-c", "-m"):
        return None
    return os.path.realpath(argv[0])
