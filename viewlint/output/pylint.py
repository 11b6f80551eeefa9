"""``pylint``: ``path:row: [CODE] message``, as Ruff's pylint format (``path:cell N:row:`` in a notebook)."""

from __future__ import annotations

from typing import Sequence

from viewlint.diagnostics import Diagnostic
from viewlint.output._common import RenderContext, verdict_suffix


def render(diagnostics: Sequence[Diagnostic], ctx: RenderContext) -> str:
    """One line per finding; "" when there are none."""
    return "".join(
        f"{d.path}:{d.start.row if d.cell is None else f'cell {d.cell}:{d.start.row}'}: [{d.code}] {d.message}{verdict_suffix(d)}\n"
        for d in diagnostics
    )
