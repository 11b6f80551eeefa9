"""An open notebook document as the language server sees it: its cells linted as one module.

An editor that supports LSP 3.17 notebook documents sends a notebook as an ordered list of cells,
each cell a text document with a URI of its own. The Python code cells are joined into one module
exactly as the cells of an .ipynb file are (``viewlint.notebook.JoinedCells``: boundaries between
cells, IPython escapes neutralised, other languages' cell magics left out), linted with the
configuration of the notebook's path, and each finding is moved into its cell.

Each linted cell is then served as a ``LintedDocument`` of its own whose text is the cell's Python
(escapes neutralised, every row and column where the cell has them), so the quick fixes and
``# noqa`` edits of text documents apply to cells unchanged. Fix-all is scoped to one cell: the
safe fixes are applied to the whole module, to a fixpoint, and the requested cell's change is
offered (an editor asks for each cell, so no edit is offered twice).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from viewlint.diagnostics import Diagnostic, Edit
from viewlint.lsp.documents import LintedDocument, LintOptions, fix_all_text, lint_document, replacement
from viewlint.notebook import JoinedCells, NotebookError


@dataclass(frozen=True)
class EditorCell:
    """One cell as the editor holds it, in notebook order."""

    uri: str
    text: str
    is_python: bool  # a code cell in Python; markdown cells and cells in other languages are not linted


@dataclass(frozen=True)
class LintedNotebook:
    """A notebook's cells, the module they make, and its findings located in their cells."""

    cells: tuple[EditorCell, ...]
    joined: JoinedCells
    module: LintedDocument  # the joined module as linted, findings in its rows
    located: tuple[Diagnostic, ...]  # the findings, rows counted in their cells

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(cell.text for cell in self.cells)

    def number(self, uri: str) -> Optional[int]:
        """The cell's number (from 1, among all the notebook's cells), or None when it is not one of them."""
        return next((number for number, cell in enumerate(self.cells, start=1) if cell.uri == uri), None)

    def diagnostics(self, uri: str) -> tuple[Diagnostic, ...]:
        """The findings in one cell, rows counted from the cell's first."""
        number = self.number(uri)
        return tuple(d for d in self.located if number is not None and d.cell == number)

    def cell_document(self, uri: str) -> Optional[LintedDocument]:
        """A linted cell as a document of its own; None for a cell that is not linted (markdown, another language)."""
        number = self.number(uri)
        code = None if number is None else self.joined.cell(number)
        if code is None:
            return None
        module = self.module
        return LintedDocument(code.python, module.display, module.relative, module.settings, self.diagnostics(uri),
                              module.unsafe_fixes)

    def fix_all_edit(self, uri: str) -> Optional[Edit]:
        """The edit to one cell that applying every safe fix to the notebook makes; None when it changes nothing."""
        number = self.number(uri)
        code = None if number is None else self.joined.cell(number)
        fixed = fix_all_text(self.module)
        if code is None or fixed is None:
            return None
        try:
            sources = self.joined.sources(fixed)
        except NotebookError:  # a fix crossed a cell boundary or touched an escape: offer nothing
            return None
        source = sources[self.joined.cells.index(code)]
        return None if source == code.source else replacement(code.source, source)


def lint_notebook(cells: list[EditorCell], path: Optional[Path], workspace_root: Path,
                  options: Optional[LintOptions] = None) -> LintedNotebook:
    """Lint a notebook's cells as ``viewlint check`` lints the .ipynb file at ``path``
    (None for an unsaved notebook)."""
    joined = JoinedCells([cell.text if cell.is_python else None for cell in cells])
    module = lint_document(joined.python_source, path, workspace_root, untitled="untitled.ipynb", options=options)
    located = (joined.locate(d) for d in module.diagnostics)
    # A finding outside every linted cell (a broken configuration in a notebook without one) has nowhere to go.
    kept = tuple(d for d in located if d.cell is not None and joined.cell(d.cell) is not None)
    return LintedNotebook(tuple(cells), joined, module, kept)
