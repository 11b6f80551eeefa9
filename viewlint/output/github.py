"""``github``: GitHub Actions workflow commands that annotate the pull request diff."""

from __future__ import annotations

from typing import Sequence

from viewlint.diagnostics import Diagnostic
from viewlint.output._common import RenderContext, is_reserved, valid_text, verdict_suffix


def escape_data(value: str) -> str:
    """Escape a command's message: ``%``, CR and LF (GitHub's ``escapeData``)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """Escape a property value: as a message, plus ``:`` and ``,`` (GitHub's ``escapeProperty``)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def format_line(diagnostic: Diagnostic) -> str:
    """One ``::warning``/``::error`` command; reserved codes (bad input) are errors."""
    command = "error" if is_reserved(diagnostic) else "warning"
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in (
            ("file", diagnostic.path),
            ("line", diagnostic.start.row),
            ("col", diagnostic.start.column),
            ("endLine", diagnostic.end.row),
            ("endColumn", diagnostic.end.column),
            ("title", f"viewlint ({diagnostic.code})"),
        )
    )
    message = f"{diagnostic.code} {diagnostic.message}{verdict_suffix(diagnostic)}"
    return f"::{command} {props}::{escape_data(message)}"


def render(diagnostics: Sequence[Diagnostic], ctx: RenderContext) -> str:
    """One command per line; "" when there are no findings."""
    return "".join(valid_text(format_line(d)) + "\n" for d in diagnostics)
