"""Fixing files: bytes in, bytes out, linted by the engine (`viewlint.fix` fixes the text).

For one file (`fix_source`): decode the bytes as the interpreter would (PEP 263 cookie, BOM),
remembering the encoding, the BOM and the file's newline, and check the decoding round-trips
exactly; fix the text (`viewlint.fix.fix_text`); re-encode with the same encoding and BOM, so that
bytes outside the edits are unchanged. A notebook's changed cells are written back into its JSON.
`fix_files` fixes discovered files in parallel; `write_fix` writes one back (`write_atomically`).
`--add-noqa` writes its comments into files the same way (`add_noqa_to_source`, `add_noqa_to_notebook`).
"""

from __future__ import annotations

import io
import os
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from viewlint.diagnostics import RESERVED_CODES, Diagnostic
from viewlint.engine import MAX_FILE_BYTES, DecodeError, FileResult, decode_source, settings_relative, lint_text
from viewlint.fix import FixOutcome, LintFunction, fix_text, unified_diff, write_atomically
from viewlint.files import SourceFile
from viewlint.settings import Settings
from viewlint.suppression import add_noqa


UTF8_BOM = b"\xef\xbb\xbf"


class FixError(Exception):
    """A file that cannot be fixed without risking its bytes (reported, never written)."""


@dataclass(frozen=True)
class DecodedSource:
    """A file's text with what is needed to write it back byte for byte."""

    text: str
    encoding: str
    bom: bool

    def encode(self, text: str) -> bytes:
        try:
            data = text.encode(self.encoding)
        except UnicodeEncodeError as error:
            raise FixError(f"the fixed text cannot be encoded as {self.encoding}: {error.reason}") from None
        return (UTF8_BOM + data) if self.bom else data


def decode_for_fix(data: bytes) -> DecodedSource:
    """Decode as the engine does, and make sure re-encoding the text gives back exactly `data`."""
    try:
        text = decode_source(data)
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except (DecodeError, SyntaxError) as error:
        raise FixError(str(error)) from None
    bom = data.startswith(UTF8_BOM)
    if bom or encoding == "utf-8-sig":
        encoding = "utf-8"
    source = DecodedSource(text, encoding, bom)
    if source.encode(text) != data:
        raise FixError(f"re-encoding as {encoding} does not give back the same bytes; not fixed")
    return source


@dataclass
class FileFix:
    """Fixing one file: its original and new bytes, the outcome, or why it could not be fixed."""

    path: str
    original: bytes = b""
    fixed: bytes = b""
    outcome: Optional[FixOutcome] = None
    original_text: str = ""
    error: Optional[str] = None
    # A notebook: (cell number, source before, source after) of each cell the fixes changed.
    cells: Optional[list[tuple[int, str, str]]] = None

    @property
    def changed(self) -> bool:
        return self.error is None and self.fixed != self.original


def fix_source(data: bytes, lint: LintFunction, display: str, *, unsafe_fixes: bool = False,
               diagnostics: Optional[list[Diagnostic]] = None) -> FileFix:
    """Fix the bytes of one file (or of stdin; a notebook when `display` ends in .ipynb); nothing is written."""
    from viewlint.notebook import is_notebook

    if is_notebook(display):
        return fix_notebook(data, lint, display, unsafe_fixes=unsafe_fixes)
    result = FileFix(display, original=data, fixed=data)
    try:
        source = decode_for_fix(data)
        result.original_text = source.text
        outcome = fix_text(source.text, lint, display, unsafe_fixes=unsafe_fixes, diagnostics=diagnostics)
        result.outcome = outcome
        result.fixed = source.encode(outcome.text) if outcome.text != source.text else data
    except FixError as error:
        result.error = f"{display}: {error}"
    return result


def fix_notebook(data: bytes, lint: LintFunction, display: str, *, unsafe_fixes: bool = False) -> FileFix:
    """Fix a Jupyter notebook's code cells as one module; only the changed cells' ``source`` is
    rewritten (outputs, metadata and the JSON's layout stay as they were). Nothing is written."""
    from viewlint.notebook import Notebook, NotebookError

    result = FileFix(display, original=data, fixed=data)
    try:
        notebook = Notebook.from_bytes(data)
        result.original_text = notebook.python_source
        outcome = fix_text(notebook.python_source, lint, display, unsafe_fixes=unsafe_fixes)
        fixed = notebook.with_sources(outcome.text)
    except NotebookError as error:
        result.error = f"{display}: notebook not fixed: {error}"
        return result
    outcome.diagnostics = sorted((fixed.locate(d) for d in outcome.diagnostics), key=lambda d: d.sort_key)
    result.outcome = outcome
    result.fixed = fixed.to_bytes()
    result.cells = notebook.changed_cells(fixed)
    return result


def engine_lint(settings: Settings, relative: Optional[str] = None) -> LintFunction:
    """The engine's linter for one file's settings, as a `LintFunction`."""
    def lint(text: str, display: str) -> list[Diagnostic]:
        return lint_text(text, display, settings, relative)

    return lint


def fix_path(path: Path, display: str, settings: Settings, relative: Optional[str], unsafe_fixes: bool) -> FileFix:
    """Read and fix one file (nothing is written: `write_fix` does that)."""
    from viewlint.reading import read_regular_file

    try:
        data = read_regular_file(path, MAX_FILE_BYTES)
    except OSError as error:
        return FileFix(display, error=f"{display}: cannot read file: {error.strerror or error}")
    from viewlint.notebook import is_notebook

    if is_notebook(path):
        return fix_notebook(data, engine_lint(settings, relative), display, unsafe_fixes=unsafe_fixes)
    return fix_source(data, engine_lint(settings, relative), display, unsafe_fixes=unsafe_fixes)


def _fix_batch(batch: list[tuple[Path, str, Settings, Optional[str]]], unsafe_fixes: bool) -> list[FileFix]:
    return [fix_path(path, display, settings, relative, unsafe_fixes) for path, display, settings, relative in batch]


def fix_files(files: Sequence[SourceFile], jobs: int, unsafe_fixes: bool) -> list[FileFix]:
    """Fix discovered files (in parallel when there are several); results in the order of `files`."""
    tasks = [(f.path, str(f.path), f.settings, settings_relative(f.path, f.settings)) for f in files]
    from viewlint.interrupts import in_worker, worker_pool

    if jobs <= 1 or len(tasks) < 4:
        return in_worker(_fix_batch, tasks, unsafe_fixes)  # type: ignore[no-any-return]

    size = max(1, min(16, len(tasks) // (jobs * 4) or 1))
    batches = [tasks[i:i + size] for i in range(0, len(tasks), size)]
    results: list[FileFix] = []
    with worker_pool(jobs) as pool:
        for batch in pool.map(_fix_batch, batches, [unsafe_fixes] * len(batches)):
            results.extend(batch)
    return results


def write_fix(file_fix: FileFix, path: Path) -> None:
    """Write a fixed file in place (through symbolic links), unless it changed since it was read."""
    target = Path(os.path.realpath(path))
    write_atomically(target, file_fix.fixed, expected=file_fix.original)


def diff_of(file_fix: FileFix) -> str:
    """The unified diff of a fix: of the file, or of each changed cell of a notebook (`path:cell N`)."""
    outcome = file_fix.outcome
    if outcome is None or not file_fix.changed:
        return ""
    if file_fix.cells is None:
        return unified_diff(file_fix.path, file_fix.original_text, outcome.text)
    return "".join(unified_diff(f"{file_fix.path}:cell {number}", before, after) for number, before, after in file_fix.cells)


def add_noqa_to_source(result: FileResult) -> int:
    """`--add-noqa` in a linted Python file: the number of rows changed. Raises FixError when the file
    cannot be written back as it was (or changed while it was linted), FileChangedError or OSError."""
    findings = [(d.noqa_row or d.start.row, d.code) for d in result.diagnostics if d.code not in RESERVED_CODES]
    if not findings:
        return 0
    path = Path(result.path)
    original = path.read_bytes()
    # Written back in the file's own encoding (its coding cookie, its BOM), as `--fix` does.
    decoded = decode_for_fix(original)
    # A result served from the cache carries no text: the file's own is the one it was made from.
    if result.source is not None and decoded.text != result.source:
        raise FixError("the file changed while it was being linted; not changed")
    new_text, changed = add_noqa(decoded.text, findings)
    if changed:
        write_atomically(path, decoded.encode(new_text), expected=original)
    return changed


def add_noqa_to_notebook(result: FileResult) -> int:
    """`--add-noqa` in a notebook's cells: the number of rows changed. Raises NotebookError when the
    notebook cannot be read (or changed while it was linted), FileChangedError or OSError."""
    from viewlint.notebook import Notebook, NotebookError

    if not any(d.cell is not None for d in result.diagnostics):
        return 0
    path = Path(result.path)
    original = path.read_bytes()
    notebook = Notebook.from_bytes(original)
    if result.source is not None and notebook.python_source != result.source:
        raise NotebookError("the notebook changed while it was being linted; not changed")
    updated, changed = notebook.with_noqa(result.diagnostics)
    if changed:
        write_atomically(path, updated.to_bytes(), expected=original)
    return changed
