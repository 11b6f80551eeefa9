"""Jupyter notebooks: their code cells as one Python module, findings per cell, fixes written back.

As in Ruff, the code cells of a notebook are linted together as one module (a name defined in
cell 1 is known in cell 5), and each finding is reported in its cell: ``nb.ipynb:cell 3:2:5``.
Cells are numbered from 1 among all the notebook's cells, as editors number them.

The module (`Notebook.python_source`) keeps every row and column of every cell. `JoinedCells`
builds it from the cells' texts, for a notebook file and for the cells an editor sends the
language server alike:

* between two cells stands one comment line, the cell boundary;
* an IPython escape that is not Python — a line magic ``%time f(x)``, a shell escape ``!ls`` or
  ``files = !ls``, a help request ``model?`` — becomes ``pass`` (or ``files = None``) followed by a
  placeholder comment on the same row; the rows of a backslash-continued escape become comments;
* a cell magic that times or captures Python (``%%time``, ``%%timeit``, ``%%capture``, ``%%prun``,
  ``%%debug``) keeps its body; a cell in another language (``%%bash``, ``%%html``…) is left out;
* a cell whose first line of code is indented is dedented as IPython runs it (its ``leading_indent``
  step): that indentation is taken off every line that starts with it. Findings and fixes in such a
  cell are moved back to its own columns, and a fixed cell is written back indented.

`Notebook.with_sources` takes that module back after fixes: it splits it at the boundaries,
restores the escapes, and changes the ``source`` of the cells whose text changed, nothing else.
`Notebook.to_bytes` writes the JSON as it was written (indentation, key order, ASCII escapes,
line endings, final newline), so a notebook written by Jupyter or ``nbformat`` changes only in
the fixed cells.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from viewlint.diagnostics import Diagnostic, Location

__all__ = ["NOTEBOOK_SUFFIX", "CodeCell", "JoinedCells", "Notebook", "NotebookError", "is_notebook"]

NOTEBOOK_SUFFIX = ".ipynb"

# Cell magics whose body is Python run by IPython itself: the body is linted, the magic line is not.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})

_UTF8_BOM = b"\xef\xbb\xbf"
# A logical line that starts with one of these is an IPython escape, never Python.
_ESCAPE_STARTS = ("%", "!", "?", "/", ";", ",")
# `model?`, `torch.nn.Linear??`: a help request.
_HELP = re.compile(r"^\s*[A-Za-z_][\w.]*\?{1,2}\s*$")
# `files = !ls`, `t = %timeit -o f()`: the value of an escape assigned to names.
_ASSIGNED_ESCAPE = re.compile(r"^(\s*[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*)[%!]")
_CELL_MAGIC = re.compile(r"^%%([A-Za-z_][\w]*)")


class NotebookError(Exception):
    """A file that cannot be read as a Jupyter notebook (nbformat 4); the message says why."""


def is_notebook(path: Union[str, Path]) -> bool:
    """Whether a path names a Jupyter notebook (by its suffix, as Ruff decides)."""
    return str(path).lower().endswith(NOTEBOOK_SUFFIX)


@dataclass(frozen=True)
class CodeCell:
    """A code cell that is part of the linted module."""

    number: int  # 1-based position among all the notebook's cells
    source: str  # the cell's text, as in the notebook
    python: str  # the text linted: escapes replaced, same rows and columns
    first_row: int  # the row of `Notebook.python_source` where the cell starts
    rows: int
    indent: str = ""  # the indentation IPython takes off the cell's lines (see `_leading_indent`)
    dedented: frozenset[int] = frozenset()  # the rows of the cell (from 1) it was taken off


@dataclass(frozen=True)
class _Style:
    """How the notebook's JSON was written, to write it back the same way."""

    indent: Optional[str]
    separators: tuple[str, str]
    ensure_ascii: bool
    newline: str
    tail: str  # whitespace after the closing brace
    bom: bool


def _lines(text: str) -> list[str]:
    """Physical lines with their endings (\\r\\n, \\r, \\n), as the parser counts them."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def _row_count(text: str) -> int:
    return len(re.findall(r"\r\n|\r|\n", text)) + 1


def _split_ending(line: str) -> tuple[str, str]:
    body = line.rstrip("\r\n")
    return body, line[len(body):]


class _Escapes:
    """Replaces IPython escapes with placeholders and remembers the originals to restore them."""

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self.originals: list[str] = []  # placeholder number -> the original line (without its ending)
        self.placeholders: list[str] = []

    def _replace(self, original: str, placeholder_code: str) -> str:
        number = len(self.originals)
        placeholder = f"{placeholder_code}# {self.marker} {number}"
        self.originals.append(original)
        self.placeholders.append(placeholder)
        return placeholder

    def neutralise(self, text: str) -> str:
        """The cell's text with its escapes replaced, row for row."""
        lines = _lines(text)
        out: list[str] = []
        quote: Optional[str] = None  # the open triple quote
        depth = 0  # open brackets
        continued = False  # the previous line ended in a backslash
        escape_continues = False  # inside a backslash-continued escape
        for index, line in enumerate(lines):
            body, ending = _split_ending(line)
            if escape_continues:
                out.append(self._replace(body, "") + ending)
                escape_continues = body.endswith("\\")
                continue
            at_start = quote is None and depth == 0 and not continued
            stripped = body.lstrip()
            indent = body[: len(body) - len(stripped)]
            magic = _CELL_MAGIC.match(body) if index == 0 else None
            if at_start and magic is not None:
                out.append(self._replace(body, "") + ending)
                continue
            assigned = _ASSIGNED_ESCAPE.match(body) if at_start else None
            if at_start and (stripped.startswith(_ESCAPE_STARTS) or _HELP.match(body) or assigned):
                code = f"{assigned.group(1).rstrip()} None  " if assigned else f"{indent}pass  "
                out.append(self._replace(body, code) + ending)
                escape_continues = body.endswith("\\")
                continue
            quote, depth, continued = _scan(body, quote, depth)
            out.append(line)
        return "".join(out)

    def restore(self, text: str) -> str:
        """Undo `neutralise` on a (fixed) cell; NotebookError when a fix touched a placeholder."""
        pattern = re.compile(rf"# {re.escape(self.marker)} (\d+)$")
        out = []
        for line in _lines(text):
            body, ending = _split_ending(line)
            found = pattern.search(body)
            if found is None:
                out.append(line)
                continue
            number = int(found.group(1))
            if number >= len(self.placeholders) or body != self.placeholders[number]:
                raise NotebookError("a fix changed the line of an IPython magic or shell escape")
            out.append(self.originals[number] + ending)
        return "".join(out)


def _scan(line: str, quote: Optional[str], depth: int) -> tuple[Optional[str], int, bool]:
    """Carry the tokenizer's state over one line: an open triple quote, the bracket depth, and
    whether the line ends in a continuation backslash. Enough to tell where logical lines start."""
    i, n = 0, len(line)
    while i < n:
        if quote is not None:
            if line[i] == "\\":
                i += 2
            elif line.startswith(quote, i):
                i += 3
                quote = None
            else:
                i += 1
            continue
        char = line[i]
        if char == "#":
            return quote, depth, False
        if char in "\"'":
            if line.startswith(char * 3, i):
                quote = char * 3
                i += 3
                continue
            i += 1
            while i < n and line[i] != char:
                i += 2 if line[i] == "\\" else 1
            i += 1
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        i += 1
    return quote, depth, quote is None and line.endswith("\\")


def _leading_indent(text: str) -> str:
    """The indentation of a cell's first line that is not blank: IPython takes it off each line that starts
    with it before it runs the cell (an indented cell, pasted from inside a function, runs)."""
    for line in _lines(text):
        if line.strip():
            return line[: len(line) - len(line.lstrip(" \t"))]
    return ""


def _dedent(text: str, indent: str) -> tuple[str, frozenset[int]]:
    """`text` with `indent` taken off each line that starts with it, and the rows (from 1) it was taken off."""
    lines = _lines(text)
    rows = frozenset(row for row, line in enumerate(lines, start=1) if line.startswith(indent))
    return "".join(line[len(indent):] if row in rows else line for row, line in enumerate(lines, start=1)), rows


def _reindent(text: str, cell: CodeCell) -> str:
    """Undo `_dedent` on a (fixed) cell: the rows that lost the indentation get it back. A fix that changed
    the number of rows leaves no row map: every line that is not blank gets it back."""
    lines = _lines(text)
    if _row_count(text) == cell.rows:
        return "".join(cell.indent + line if row in cell.dedented else line for row, line in enumerate(lines, start=1))
    return "".join(cell.indent + line if line.strip() else line for line in lines)


def _unused_marker(base: str, texts: Sequence[str]) -> str:
    """`base`, or `base-N`: a word that occurs in none of the texts."""
    marker, number = base, 0
    while any(marker in text for text in texts):
        number += 1
        marker = f"{base}-{number}"
    return marker


def _source_text(cell: dict[str, Any], number: int) -> str:
    source = cell.get("source")
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    raise NotebookError(f"cell {number}: \"source\" must be a string or a list of strings")


class JoinedCells:
    """A notebook's code cells joined into one Python module, row for row, and the way back.

    Built from the cells' texts in notebook order, ``None`` standing for a cell that is not Python
    code (markdown, raw): the cells of an .ipynb file (`Notebook`) and the cells an editor sends
    the language server are joined by this one class.
    """

    def __init__(self, texts: Sequence[Optional[str]]) -> None:
        self.escapes = _Escapes(_unused_marker("viewlint-ipython", [text or "" for text in texts]))
        self.boundary = _unused_marker("viewlint-cell", [text or "" for text in texts])
        self.cells: list[CodeCell] = []
        self.code_cell_count = 0
        pieces: list[str] = []
        row = 1
        for number, text in enumerate(texts, start=1):
            if text is None:
                continue
            self.code_cell_count += 1
            indent = _leading_indent(text)
            dedented_text, dedented = _dedent(text, indent) if indent else (text, frozenset())
            magic = _CELL_MAGIC.match(dedented_text)
            if magic is not None and magic.group(1) not in PYTHON_CELL_MAGICS:
                continue  # another language (%%bash, %%html, %%writefile…)
            python = self.escapes.neutralise(dedented_text)
            if pieces:
                pieces.append(f"# {self.boundary} {number}\n")
                row += 1
            code_cell = CodeCell(number, text, python, row, _row_count(python), indent, dedented)
            self.cells.append(code_cell)
            pieces.append(python + "\n")
            row += code_cell.rows
        self.python_source = "".join(pieces)
        self._first_rows = [cell.first_row for cell in self.cells]

    def cell_of(self, row: int) -> tuple[int, int]:
        """(cell number, row in the cell) of a row of `python_source`."""
        if not self.cells:
            return 1, row
        cell = self.cells[max(bisect.bisect_right(self._first_rows, row) - 1, 0)]
        return cell.number, max(row - cell.first_row + 1, 1)

    def python_row(self, cell_number: int, row: int) -> int:
        """The row of `python_source` of a row of a cell (the inverse of `cell_of`)."""
        for cell in self.cells:
            if cell.number == cell_number:
                return cell.first_row + row - 1
        raise KeyError(f"cell {cell_number} is not a linted code cell")

    def cell(self, number: int) -> Optional[CodeCell]:
        return next((cell for cell in self.cells if cell.number == number), None)

    def locate(self, diagnostic: Diagnostic) -> Diagnostic:
        """A finding on `python_source` as a finding in its cell (rows counted from the cell's first)."""
        number, _ = self.cell_of(diagnostic.start.row)
        cell = self.cell(number)
        if cell is None:
            return replace(diagnostic, cell=number)
        shift = cell.first_row - 1

        def row_in_cell(row: int) -> int:
            return max(row - shift, 1)

        def move(location: Location) -> Location:
            row = row_in_cell(location.row)
            return Location(row, location.column + (len(cell.indent) if row in cell.dedented else 0))

        return diagnostic.moved(row_in_cell, move, cell=number)

    def sources(self, python_source: str) -> list[str]:
        """The code cells' texts (escapes restored, in the order of `cells`) of a fixed `python_source`;
        NotebookError when a fix removed a boundary or touched an escape."""
        texts = []
        rest = python_source
        for cell in self.cells[1:]:
            separator = f"\n# {self.boundary} {cell.number}\n"
            at = rest.find(separator)
            if at < 0:
                raise NotebookError(f"a fix removed the boundary before cell {cell.number}")
            texts.append(rest[:at])
            rest = rest[at + len(separator):]
        if not rest.endswith("\n"):
            raise NotebookError("a fix removed the end of the last cell")
        texts.append(rest[:-1])
        restored = [self.escapes.restore(text) for text in texts]
        return [_reindent(text, cell) if cell.indent else text for text, cell in zip(restored, self.cells)]


class Notebook:
    """A parsed notebook: its code cells as one module, and the JSON to write it back."""

    def __init__(self, raw: dict[str, Any], data: bytes, style: _Style) -> None:
        self._raw = raw
        self._data = data
        self._style = style
        texts: list[Optional[str]] = []
        for number, cell in enumerate(raw["cells"], start=1):
            if not isinstance(cell, dict):
                raise NotebookError(f"cell {number}: must be an object, got {type(cell).__name__}")
            if not isinstance(cell.get("cell_type"), str):
                raise NotebookError(f"cell {number}: no \"cell_type\"")
            texts.append(_source_text(cell, number) if cell["cell_type"] == "code" else None)
        self.joined = JoinedCells(texts)
        self.cells = self.joined.cells
        self.code_cell_count = self.joined.code_cell_count
        self.python_source = self.joined.python_source

    # ------------------------------------------------------------------------ reading

    @classmethod
    def from_bytes(cls, data: bytes) -> "Notebook":
        """Parse a notebook file's bytes; NotebookError says what is wrong with a malformed one."""
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise NotebookError(f"not UTF-8 text (byte {error.start})") from None
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as error:
            raise NotebookError(f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})") from None
        except RecursionError:
            raise NotebookError("not valid JSON: nested too deeply") from None
        if not isinstance(raw, dict):
            raise NotebookError(f"the top level must be a JSON object, got {type(raw).__name__}")
        version = raw.get("nbformat")
        if "cells" not in raw:
            if "worksheets" in raw or (isinstance(version, int) and version < 4):
                raise NotebookError(f"nbformat {version} is not supported: convert it with `jupyter nbconvert --to notebook`")
            raise NotebookError("no \"cells\" list: not a Jupyter notebook")
        if not isinstance(raw["cells"], list):
            raise NotebookError(f"\"cells\" must be a list, got {type(raw['cells']).__name__}")
        if version is not None and version != 4:
            raise NotebookError(f"nbformat {version} is not supported (nbformat 4 expected)")
        notebook = cls(raw, data, _detect_style(raw, data, text))
        if notebook.code_cell_count == 0:
            raise NotebookError("no code cells to lint")
        return notebook

    @property
    def language(self) -> Optional[str]:
        """The kernel's language (`metadata.language_info.name` or `kernelspec.language`), if named."""
        metadata = self._raw.get("metadata")
        if not isinstance(metadata, dict):
            return None
        for key, field in (("language_info", "name"), ("kernelspec", "language")):
            table = metadata.get(key)
            if isinstance(table, dict) and isinstance(table.get(field), str):
                return str(table[field])
        return None

    @property
    def is_python(self) -> bool:
        """False for a notebook whose kernel runs another language (R, Julia…): nothing to lint."""
        language = self.language
        return language is None or language.lower() in ("python", "python3", "ipython", "ipython3")

    def cell_of(self, row: int) -> tuple[int, int]:
        """(cell number, row in the cell) of a row of `python_source`."""
        return self.joined.cell_of(row)

    def python_row(self, cell_number: int, row: int) -> int:
        """The row of `python_source` of a row of a cell (the inverse of `cell_of`)."""
        return self.joined.python_row(cell_number, row)

    def cell(self, number: int) -> Optional[CodeCell]:
        return self.joined.cell(number)

    def locate(self, diagnostic: Diagnostic) -> Diagnostic:
        """A finding on `python_source` as a finding in its cell (rows counted from the cell's first)."""
        return self.joined.locate(diagnostic)

    # ------------------------------------------------------------------------ writing back

    def with_sources(self, python_source: str) -> "Notebook":
        """The notebook whose code cells hold `python_source` (a fixed `self.python_source`):
        only the cells whose text changed get a new ``source``."""
        if python_source == self.python_source:
            return self
        cells = list(self._raw["cells"])
        for cell, source in zip(self.cells, self.joined.sources(python_source)):
            if source == cell.source:
                continue
            original = cells[cell.number - 1]
            updated = dict(original)  # same keys in the same order
            updated["source"] = re.findall(r"[^\n]*\n|[^\n]+$", source) if isinstance(original["source"], list) else source
            cells[cell.number - 1] = updated
        raw = dict(self._raw)
        raw["cells"] = cells
        return Notebook(raw, self._dump(raw), self._style)

    def with_noqa(self, diagnostics: Sequence[Diagnostic]) -> tuple["Notebook", int]:
        """`--add-noqa`: the notebook with ``# noqa: CODE`` on the rows of these findings (located
        in their cells), and the number of rows changed. Reserved codes are not suppressible."""
        from viewlint.diagnostics import RESERVED_CODES
        from viewlint.suppression import add_noqa

        findings = [(self.python_row(d.cell, d.noqa_row or d.start.row), d.code) for d in diagnostics
                    if d.cell is not None and d.code not in RESERVED_CODES and self.cell(d.cell) is not None]
        text, changed = add_noqa(self.python_source, findings)
        return self.with_sources(text), changed

    def changed_cells(self, other: "Notebook") -> list[tuple[int, str, str]]:
        """(cell number, text here, text in `other`) for each code cell whose source differs."""
        theirs = {cell.number: cell.source for cell in other.cells}
        return [(cell.number, cell.source, theirs[cell.number]) for cell in self.cells
                if cell.number in theirs and theirs[cell.number] != cell.source]

    def to_bytes(self) -> bytes:
        """The notebook file, written as it was read."""
        return self._data

    def _dump(self, raw: dict[str, Any]) -> bytes:
        style = self._style
        text = json.dumps(raw, indent=style.indent, separators=style.separators, ensure_ascii=style.ensure_ascii)
        text = (text + style.tail).replace("\n", style.newline)
        return (_UTF8_BOM if style.bom else b"") + text.encode("utf-8")


def _detect_style(raw: dict[str, Any], data: bytes, text: str) -> _Style:
    """The json.dumps settings that write `raw` back as `text`: exactly, when the notebook was
    written by Jupyter, nbformat or another writer with Python's conventions; else the nearest."""
    newline = "\r\n" if "\r\n" in text else "\n"
    normal = text.replace("\r\n", "\n")
    body = normal.rstrip()
    tail = normal[len(body):]
    found = re.match(r"[\[{]\n([ \t]*)\S", body)
    indent = found.group(1) if found else None
    separators = (",", ": ") if indent is not None else (", ", ": ")
    candidates = [(separators, False), (separators, True), ((",", ":"), False), ((",", ":"), True)]
    for candidate_separators, ensure_ascii in candidates:
        if json.dumps(raw, indent=indent, separators=candidate_separators, ensure_ascii=ensure_ascii) == body:
            return _Style(indent, candidate_separators, ensure_ascii, newline, tail, data.startswith(_UTF8_BOM))
    return _Style(indent, separators, not any(ord(c) > 127 for c in body) and "\\u" in body, newline, tail,
                  data.startswith(_UTF8_BOM))
