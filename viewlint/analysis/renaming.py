"""A callee's values in its own names and in its caller's.

One walk of a function serves every call that passes values of the same shape: the caller's names are taken out of
the arguments (`normalize`), and put back into what the walk returns (`rebase`, `as_called`). A call's recorded
arguments name, where one argument is a view of another, the callee's parameter (`related`).
"""

from __future__ import annotations

from typing import Any

from viewlint.analysis.returns import made_inside_base
from viewlint.analysis.values import Kind, Provenance, Value


def normalize(arguments: dict[str, Value]) -> tuple[dict[str, Value], dict[str, str]]:
    """Arguments with caller-side names taken out, so one walk serves every call with values of the
    same shape: a view argument becomes a view of the parameter itself; `bases` maps back."""
    normalized: dict[str, Value] = {}
    bases: dict[str, str] = {}
    for name, value in arguments.items():
        if value.kind is Kind.TENSOR:
            if value.provenance in (Provenance.VIEW, Provenance.MAYBE_VIEW) and value.base is not None:
                bases[name] = value.base
                value = value.with_(base=name, label=None, why=None)
            else:
                if value.label is not None:
                    bases[name] = value.label
                value = value.with_(label=None, why=None)
        elif value.is_container:
            if value.label is not None:
                bases[name] = value.label
                value = value.with_(label=None)
            inner: list[Value] = []
            for element in value.elements:
                if element.kind is Kind.TENSOR and element.base is not None:
                    bases.setdefault(name, element.base)
                    element = element.with_(base=name, label=None, why=None)
                inner.append(element)
            value = value.with_(elements=tuple(inner))
        normalized[name] = value
    return normalized, bases


def related(arguments: dict[str, Value], outlives: Any) -> dict[str, Value]:
    """One call's arguments with the caller's names of the objects it passes replaced by the callee's parameters,
    where another argument refers to them: `f(k=buffer[:, :n], qkv=buffer)` passes, as `k`, a view of what `f`
    calls `qkv`. Names of objects that outlive the caller (`self.…`, module-level) stay: they say so."""
    owners: dict[str, str] = {}
    for parameter, value in arguments.items():
        if value.kind is Kind.TENSOR and value.provenance is not Provenance.VIEW and value.label is not None \
                and (value.label.isidentifier() or made_inside_base(value.label)) and value.label not in owners:
            owners[value.label] = parameter
    if not owners:
        return arguments
    referred: set[str] = set()
    for value in arguments.values():
        _bases_in(value, referred)
    renames = {name: owners[name] for name in referred & owners.keys() if not outlives(name)}
    if not renames:
        return arguments
    return {parameter: _renamed(value, renames) for parameter, value in arguments.items()}


def _bases_in(value: Value, found: set[str], depth: int = 3) -> None:
    if value.kind is Kind.TENSOR:
        if value.base is not None:
            found.add(value.base)
    elif value.is_container and depth > 0:
        for element in value.elements:
            _bases_in(element, found, depth - 1)


def _renamed(value: Value, renames: dict[str, str], depth: int = 3) -> Value:
    if value.kind is Kind.TENSOR:
        changes: dict[str, Any] = {}
        if value.base in renames:
            changes["base"] = renames[value.base]  # type: ignore[index]
        if value.label in renames:
            changes["label"] = renames[value.label]  # type: ignore[index]
        return value.with_(**changes) if changes else value
    if value.is_container and depth > 0:
        return value.with_(elements=tuple(_renamed(e, renames, depth - 1) for e in value.elements))
    return value


def as_called(returned: Value, bases: dict[str, str], parameters: set[str]) -> Value:
    """What a function returned on its own walk, as one call's result: a view of a parameter is a view of what the
    call passes (`bases`), or, where the call passes nothing with a name, a tensor whose storage is not known."""

    def called(value: Value, depth: int = 3) -> Value:
        if value.kind is Kind.TENSOR:
            if value.base in parameters and value.base not in bases:
                value = value.with_(provenance=Provenance.UNKNOWN, base=None, origin=None, partial=False)
            if value.label in parameters and value.label not in bases:
                value = value.with_(label=None)
            return value
        if value.is_container and depth > 0:
            return value.with_(elements=tuple(called(e, depth - 1) for e in value.elements))
        return value

    return called(rebase(returned, bases))


def rebase(value: Value, bases: dict[str, str], depth: int = 3) -> Value:
    """A callee's value in the caller's names: a view of parameter `p` is a view of what was passed as `p`."""
    if value.kind is Kind.TENSOR:
        if value.base in bases:
            return value.with_(base=bases[value.base])  # type: ignore[index]
        if value.label in bases:
            return value.with_(label=bases[value.label])  # type: ignore[index]
        return value
    if value.is_container and depth > 0:
        return value.with_(elements=tuple(rebase(e, bases, depth - 1) for e in value.elements))
    return value
