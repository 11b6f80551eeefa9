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
import difflib
import os
from dataclasses import dataclass, field
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
    unsafe_fixes: bool = field(default=False, compare=False)  # whether fix-all applies unsafe fixes too


@dataclass(frozen=True)
class LintOptions:
    """What the editor's settings change about linting: the flags the command line would take."""

    overrides: CliOverrides = field(default_factory=CliOverrides)
    config_path: Optional[Path] = None  # like `--config`: this file for every document
    unsafe_fixes: bool = False  # like `--unsafe-fixes`: fix-all applies unsafe fixes too

    def resolver(self, workspace_root: Path) -> SettingsResolver:
        """The settings resolver these options make (raises ConfigError for a broken one)."""
        return SettingsResolver(self.overrides, self.config_path, cwd=workspace_root)


def settings_for(path: Optional[Path], workspace_root: Path, options: LintOptions) -> Settings:
    """The settings a document at ``path`` is linted with (raises ConfigError for a broken configuration)."""
    resolver = options.resolver(workspace_root)
    return resolver.settings_for(path) if path is not None else resolver.root_settings()


def _configuration_error(display: str, error: ConfigError) -> Diagnostic:
    """A broken configuration, reported on the document's first character (the CLI would exit 2)."""
    start = Location(1, 1)
    return Diagnostic(path=display, code=INTERNAL_ERROR, name=RESERVED_CODES[INTERNAL_ERROR],
                      message=f"configuration error: {error}", start=start, end=start, statement_rows=(1, 1))


def lint_document(text: str, path: Optional[Path], workspace_root: Path, untitled: str = "untitled.py",
                  options: Optional[LintOptions] = None) -> LintedDocument:
    """Lint a document's text; ``path`` is where it lives (None for an unsaved buffer, shown as ``untitled``)."""
    display = str(path) if path is not None else untitled
    options = options or LintOptions()
    try:
        settings = settings_for(path, workspace_root, options)
    except ConfigError as error:
        return LintedDocument(text, display, display, None, (_configuration_error(display, error),))
    return lint_with_settings(text, path, settings, untitled, options.unsafe_fixes)


def lint_with_settings(text: str, path: Optional[Path], settings: Settings, untitled: str = "untitled.py",
                       unsafe_fixes: bool = False) -> LintedDocument:
    """Lint a document's text with settings already resolved (see ``settings_for``)."""
    display = str(path) if path is not None else untitled
    if path is None:
        relative = display
    else:
        try:
            relative = os.path.relpath(path, settings.project_root)
        except ValueError:  # another drive on Windows
            relative = display
        if force_excluded(path, settings):
            return LintedDocument(text, display, relative, settings, (), unsafe_fixes)
    return LintedDocument(text, display, relative, settings, tuple(lint_text(text, display, settings, relative)),
                          unsafe_fixes)


def offers_fix(diagnostic: Diagnostic) -> bool:
    """Whether an editor may apply this finding's fix: safe and unsafe fixes, never display-only ones."""
    fix = diagnostic.fix
    return fix is not None and bool(fix.edits) and fix.applicability in (Applicability.SAFE, Applicability.UNSAFE)


def fix_edits(document: LintedDocument, diagnostic: Diagnostic) -> tuple[Edit, ...]:
    """The edits of one finding's fix, with the document's line endings, each shrunk to the text it
    really changes (``x[i].copy_(v)`` -> ``x[i] = v`` replaces ``.copy_(`` and ``)``, not the
    statement); empty when it offers none or its edits do not fit the text."""
    if not offers_fix(diagnostic):
        return ()
    assert diagnostic.fix is not None
    index = LineIndex(document.text)
    newline = detect_newline(document.text)
    edits: list[Edit] = []
    try:
        for edit in diagnostic.fix.edits:
            start, end = index.offset(edit.start), index.offset(edit.end)
            old = document.text[start:end]
            edits.extend(_shifted(minimal_edits(old, normalize_newlines(edit.content, newline)), edit.start))
    except ValueError:
        return ()
    return tuple(edits)


def _shifted(edits: list[Edit], origin: Location) -> list[Edit]:
    """Edits computed within a piece of text moved to where that piece starts (``origin``)."""
    def move(location: Location) -> Location:
        if location.row == 1:
            return Location(origin.row, origin.column + location.column - 1)
        return Location(origin.row + location.row - 1, location.column)

    return [Edit(edit.content, move(edit.start), move(edit.end)) for edit in edits]


def minimal_edits(old: str, new: str) -> list[Edit]:
    """Edits (in ``old``'s rows and columns, non-overlapping, in order) that turn ``old`` into ``new``
    and replace only what changes: lines that did not change are not touched, and a changed line
    is edited where its characters differ (runs closer than ``MERGE_GAP`` characters are one edit)."""
    if old == new:
        return []
    whole = replacement(old, new)
    old_start, old_end = _offsets(old, whole)
    new_start, new_end = old_start, old_start + len(whole.content)
    spans: list[tuple[int, int, int, int]] = []  # (old from, old to, new from, new to), offsets in the full texts
    old_lines = old[old_start:old_end].splitlines(keepends=True)
    new_lines = new[new_start:new_end].splitlines(keepends=True)
    old_at, new_at = _line_offsets(old_lines, old_start), _line_offsets(new_lines, new_start)
    lines = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in lines.get_opcodes():
        if tag == "equal":
            continue
        a1, a2, b1, b2 = old_at[i1], old_at[i2], new_at[j1], new_at[j2]
        if a2 - a1 and b2 - b1 and (a2 - a1) * (b2 - b1) <= 1_000_000:
            spans.extend(_character_spans(old, new, a1, a2, b1, b2))
        else:
            spans.append((a1, a2, b1, b2))
    starts = LineIndex(old).starts
    edits = [Edit(new[b1:b2], _location(starts, a1), _location(starts, a2)) for a1, a2, b1, b2 in spans]
    if any(_splits_crlf(old, edit) for edit in edits):
        return [whole]
    return edits


# Changed runs of characters closer than this are offered as one edit (``a.b(c)`` -> ``a.d(e)``: one edit).
MERGE_GAP = 4


def _line_offsets(lines: list[str], origin: int) -> list[int]:
    """Where each line starts, and where the last one ends, counted from ``origin``."""
    offsets = [origin]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    return offsets


def _character_spans(old: str, new: str, a1: int, a2: int, b1: int, b2: int) -> list[tuple[int, int, int, int]]:
    """The runs of characters that differ between ``old[a1:a2]`` and ``new[b1:b2]``, close runs merged."""
    matcher = difflib.SequenceMatcher(None, old[a1:a2], new[b1:b2], autojunk=False)
    spans: list[list[int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        span = [a1 + i1, a1 + i2, b1 + j1, b1 + j2]
        if spans and span[0] - spans[-1][1] < MERGE_GAP:
            spans[-1][1], spans[-1][3] = span[1], span[3]
        else:
            spans.append(span)
    return [(s[0], s[1], s[2], s[3]) for s in spans]


def _offsets(text: str, edit: Edit) -> tuple[int, int]:
    index = LineIndex(text)
    return index.offset(edit.start), index.offset(edit.end)


def _splits_crlf(text: str, edit: Edit) -> bool:
    """Whether an edit starts or ends between the ``\\r`` and ``\\n`` of a line ending."""
    index = LineIndex(text)
    for location in (edit.start, edit.end):
        offset = index.offset(location)
        if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
            return True
    return False


def noqa_edit(document: LintedDocument, diagnostic: Diagnostic) -> Optional[Edit]:
    """The edit adding ``# noqa: CODE`` for this finding where ``--add-noqa`` would put it, or None."""
    if diagnostic.code in RESERVED_CODES:
        return None
    new_text, changed = add_noqa(document.text, [(diagnostic.noqa_row or diagnostic.start.row, diagnostic.code)])
    return replacement(document.text, new_text) if changed else None


def fix_all_edit(document: LintedDocument, unsafe_fixes: Optional[bool] = None) -> Optional[Edit]:
    """One edit that applies every safe fix (and unsafe ones with ``unsafe_fixes``; by default as the
    document's settings say), to a fixpoint, as ``viewlint --fix`` would; None when there is none."""
    fixed = fix_all_text(document, unsafe_fixes)
    return None if fixed is None else replacement(document.text, fixed)


def fix_all_edits(document: LintedDocument, unsafe_fixes: Optional[bool] = None) -> list[Edit]:
    """``fix_all_edit`` as the smallest edits, one per changed run of text (empty when nothing changes)."""
    fixed = fix_all_text(document, unsafe_fixes)
    return [] if fixed is None else minimal_edits(document.text, fixed)


def noqa_all_edits(document: LintedDocument) -> list[Edit]:
    """The edits adding ``# noqa: CODES`` for every finding, as ``viewlint --add-noqa`` would."""
    findings = [(d.noqa_row or d.start.row, d.code) for d in document.diagnostics if d.code not in RESERVED_CODES]
    new_text, changed = add_noqa(document.text, findings)
    return minimal_edits(document.text, new_text) if changed else []


def fix_all_text(document: LintedDocument, unsafe_fixes: Optional[bool] = None) -> Optional[str]:
    """The text with every applicable fix applied, to a fixpoint; None when nothing changes."""
    unsafe = document.unsafe_fixes if unsafe_fixes is None else unsafe_fixes
    settings = document.settings
    if settings is None or not any(is_applicable(d, unsafe_fixes=unsafe) for d in document.diagnostics):
        return None

    def lint(text: str, display: str) -> list[Diagnostic]:
        return lint_text(text, display, settings, document.relative)

    outcome = fix_text(document.text, lint, document.display, unsafe_fixes=unsafe, diagnostics=list(document.diagnostics))
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
