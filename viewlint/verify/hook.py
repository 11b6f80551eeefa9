"""The import hook of `viewlint verify --run`: instrument flagged modules as the user's command imports them.

`viewlint verify --run CMD PATHS` writes a plan (instrumented source per flagged file) and puts a
generated ``sitecustomize.py`` first on the command's PYTHONPATH; every Python process the
command starts runs it, which calls :func:`install`. A meta-path finder then hands each
flagged module, found by its real path, to a loader that executes the instrumented source
(compiled with the real filename, so tracebacks and coverage still point at the user's lines)
with the probes in its globals. A file changed since it was linted is left alone.

At exit, each process that loaded a flagged module writes ``records-<pid>.json``: the files it
instrumented and the probes' records. Nothing here imports torch until an instrumented
module actually runs.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.abc
import importlib.machinery
import json
import os
import sys
from types import ModuleType
from typing import Any, Optional, Sequence

PROBE_MODULE = "__viewlint__"  # same name as viewlint.verify.instrument.PROBE_MODULE (not imported: keep this light)

_PLAN: dict[str, Any] = {}
_LOADED: list[str] = []


class _InstrumentingLoader(importlib.abc.Loader):
    """Executes the instrumented source instead of the file's own; delegates everything else."""

    def __init__(self, original: Any, path: str, source: str) -> None:
        self.original = original
        self.path = path
        self.source = source

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Optional[ModuleType]:
        return None

    def exec_module(self, module: ModuleType) -> None:
        from viewlint.verify import probes  # imports torch: the module being run uses it anyway

        module.__dict__[PROBE_MODULE] = probes
        if "compile" in self.source:
            probes.hide_from_compiler()
        if self.path not in _LOADED:
            _LOADED.append(self.path)
        code = compile(self.source, module.__spec__.origin if module.__spec__ else self.path, "exec", dont_inherit=True)
        exec(code, module.__dict__)

    def get_source(self, fullname: str) -> Optional[str]:
        return self.original.get_source(fullname) if hasattr(self.original, "get_source") else None

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, get_filename, ...
        return getattr(self.original, name)


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
        if entry is None or not _unchanged(real, entry["sha256"]):
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
    if not _LOADED:
        return
    probes = sys.modules.get("viewlint.verify.probes")
    records = dict(getattr(probes, "RECORDS", {})) if probes is not None else {}
    device = None
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            device = str(torch.get_default_device())
        except Exception:
            device = None
    data = {"pid": os.getpid(), "loaded": _LOADED, "records": records, "device": device}
    target = os.path.join(_PLAN["records"], f"records-{os.getpid()}.json")
    with open(target + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(target + ".tmp", target)


def install(plan_path: str) -> None:
    """Read the plan and put the finder first on ``sys.meta_path``; once per process."""
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
