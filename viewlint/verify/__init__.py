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

This package's ``__init__`` imports nothing (its submodules import it): the child process imports
it too. The entry points are :func:`viewlint.verify.runner.verify_scripts` and
:func:`viewlint.verify.runner.verify_command`.
"""

DEVICES = ("auto", "cpu", "cuda")

# The global name instrumented code calls its probes through; the runner puts it in the module's globals.
PROBE_MODULE = "__viewlint__"

# Rule families: which planner (instrument) and which judge (verdicts) handle which codes.
RETENTION = ("VL101", "VL102", "VL103")
LOST_WRITE = ("VL201", "VL202", "VL203")
COPIES = ("VL302", "VL303", "VL304", "VL305", "VL308", "VL309", "VL310", "VL311", "VL312", "VL313")
SYNCS = ("VL401", "VL402", "VL403", "VL404", "VL405")
