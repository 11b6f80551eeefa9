"""`--verify`: turn static findings into measurements on real tensors.

The flow (DESIGN.md §6):

1. :mod:`viewlint.verify.instrument` rewrites each flagged file in memory with libcst, so that
   every flagged site calls a probe (``__viewlint__.retain(7, value)``) and nothing else
   changes: same lines, same statements, the user's file untouched on disk.
2. :mod:`viewlint.verify.runner` runs the instrumented code in child processes with a
   timeout: each file as ``__main__`` in a fresh process of its own (``check --verify``, forked
   by :mod:`viewlint.verify.launcher`; package modules under their package name, see
   :mod:`viewlint.verify.layout`), or the user's own command with a hook that
   instruments the flagged files however it runs them (``verify --run``, see
   :mod:`viewlint.verify.hook`). The probes
   (:mod:`viewlint.verify.probes`, the only module that imports torch) record raw
   measurements, which come back as JSON.
3. :mod:`viewlint.verify.verdicts` judges the measurements per rule and attaches a
   :class:`~viewlint.diagnostics.Verdict` to each finding.

This package's ``__init__`` imports nothing heavy: the child process imports it too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

if TYPE_CHECKING:
    from viewlint.diagnostics import Diagnostic
    from viewlint.verify.runner import VerifyResult

DEVICES = ("auto", "cpu", "cuda")
DEFAULT_TIMEOUT = 60.0

# The global name instrumented code calls its probes through; the runner puts it in the module's globals.
PROBE_MODULE = "__viewlint__"

# Rule families: which planner (instrument) and which judge (verdicts) handle which codes.
RETENTION = ("VL101", "VL102", "VL103")
LOST_WRITE = ("VL201", "VL202", "VL203")
COPIES = ("VL302", "VL303", "VL304", "VL305")
SYNCS = ("VL401", "VL402", "VL403", "VL404")


def verify_scripts(diagnostics: Sequence["Diagnostic"], *, timeout: float = DEFAULT_TIMEOUT, device: str = "auto",
                   python: Optional[str] = None, roots: Sequence[str] = (), cwd: Optional[str] = None
                   ) -> "VerifyResult":
    """Run every file with findings as ``__main__`` (package modules as ``python -m`` would; each
    in a fresh process and a fresh temporary folder, unless ``cwd`` is given) and attach verdicts."""
    from viewlint.verify.runner import verify_scripts as run

    return run(diagnostics, timeout=timeout, device=device, python=python, roots=roots, cwd=cwd)


def verify_command(diagnostics: Sequence["Diagnostic"], command: str, *, timeout: Optional[float] = None,
                   device: str = "auto", roots: Sequence[str] = ()) -> "VerifyResult":
    """Run the user's ``command`` with a hook that instruments the flagged files however it runs them."""
    from viewlint.verify.runner import verify_command as run

    return run(diagnostics, command, timeout=timeout, device=device, roots=roots)
