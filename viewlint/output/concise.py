"""``concise`` (the default): ``path:row:col: CODE [*] message``, one finding a line
(``path:cell N:row:col: …`` in a notebook, as Ruff)."""

from __future__ import annotations

from typing import Sequence

from viewlint.diagnostics import Diagnostic
from viewlint.output._common import RenderContext, headline, shows_fix_marker, verdict_suffix


def format_line(diagnostic: Diagnostic, ctx: RenderContext) -> str:
    """One concise line, without the trailing newline; coloured as Ruff's when ``ctx.colour``
    (bold path, cyan separators and `[*]`, bold red code)."""
    if not ctx.colour:
        return f"{diagnostic.path}:{diagnostic.position}: {headline(diagnostic, ctx)}"
    from viewlint.terminal import BOLD, BOLD_RED, CYAN, paint

    colon = paint(":", CYAN)
    marker = paint("[*]", CYAN) + " " if shows_fix_marker(diagnostic, ctx) else ""
    return (f"{paint(diagnostic.path, BOLD)}{colon}{diagnostic.position.replace(':', colon)}{colon} "
            f"{paint(diagnostic.code, BOLD_RED)} {marker}{diagnostic.message}{verdict_suffix(diagnostic)}")


def render(diagnostics: Sequence[Diagnostic], ctx: RenderContext) -> str:
    """All findings, one line each; "" when there are none."""
    return "".join(format_line(d, ctx) + "\n" for d in diagnostics)
