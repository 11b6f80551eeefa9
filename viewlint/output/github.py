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
    """One ``::warning``/``::error`` command: reserved codes (the input could not be linted) are
    errors, rule findings warnings, the same levels as in SARIF. A finding in a notebook cell is
    annotated on the notebook as a whole (cell rows are not lines of the .ipynb file); its
    message starts with ``cell N:row:col:``."""
    command = "error" if is_reserved(diagnostic) else "warning"
    place: tuple[tuple[str, object], ...] = ()
    if diagnostic.cell is None:
        place = (
            ("line", diagnostic.start.row),
            ("col", diagnostic.start.column),
            ("endLine", diagnostic.end.row),
            ("endColumn", diagnostic.end.column),
        )
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in (("file", diagnostic.path), *place, ("title", f"viewlint ({diagnostic.code})"))
    )
    message = f"{diagnostic.code} {diagnostic.message}{verdict_suffix(diagnostic)}"
    if diagnostic.cell is not None:
        message = f"{diagnostic.position}: {message}"
    return f"::{command} {props}::{escape_data(message)}"


def render(diagnostics: Sequence[Diagnostic], ctx: RenderContext) -> str:
    """One command per line; "" when there are no findings."""
    return "".join(valid_text(format_line(d)) + "\n" for d in diagnostics)
