"""Helpers shared by the output formats: the render context, fix markers, paths and levels."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional
from urllib.parse import quote

from viewlint.diagnostics import RESERVED_CODES, Applicability, Diagnostic
from viewlint.rule import Rule


@dataclass(frozen=True)
class RenderContext:
    """Everything a format needs besides the diagnostics themselves."""

    rules: Mapping[str, "type[Rule]"]
    sources: Mapping[str, str] = field(default_factory=dict)
    root: Path = field(default_factory=Path.cwd)
    show_fix_hints: bool = True
    unsafe_fixes: bool = False
    colour: bool = False  # ANSI colours in human-readable formats (a terminal)

    def source_lines(self, path: str) -> Optional[list[str]]:
        """The lines of ``path``'s text from ``sources``, or None when it was not given."""
        text = self.sources.get(path)
        if text is None:
            return None
        return split_lines(text)


def split_lines(text: str) -> list[str]:
    """Split on the line breaks the parser counts (\\r\\n, \\r, \\n) and nothing else."""
    # str.splitlines() also splits on \x0c, \x1c.. which would shift row numbers.
    lines: list[str] = []
    start = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\n" or ch == "\r":
            lines.append(text[start:i])
            if ch == "\r" and i + 1 < n and text[i + 1] == "\n":
                i += 1
            start = i + 1
        i += 1
    lines.append(text[start:])
    return lines


def is_reserved(diagnostic: Diagnostic) -> bool:
    """True for VL000-VL002: problems with the input itself, reported as errors."""
    return diagnostic.code in RESERVED_CODES


def shows_fix_marker(diagnostic: Diagnostic, ctx: RenderContext) -> bool:
    """Whether Ruff's ``[*]`` "fixable with --fix" marker applies to this finding."""
    if not ctx.show_fix_hints or not diagnostic.fixable or diagnostic.fix is None:
        return False
    applicability = diagnostic.fix.applicability
    if applicability == Applicability.SAFE:
        return True
    # Unsafe fixes are only applied by --fix when --unsafe-fixes is on, so only then advertise them.
    return applicability == Applicability.UNSAFE and ctx.unsafe_fixes


def verdict_suffix(diagnostic: Diagnostic) -> str:
    """`` [status: evidence]`` (or `` [status]``) when ``--verify`` measured the finding, else ""."""
    verdict = diagnostic.verdict
    if verdict is None:
        return ""
    if verdict.evidence:
        return f" [{verdict.status}: {verdict.evidence}]"
    return f" [{verdict.status}]"


def headline(diagnostic: Diagnostic, ctx: RenderContext) -> str:
    """``CODE [*] message [verdict]``: the part of a concise line after the position."""
    marker = "[*] " if shows_fix_marker(diagnostic, ctx) else ""
    return f"{diagnostic.code} {marker}{diagnostic.message}{verdict_suffix(diagnostic)}"


def relative_uri(path: str, root: Path) -> tuple[str, bool]:
    """(URI, relative?) for ``path``: POSIX and relative to ``root`` when inside it, else a file: URI."""
    absolute = Path(os.path.abspath(path))
    root_abs = Path(os.path.abspath(root))
    try:
        rel = absolute.relative_to(root_abs)
    except ValueError:
        return absolute.as_uri(), False
    # Percent-encode the name's bytes (os.fsencode restores those of a name that is not UTF-8)
    # so spaces, '#', '%' and undecodable bytes still make a valid URI reference.
    return quote(os.fsencode(rel.as_posix()), safe="/"), True


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` as valid Unicode: the undecodable bytes of a file name (lone surrogates) become U+FFFD,
    as Ruff shows such names; JSON, SARIF, JUnit and GitHub readers reject lone surrogates."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def valid_json(value: Any) -> Any:
    """A JSON-ready value with every string (keys too) passed through ``valid_text``."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_json(key): valid_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [valid_json(item) for item in value]
    return value


def root_uri(root: Path) -> str:
    """The file: URI of ``root`` with the trailing slash SARIF requires of a base URI."""
    uri = Path(os.path.abspath(root)).as_uri()
    return uri if uri.endswith("/") else uri + "/"
