"""Rule discovery and selection.

Every module in ``viewlint.rules`` (the repository's top-level ``rules/`` folder)
that defines a ``Rule`` subclass with a code is a rule: adding a rule touches one
module and needs no registry edit.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Iterable, Optional

from viewlint.diagnostics import RESERVED_CODES
from viewlint.rule import Rule


class RegistryError(Exception):
    pass


@functools.lru_cache(maxsize=None)
def all_rules() -> dict[str, type[Rule]]:
    """Code -> rule class, for every rule shipped in ``viewlint.rules``, sorted by code."""
    import viewlint.rules as package

    found: dict[str, type[Rule]] = {}
    for module_info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package.__name__}.{module_info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and value.code:
                if value.__module__ != module.__name__:
                    continue  # imported from elsewhere, not defined here
                if value.code in found and found[value.code] is not value:
                    raise RegistryError(f"rule code {value.code} is defined twice")
                found[value.code] = value
    return dict(sorted(found.items()))


def known_code_or_prefix(selector: str) -> bool:
    """True when ``selector`` (a code, a prefix such as ``VL2``, or ``ALL``) names at least one rule."""
    upper = selector.upper()
    if upper == "ALL":
        return True
    if not upper:
        return False  # "" would otherwise be a prefix of every code
    codes = list(all_rules()) + list(RESERVED_CODES)
    return any(code.startswith(upper) for code in codes)


def _specificity(code: str, selectors: Iterable[str]) -> int:
    """Length of the longest selector matching ``code`` (ALL counts as 0), or -1 if none."""
    best = -1
    for selector in selectors:
        upper = selector.upper()
        if upper == "ALL":
            best = max(best, 0)
        elif code.startswith(upper):
            best = max(best, len(upper))
    return best


def resolve_selection(
    select: Optional[Iterable[str]],
    extend_select: Iterable[str] = (),
    ignore: Iterable[str] = (),
    extend_ignore: Iterable[str] = (),
) -> frozenset[str]:
    """The enabled codes, as Ruff resolves them: the more specific selector wins.

    Without ``select`` the default-on rules are selected. A prefix in ``select``
    turns on every rule it names, default-off ones too, as in Ruff.
    """
    selectors = list(select) if select is not None else None
    chosen = list(extend_select)
    ignored = list(ignore) + list(extend_ignore)
    enabled = set()
    for code, rule in all_rules().items():
        if selectors is None:
            on = _specificity(code, chosen)
            # Default rules count as selected by `ALL`: any ignore prefix beats them, as in Ruff.
            base_on = 0 if rule.default_enabled else -1
            on = max(on, base_on)
        else:
            on = _specificity(code, selectors + chosen)
        off = _specificity(code, ignored)
        if on >= 0 and on >= off:
            # On a tie (e.g. select VL2 and ignore VL2) ignore wins, as in Ruff.
            if off >= 0 and off == on:
                continue
            enabled.add(code)
    return frozenset(enabled)
