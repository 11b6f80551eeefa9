"""``concise`` (the default): ``path:row:col: CODE [*] message``, one finding a line
(``path:cell N:row:col: …`` in a notebook, as Ruff)."""

from __future__ import annotations

from typing import Sequence

from viewlint.diagnostics import Diagnostic
from viewlint.output._common import RenderContext, headline


def format_line(diagnostic: Diagnostic, ctx: RenderContext) -> str:
    """One concise line, without the trailing newline."""
    return f"{diagnostic.path}:{diagnostic.position}: {headline(diagnostic, ctx)}"


def render(diagnostics: Sequence[Diagnostic], ctx: RenderContext) -> str:
    """All findings, one line each; "" when there are none."""
    return "".join(format_line(d, ctx) + "\n" for d in diagnostics)
