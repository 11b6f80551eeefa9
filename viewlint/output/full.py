"""``full``: the concise header, then the source with a gutter and carets, like Ruff's full output."""

from __future__ import annotations

from typing import Optional, Sequence

from viewlint.diagnostics import Diagnostic
from viewlint.output._common import RenderContext, split_lines
from viewlint.output.concise import format_line

# A finding spanning more rows than this shows its first rows and an ellipsis.
MAX_SNIPPET_ROWS = 8


def _caret_prefix(line: str, column: int) -> str:
    """Blank text as wide as ``line`` up to ``column``; tabs are kept so carets line up."""
    return "".join("\t" if ch == "\t" else " " for ch in line[: column - 1])


def _snippet(diagnostic: Diagnostic, lines: list[str]) -> list[str]:
    """The gutter-annotated source rows of the finding, carets under its first row."""
    start, end = diagnostic.start, diagnostic.end
    if not 1 <= start.row <= len(lines):
        return []
    last_row = min(max(end.row, start.row), len(lines))
    shown_last = min(last_row, start.row + MAX_SNIPPET_ROWS - 1)
    width = len(str(shown_last))
    blank = " " * width + " |"

    first = lines[start.row - 1]
    column = min(max(start.column, 1), len(first) + 1)
    if end.row == start.row:
        carets = max(1, min(end.column, len(first) + 1) - column)
    else:
        carets = max(1, len(first) - column + 1)  # the range runs on: underline to end of row

    out = [blank]
    for row in range(start.row, shown_last + 1):
        out.append(f"{row:>{width}} | {lines[row - 1]}".rstrip())
        if row == start.row:
            out.append(f"{blank} {_caret_prefix(first, column)}{'^' * carets} {diagnostic.code}")
    if shown_last < last_row:
        out.append(f"{blank} ...")
    out.append(blank)
    return out


def format_finding(diagnostic: Diagnostic, ctx: RenderContext, lines: Optional[list[str]]) -> list[str]:
    """Header, snippet (when the source is known), then help and verdict notes."""
    out = [format_line(diagnostic, ctx)]
    snippet = _snippet(diagnostic, lines) if lines is not None else []
    out.extend(snippet)
    width = max(len(str(min(diagnostic.end.row, diagnostic.start.row + MAX_SNIPPET_ROWS - 1))), 1)
    pad = " " * width
    if ctx.show_fix_hints and diagnostic.fix is not None and diagnostic.fix.message:
        out.append(f"{pad} = help: {diagnostic.fix.message}")
    if diagnostic.verdict is not None:
        evidence = f": {diagnostic.verdict.evidence}" if diagnostic.verdict.evidence else ""
        out.append(f"{pad} = verdict: {diagnostic.verdict.status}{evidence}")
    return out


def render(diagnostics: Sequence[Diagnostic], ctx: RenderContext) -> str:
    """Each finding as a block, blocks separated by a blank line; "" when there are none."""
    cache: dict[tuple[str, Optional[int]], Optional[list[str]]] = {}
    blocks = []
    for diagnostic in diagnostics:
        key = (diagnostic.path, diagnostic.cell)
        if key not in cache:
            cache[key] = _load(diagnostic.path, ctx) if diagnostic.cell is None else _load_cell(diagnostic.path, diagnostic.cell)
        blocks.append("\n".join(format_finding(diagnostic, ctx, cache[key])) + "\n")
    return "\n".join(blocks)


def _load_cell(path: str, cell: int) -> Optional[list[str]]:
    """The lines of a notebook's cell, as written in the notebook; None when it cannot be read."""
    from viewlint.notebook import Notebook, NotebookError

    try:
        with open(path, "rb") as handle:
            code_cell = Notebook.from_bytes(handle.read()).cell(cell)
    except (OSError, NotebookError):
        return None
    return split_lines(code_cell.source) if code_cell is not None else None


def _load(path: str, ctx: RenderContext) -> Optional[list[str]]:
    """The file's lines from ``sources``, else from disk; None when neither works."""
    lines = ctx.source_lines(path)
    if lines is not None:
        return lines
    from viewlint.engine import MAX_FILE_BYTES
    from viewlint.reading import read_regular_file

    try:  # never a named pipe or a device: a VL001 finding may be about one
        return split_lines(read_regular_file(path, MAX_FILE_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # an unreadable file (VL001) still gets its header line
