"""One open document as the language server sees it: its settings, its findings and the edits it offers.

A text document is linted exactly as ``viewlint check FILE --force-exclude`` would lint the file
holding that text: the configuration is the nearest ``[tool.viewlint]`` above the document's path
(read afresh each time, so an edited pyproject.toml counts at the next change), per-file-ignores
and test-path rules match its project-relative path, and an excluded file has no findings.
Edits are viewlint ``Edit``s (1-based rows, columns in characters); the server converts them.
A notebook (``viewlint.lsp.notebooks``) is linted as the module its code cells make, and each of
its cells is then served as a ``LintedDocument`` of its own.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from viewlint.config import CliOverrides, ConfigError, SettingsResolver
from viewlint.diagnostics import INTERNAL_ERROR, RESERVED_CODES, Applicability, Diagnostic, Edit, Location
from viewlint.engine import lint_text
from viewlint.files import _force_excluded as force_excluded
from viewlint.fix import LineIndex, detect_newline, fix_text, is_applicable, normalize_newlines
from viewlint.settings import Settings
from viewlint.suppression import add_noqa


@dataclass(frozen=True)
class LintedDocument:
    """A document's text and what linting it found; ``settings`` is None when its configuration is broken."""

    text: str
    display: str
    relative: str
    settings: Optional[Settings]
    diagnostics: tuple[Diagnostic, ...]


def _configuration_error(display: str, error: ConfigError) -> Diagnostic:
    """A broken configuration, reported on the document's first character (the CLI would exit 2)."""
    start = Location(1, 1)
    return Diagnostic(path=display, code=INTERNAL_ERROR, name=RESERVED_CODES[INTERNAL_ERROR],
                      message=f"configuration error: {error}", start=start, end=start, statement_rows=(1, 1))


def lint_document(text: str, path: Optional[Path], workspace_root: Path, untitled: str = "untitled.py") -> LintedDocument:
    """Lint a document's text; ``path`` is where it lives (None for an unsaved buffer, shown as ``untitled``)."""
    display = str(path) if path is not None else untitled
    try:
        resolver = SettingsResolver(CliOverrides(), cwd=workspace_root)
        settings = resolver.settings_for(path) if path is not None else resolver.root_settings()
    except ConfigError as error:
        return LintedDocument(text, display, display, None, (_configuration_error(display, error),))
    if path is None:
        relative = display
    else:
        try:
            relative = os.path.relpath(path, settings.project_root)
        except ValueError:  # another drive on Windows
            relative = display
        if force_excluded(path, settings):
            return LintedDocument(text, display, relative, settings, ())
    return LintedDocument(text, display, relative, settings, tuple(lint_text(text, display, settings, relative)))


def offers_fix(diagnostic: Diagnostic) -> bool:
    """Whether an editor may apply this finding's fix: safe and unsafe fixes, never display-only ones."""
    fix = diagnostic.fix
    return fix is not None and bool(fix.edits) and fix.applicability in (Applicability.SAFE, Applicability.UNSAFE)


def fix_edits(document: LintedDocument, diagnostic: Diagnostic) -> tuple[Edit, ...]:
    """The edits of one finding's fix, with the document's line endings; empty when it offers none
    or its edits do not fit the text."""
    if not offers_fix(diagnostic):
        return ()
    assert diagnostic.fix is not None
    index = LineIndex(document.text)
    newline = detect_newline(document.text)
    try:
        for edit in diagnostic.fix.edits:
            index.offset(edit.start), index.offset(edit.end)
    except ValueError:
        return ()
    return tuple(Edit(normalize_newlines(edit.content, newline), edit.start, edit.end) for edit in diagnostic.fix.edits)


def noqa_edit(document: LintedDocument, diagnostic: Diagnostic) -> Optional[Edit]:
    """The edit adding ``# noqa: CODE`` for this finding where ``--add-noqa`` would put it, or None."""
    if diagnostic.code in RESERVED_CODES:
        return None
    new_text, changed = add_noqa(document.text, [(diagnostic.noqa_row or diagnostic.start.row, diagnostic.code)])
    return replacement(document.text, new_text) if changed else None


def fix_all_edit(document: LintedDocument) -> Optional[Edit]:
    """One edit that applies every safe fix, to a fixpoint, as ``viewlint --fix`` would; None when there is none."""
    fixed = fix_all_text(document)
    return None if fixed is None else replacement(document.text, fixed)


def fix_all_text(document: LintedDocument) -> Optional[str]:
    """The text with every safe fix applied, to a fixpoint; None when nothing changes."""
    settings = document.settings
    if settings is None or not any(is_applicable(d, unsafe_fixes=False) for d in document.diagnostics):
        return None

    def lint(text: str, display: str) -> list[Diagnostic]:
        return lint_text(text, display, settings, document.relative)

    outcome = fix_text(document.text, lint, document.display, unsafe_fixes=False, diagnostics=list(document.diagnostics))
    return None if outcome.text == document.text else outcome.text


def replacement(old: str, new: str) -> Edit:
    """The smallest single edit turning ``old`` into ``new`` (it never splits a ``\\r\\n``)."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    while prefix and old[prefix - 1] == "\r":
        prefix -= 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    while suffix and old[len(old) - suffix] == "\n":
        suffix -= 1
    starts = LineIndex(old).starts
    return Edit(new[prefix:len(new) - suffix], _location(starts, prefix), _location(starts, len(old) - suffix))


def _location(starts: list[int], offset: int) -> Location:
    """The 1-based row and column of a string offset, given the offsets where lines start."""
    row = bisect.bisect_right(starts, offset)
    return Location(row, offset - starts[row - 1] + 1)
