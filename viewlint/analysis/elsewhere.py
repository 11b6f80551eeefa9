"""Functions of other modules of the project that no annotation describes, walked where they are defined.

`self.c_fc = Conv1D(...)` with `from ...pytorch_utils import Conv1D`, or `sample = randn_tensor(shape, ...)`: what
the call gives is written in the other module, in a `forward` or a helper with no return annotation. The module that
defines it is indexed whole (with its `ast`, unlike the modules `Project` reads for their annotations alone), and
the function is walked once there, as this module's own functions are (`ModuleSummaries.run`), with what its
annotations and its module's callers say of its parameters. Only what holds wherever it is called comes back.

`Project` asks here through the `walk` it is built with (`walker(settings)`), for the walker and the prefilter
alike; it cannot import this module (the summaries import the project).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from viewlint.analysis.callgraph import FunctionKey
from viewlint.analysis.project import Project, Walk, unchanged, whole_index
from viewlint.analysis.returns import made_inside_base
from viewlint.analysis.summaries import ModuleSummaries
from viewlint.analysis.values import UNKNOWN, Kind, Provenance, Value, shape_of

if TYPE_CHECKING:
    from viewlint.settings import Settings

# path -> ((size, mtime), the module's summaries): few, as each holds the module's tree.
_MODULES: dict[str, tuple[tuple[int, int], Optional[ModuleSummaries]]] = {}
_KEPT = 8


def walker(settings: "Settings") -> Walk:
    """The `walk` a `Project` asks: `walk(path, owner, name)` -> (what it returns or None, the files that depends on)."""
    return lambda path, owner, name: walk_elsewhere(path, owner, name, settings)


def walk_elsewhere(path: str, owner: Optional[str], name: str, settings: "Settings") -> tuple[Optional[Value], dict[str, str]]:
    """What a function (`owner` None) or a method of a class of the module at `path` returns on one walk of its own
    there; and the modules (path -> content digest) what it found depends on. None where the walk says nothing."""
    summaries = _summaries_of(path, settings)
    if summaries is None:
        return None, {}
    if owner is not None:
        owner = summaries.callgraph.defining_class(owner, name)  # or a base class of that module
        if owner is None:
            return None, {}
    info = summaries.functions.get(FunctionKey(owner, name))
    if info is None or not info.returns_value or info.key in summaries.callgraph.recursive:
        return None, {}
    result = summaries.run(info, {})
    depends = dict(summaries.project.dependencies)  # what its walks read of the modules it imports in turn
    if not result.returned:
        return None, depends
    what = f"{owner}.{name}" if owner else name
    found = summaries.made_inside(info, summaries.as_annotated(info, result.returns))
    return _carried(found, f"returned by `{what}`, walked where it is defined"), depends


def _carried(value: Value, why: str, depth: int = 2) -> Optional[Value]:
    """What of a value another module's walk found holds for a caller here: tensors on every path (made there, or of
    unknown provenance: a view of what, and where it lives, is the caller's business), tuples of them, plain values;
    None for anything else."""
    if value.kind is Kind.TENSOR:
        if value.optional:
            return None  # a tensor on some of its paths only: not claimed here (its module's rules read the "may")
        made = value.provenance is Provenance.FRESH
        if value.provenance is Provenance.VIEW and made_inside_base(value.base):
            # A view of storage the function made itself (`x.view(size_out)` of an `addmm` result): a view there too,
            # reaching what it reached.
            return Value(kind=Kind.TENSOR, provenance=Provenance.VIEW, base=value.base, origin=value.origin,
                         partial=value.partial, contiguous=value.contiguous, why=why, **shape_of(value))
        return Value(kind=Kind.TENSOR, provenance=Provenance.FRESH if made else Provenance.UNKNOWN,
                     contiguous=value.contiguous if made else None, optional=value.optional, why=why,
                     has_base=value.has_base if made else False, **shape_of(value))
    if value.kind is Kind.WRAPPER and value.wrapper == "tuple" and value.elements and depth > 0:
        items = [_carried(e, why, depth - 1) for e in value.elements]
        return Value(kind=Kind.WRAPPER, wrapper="tuple", elements=tuple(i if i is not None else UNKNOWN for i in items))
    if value.kind in (Kind.INT, Kind.HOST) and value.wrapper is None:
        return value
    return None


def _summaries_of(path: str, settings: "Settings") -> Optional[ModuleSummaries]:
    stamp, found = unchanged(_MODULES, path)
    if found is not None:
        return found[1]
    if stamp is None:
        return None
    index = whole_index(path)  # as `Project` read it a moment ago, most often
    # Its own imports are read for their annotations only: one module away, no further.
    summaries = ModuleSummaries(index, cst.Module(body=[]), settings, project=Project(path)) if index is not None else None
    if len(_MODULES) >= _KEPT:
        _MODULES.pop(next(iter(_MODULES)))
    _MODULES[path] = (stamp, summaries)
    return summaries
