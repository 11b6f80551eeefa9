"""Render diagnostics in one of viewlint's Ruff-compatible output formats.

One module per format; each has ``render(diagnostics, ctx) -> str``. The returned text
ends with a newline when it is not empty and is written to stdout as is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

from viewlint.diagnostics import Diagnostic
from viewlint.output import concise, full, github, json_format, junit, pylint, sarif
from viewlint.output._common import RenderContext
from viewlint.rule import Rule

FORMATS = ("concise", "full", "json", "json-lines", "sarif", "github", "pylint", "junit")

_RENDERERS: dict[str, Callable[[Sequence[Diagnostic], RenderContext], str]] = {
    "concise": concise.render,
    "full": full.render,
    "json": json_format.render,
    "json-lines": json_format.render_lines,
    "sarif": sarif.render,
    "github": github.render,
    "pylint": pylint.render,
    "junit": junit.render,
}

__all__ = ["FORMATS", "RenderContext", "render"]


def render(
    fmt: str,
    diagnostics: Sequence[Diagnostic],
    *,
    rules: Mapping[str, "type[Rule]"],
    sources: Optional[Mapping[str, str]] = None,
    root: Optional[Path] = None,
    show_fix_hints: bool = True,
    unsafe_fixes: bool = False,
    colour: bool = False,
) -> str:
    """Render already-sorted ``diagnostics`` in format ``fmt`` (one of ``FORMATS``).

    ``rules`` maps code -> rule class (SARIF lists them all); ``sources`` maps a path to its
    text for ``full``; ``root`` is what SARIF URIs are relative to (default: the cwd).
    ``show_fix_hints`` controls the ``[*]`` marker and ``full``'s ``= help:`` line;
    ``unsafe_fixes`` makes unsafe fixes carry ``[*]`` too, as they do under ``--unsafe-fixes``.
    ``colour`` colours the ``concise`` and ``full`` headlines with ANSI codes, as Ruff does on a terminal.
    """
    try:
        renderer = _RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown output format {fmt!r}; expected one of: {', '.join(FORMATS)}") from None
    ctx = RenderContext(
        rules=rules,
        sources=sources if sources is not None else {},
        root=root if root is not None else Path.cwd(),
        show_fix_hints=show_fix_hints,
        unsafe_fixes=unsafe_fixes,
        colour=colour,
    )
    return renderer(diagnostics, ctx)
