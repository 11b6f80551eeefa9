"""Counts of findings per rule: `--statistics` (on stdout, instead of the findings) and the lines
under `Found N findings` in the summary (on stderr), with how many `--fix` would fix."""

from __future__ import annotations

import json
from collections import Counter
from typing import Sequence

from viewlint.diagnostics import Diagnostic

__all__ = ["per_rule_lines", "statistics_text"]


def statistics_text(diagnostics: Sequence[Diagnostic], output_format: str, unsafe_fixes: bool = False) -> str:
    """Findings per rule, as Ruff: `[*]` when `--fix` would fix all of them, `[~]` when some
    (safe fixes, and unsafe ones only under `--unsafe-fixes`); JSON `fixable_count` (and
    `fixable`: whether any is)."""
    from viewlint.fix import is_applicable

    counts = Counter(d.code for d in diagnostics)
    names = {d.code: d.name for d in diagnostics}
    fixable = Counter(d.code for d in diagnostics if is_applicable(d, unsafe_fixes))
    if output_format == "json":
        rows = [{"code": code, "name": names[code], "count": count, "fixable": fixable[code] > 0, "fixable_count": fixable[code]}
                for code, count in sorted(counts.items())]
        return json.dumps(rows, indent=2) + "\n"

    def marker(code: str) -> str:
        return "" if not fixable[code] else "[*] " if fixable[code] == counts[code] else "[~] "

    lines = [f"{count:>5}\t{code}\t{marker(code)}{names[code]}" for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "\n".join(lines) + ("\n" if lines else "")


def per_rule_lines(diagnostics: Sequence[Diagnostic], unsafe_fixes: bool) -> list[str]:
    """The lines under `Found N findings` when more than one rule fired: the count per rule (most
    first) and how many of each `--fix` would fix; none for a single rule."""
    from viewlint.fix import is_applicable

    counts = Counter(d.code for d in diagnostics)
    if len(counts) < 2:
        return []
    names = {d.code: d.name for d in diagnostics}
    fixable = Counter(d.code for d in diagnostics if is_applicable(d, unsafe_fixes))
    width = len(str(max(counts.values())))
    lines = [f"  {count:>{width}}  {code}  {names[code]}" + (f" ({fixable[code]} fixable)" if fixable[code] else "")
             for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return lines
