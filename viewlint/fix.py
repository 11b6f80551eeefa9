"""Applying fixes: edits to a fixpoint, never an overlapping merge, never a corrupted file.

The flow for one file (`viewlint.file_fixes.fix_source` does steps 1 and 6, `fix_text` the rest):

1. Decode the bytes as the interpreter would (PEP 263 cookie, BOM), remembering the
   encoding, the BOM and the file's newline, and check the decoding round-trips exactly.
2. Lint; keep the fixes that apply (safe ones, plus unsafe ones with `--unsafe-fixes`).
3. One pass: take fixes in source order; a fix whose edits overlap an edit already taken
   is deferred to the next pass (it is re-proposed by the re-lint if still relevant).
4. The new text must still parse (`ast` and libcst); a pass that breaks it is replayed
   fix by fix, dropping the fixes that break it.
5. Re-lint the new text and repeat until nothing changes, at most `MAX_PASSES` times.
6. Re-encode with the same encoding and BOM; bytes outside the edits are unchanged.

Writing (`write_atomically`) goes through a temporary file and a rename in the same
folder, keeps the owner, the permission bits (setuid and setgid included) and the extended
attributes, rewrites in place a file with several hard links (or in a read-only folder),
and refuses to replace a file whose bytes changed since they were read.
"""

from __future__ import annotations

import difflib
import errno
import os
import re
import tempfile
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

from viewlint.diagnostics import Applicability, Diagnostic, Fix, Location

# Fixes that keep proposing new fixes after this many passes are a rule bug; stop there.
MAX_PASSES = 10


# A linter: (text, display path) -> diagnostics. The engine's lint_text, or a fake in tests.
LintFunction = Callable[[str, str], list[Diagnostic]]


class FileChangedError(Exception):
    pass


def write_atomically(path: Path, data: bytes, expected: Optional[bytes] = None) -> None:
    """Replace the contents of `path` with `data`, keeping the file what it was (mode, owner, links).

    The new bytes go to a temporary file in the same folder, renamed over the old one, so a crash
    never leaves half a file. When that would change the file's identity (it has other hard links,
    or the temporary file cannot carry its owner or extended attributes), or the folder is read-only
    while the file is writable, the file is rewritten in place instead. SIGINT and SIGTERM wait until
    the write is done. With `expected`, refuse (FileChangedError) when the file on disk no longer
    holds those bytes.
    """
    from viewlint.interrupts import signals_deferred

    with signals_deferred():
        if expected is not None and not _holds(path, expected):
            raise FileChangedError(f"{path}: changed on disk since it was read; not overwritten")
        status = os.stat(path)
        if status.st_nlink > 1 or not _replace(path, data, status):
            _rewrite_in_place(path, data)


def _holds(path: Path, expected: bytes) -> bool:
    """Whether the regular file `path` holds exactly `expected`."""
    from viewlint.reading import FileTooLargeError, read_regular_file

    try:
        return read_regular_file(path, len(expected)) == expected
    except FileTooLargeError:
        return False


def _replace(path: Path, data: bytes, status: os.stat_result) -> bool:
    """Write through a temporary file and a rename; False (nothing changed) when the temporary file
    cannot be made or cannot look exactly like the original."""
    try:
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".viewlint")
    except OSError as error:
        if error.errno in (errno.EACCES, errno.EPERM):  # a read-only folder; the file itself may be writable
            return False
        raise
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())  # the rename must never expose a half-written file after a crash
        if not _copy_metadata(status, path, temporary):
            os.unlink(temporary)
            return False
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise
    return True


def _copy_metadata(status: os.stat_result, source: Path, target: str) -> bool:
    """Give `target` the owner, mode and extended attributes (ACLs among them) of `source`."""
    if hasattr(os, "chown") and (status.st_uid, status.st_gid) != _owner(target):
        try:
            os.chown(target, status.st_uid, status.st_gid)
        except OSError:
            return False  # a file we may write but not own: a rename would make it ours
    os.chmod(target, status.st_mode & 0o7777)  # after chown, which clears the setuid and setgid bits
    if hasattr(os, "listxattr"):
        try:
            for name in os.listxattr(source):
                os.setxattr(target, name, os.getxattr(source, name))
        except OSError:
            return False  # e.g. a security.* attribute we may not set
    return True


def _owner(path: str) -> tuple[int, int]:
    status = os.stat(path)
    return status.st_uid, status.st_gid


def _rewrite_in_place(path: Path, data: bytes) -> None:
    """Overwrite the file's bytes through its own inode: links, owner, mode and attributes stay."""
    descriptor = os.open(path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
        handle.truncate()
        handle.flush()
        os.fsync(handle.fileno())


# ---------------------------------------------------------------------------- which fixes apply


def is_applicable(diagnostic: Diagnostic, unsafe_fixes: bool) -> bool:
    """Whether `--fix` applies this finding's fix: safe ones always, unsafe ones with `--unsafe-fixes`."""
    fix = diagnostic.fix
    if fix is None or not fix.edits:
        return False
    if fix.applicability is Applicability.SAFE:
        return True
    return fix.applicability is Applicability.UNSAFE and unsafe_fixes


def is_hidden_unsafe(diagnostic: Diagnostic, unsafe_fixes: bool) -> bool:
    """An unsafe fix that `--unsafe-fixes` would enable."""
    fix = diagnostic.fix
    return not unsafe_fixes and fix is not None and bool(fix.edits) and fix.applicability is Applicability.UNSAFE


def comments_in(code: str) -> list[str]:
    """The comments in a piece of Python code (`# type: ignore[…]` included), outside string literals.

    A small scanner rather than `tokenize`: the code is an expression or statement cut out of a file,
    which need not tokenize on its own."""
    found: list[str] = []
    i, n = 0, len(code)
    while i < n:
        ch = code[i]
        if ch == "#":
            end = i
            while end < n and code[end] not in "\r\n":
                end += 1
            found.append(code[i:end].rstrip())
            i = end
        elif ch in "'\"":
            quote = code[i:i + 3] if code[i:i + 3] in ("\'\'\'", '"""') else ch
            i += len(quote)
            while i < n and not code.startswith(quote, i):
                i += 2 if code[i] == "\\" else 1
            i += len(quote)
        else:
            i += 1
    return found


def drops_comments(original: str, replacement: str) -> bool:
    """Whether replacing `original` by `replacement` loses a comment (a fix must keep every one)."""
    kept = Counter(comments_in(replacement))
    for comment in comments_in(original):
        if kept[comment] <= 0:
            return True
        kept[comment] -= 1
    return False


# ---------------------------------------------------------------------------- text positions


def detect_newline(text: str) -> str:
    """The file's newline as libcst sees it: the first line ending, `\\n` when there is none."""
    for i, ch in enumerate(text):
        if ch == "\n":
            return "\n"
        if ch == "\r":
            return "\r\n" if text[i + 1:i + 2] == "\n" else "\r"
    return "\n"


def normalize_newlines(content: str, newline: str) -> str:
    """Make an edit's line endings the file's (Python reads them all as \\n, so meaning is kept)."""
    if "\r" not in content and "\n" not in content:
        return content
    return content.replace("\r\n", "\n").replace("\r", "\n").replace("\n", newline)


_LINE_END = re.compile(r"\r\n|\r|\n")


class LineIndex:
    """Maps (row, column) — 1-based, columns in characters — to string offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        # Only \r\n, \r and \n end lines, as for Python's tokenizer and libcst (str.splitlines splits more).
        if "\r" in text:
            starts = [0, *(match.end() for match in _LINE_END.finditer(text))]
        else:  # the common case, without a regular expression: `find` runs in C
            starts = [0]
            found = text.find("\n")
            while found != -1:
                starts.append(found + 1)
                found = text.find("\n", found + 1)
        self.starts = starts

    def offset(self, location: Location) -> int:
        """The string offset of `location`; ValueError when it is not inside the text."""
        row, column = location.row, location.column
        if row < 1 or column < 1:
            raise ValueError(f"invalid position {row}:{column}")
        if row > len(self.starts):
            # One past the last line: only its first column exists (the end of the text).
            if row == len(self.starts) + 1 and column == 1 and self.text.endswith(("\n", "\r")):
                return len(self.text)
            raise ValueError(f"position {row}:{column} is past the end of the file")
        start = self.starts[row - 1]
        end = self.starts[row] if row < len(self.starts) else len(self.text)
        offset = start + column - 1
        if offset > end:
            raise ValueError(f"position {row}:{column} is past the end of its line")
        return offset


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    content: str


def _spans(fix: Fix, index: LineIndex, newline: str) -> list[_Span]:
    """A fix's edits as sorted string spans; ValueError when they are invalid or overlap each other."""
    spans = sorted(
        (_Span(index.offset(e.start), index.offset(e.end), normalize_newlines(e.content, newline)) for e in fix.edits),
        key=lambda s: (s.start, s.end),
    )
    for span in spans:
        if span.end < span.start:
            raise ValueError("an edit ends before it starts")
    for first, second in zip(spans, spans[1:]):
        if _overlaps(first, second):
            raise ValueError("the fix's own edits overlap")
    return spans


def _overlaps(a: _Span, b: _Span) -> bool:
    """Edits conflict when their ranges share a character, or both insert at the same point."""
    if a.start < b.end and b.start < a.end:
        return True
    return a.start == a.end == b.start == b.end


# ---------------------------------------------------------------------------- one pass


@dataclass
class PassResult:
    """What one pass did: the new text, the findings it fixed, and the ones it put off."""

    text: str
    applied: list[Diagnostic] = field(default_factory=list)
    deferred: list[Diagnostic] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def apply_pass(text: str, diagnostics: Iterable[Diagnostic]) -> PassResult:
    """Apply every fix of `diagnostics` whose edits overlap no edit already taken, in source order.

    Overlapping fixes are deferred, never merged. A fix identical to one already taken
    (two findings, one edit) counts as applied without being applied twice.
    """
    index = LineIndex(text)
    newline = detect_newline(text)
    result = PassResult(text)
    candidates: list[tuple[list[_Span], Diagnostic]] = []
    for diagnostic in diagnostics:
        assert diagnostic.fix is not None
        try:
            spans = _spans(diagnostic.fix, index, newline)
        except ValueError as error:
            result.problems.append(f"{_where(diagnostic)}: fix not applied: {error}")
            continue
        if spans:
            candidates.append((spans, diagnostic))
    candidates.sort(key=lambda item: (item[0][0].start, item[0][-1].end, item[1].code))
    taken: list[_Span] = []
    taken_fixes: set[tuple[_Span, ...]] = set()
    for spans, diagnostic in candidates:
        if tuple(spans) in taken_fixes:
            result.applied.append(diagnostic)
            continue
        if any(_overlaps(span, other) for span in spans for other in taken):
            result.deferred.append(diagnostic)
            continue
        taken.extend(spans)
        taken_fixes.add(tuple(spans))
        result.applied.append(diagnostic)
    pieces, cursor = [], 0
    for span in sorted(taken, key=lambda s: (s.start, s.end)):
        pieces.append(text[cursor:span.start])
        pieces.append(span.content)
        cursor = span.end
    pieces.append(text[cursor:])
    result.text = "".join(pieces)
    return result


def _where(diagnostic: Diagnostic) -> str:
    return f"{diagnostic.path}:{diagnostic.start.row}:{diagnostic.start.column}: {diagnostic.code}"


def parses(text: str) -> bool:
    """Whether CPython and libcst both accept the text (the fixed file must stay valid Python)."""
    import libcst as cst

    from viewlint.newer_syntax import parse_source

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. SyntaxWarning for invalid escapes already in the file
            parse_source(text)  # syntax newer than this Python's counts as valid
        code = cst.parse_module(text).code
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    except Exception:  # libcst's parser raises its own error types
        return False
    # libcst drops the final "\r" of a file using old Mac line endings; positions before it are exact.
    return code == text or (text.endswith("\r") and code + "\r" == text)


# ---------------------------------------------------------------------------- to a fixpoint


@dataclass
class FixOutcome:
    """The result of fixing one text: the new text, what was fixed, and what remains."""

    text: str
    diagnostics: list[Diagnostic]
    fixed: Counter = field(default_factory=Counter)  # code -> number of findings fixed
    passes: int = 0
    converged: bool = True
    problems: list[str] = field(default_factory=list)

    @property
    def fixed_count(self) -> int:
        return sum(self.fixed.values())


def fix_text(
    text: str,
    lint: LintFunction,
    display: str,
    *,
    unsafe_fixes: bool = False,
    diagnostics: Optional[list[Diagnostic]] = None,
    max_passes: int = MAX_PASSES,
) -> FixOutcome:
    """Apply the applicable fixes of `lint`'s findings to `text`, re-linting until nothing changes.

    `diagnostics`, when given, are `lint(text, display)` already computed (saves the first lint).
    """
    current = diagnostics if diagnostics is not None else lint(text, display)
    outcome = FixOutcome(text, current)
    if not any(is_applicable(d, unsafe_fixes) for d in current):
        return outcome
    if not parses(text):
        # libcst positions are only trustworthy for text it round-trips (it drops some form feeds).
        outcome.problems.append(f"{display}: not fixed: the parser does not round-trip this file exactly")
        return outcome
    for _ in range(max_passes):
        fixable = [d for d in current if is_applicable(d, unsafe_fixes)]
        if not fixable:
            break
        step = apply_pass(text, fixable)
        outcome.problems.extend(step.problems)
        if step.applied and step.text != text and not parses(step.text):
            step = _replay_one_by_one(text, step.applied, outcome.problems)
        if step.text == text:
            break
        outcome.passes += 1
        outcome.fixed.update(d.code for d in step.applied)
        text = step.text
        current = lint(text, display)
    else:
        if any(is_applicable(d, unsafe_fixes) for d in current):
            outcome.converged = False
            outcome.problems.append(f"{display}: fixes did not converge after {max_passes} passes; kept the last valid text")
    outcome.text = text
    outcome.diagnostics = current
    outcome.problems = list(dict.fromkeys(outcome.problems))  # a refused fix is re-proposed each pass
    return outcome


def _replay_one_by_one(text: str, applied: Sequence[Diagnostic], problems: list[str]) -> PassResult:
    """A pass broke the syntax: apply its fixes one at a time, dropping each one that breaks it."""
    result = PassResult(text)
    for diagnostic in applied:
        trial = apply_pass(result.text, [diagnostic])
        if trial.applied and trial.text != result.text:
            if parses(trial.text):
                result.text = trial.text
                result.applied.append(diagnostic)
            else:
                problems.append(f"{_where(diagnostic)}: fix not applied: it would make the file invalid Python")
        # Positions of later fixes refer to the original text, so stop after the first success;
        # the next pass re-lints and proposes the rest with fresh positions.
        if result.applied:
            break
    return result


# ---------------------------------------------------------------------------- diffs


def unified_diff(display: str, before: str, after: str) -> str:
    """A unified diff of two texts; lines keep their own endings, a missing final newline is marked."""
    old, new = _lines_with_ends(before), _lines_with_ends(after)
    lines = []
    for line in difflib.unified_diff(old, new, fromfile=display, tofile=display, lineterm="\n"):
        if not line.endswith(("\n", "\r")):
            line += "\n\\ No newline at end of file\n"
        lines.append(line)
    return "".join(lines)


def _lines_with_ends(text: str) -> list[str]:
    """Lines ending in \\r\\n, \\r or \\n (str.splitlines would also split on form feeds)."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)

