"""``# noqa`` comments: reading them (line and file level) and adding them (``--add-noqa``).

Comments are found with ``tokenize``, so a ``# noqa`` inside a string literal does
not count. Forms understood:

* ``# noqa`` (every code on that line), ``# noqa: VL201``, ``# noqa:VL201,VL3``,
  ``# noqa: VL201 VL3 because reasons``; codes match by prefix, case-insensitively;
* ``# viewlint: noqa`` (the whole file) and ``# viewlint: noqa: VL2`` (those codes
  in the whole file); ``# flake8: noqa`` (the whole file).

``# flake8: noqa: X`` means nothing, as in flake8, and ``# ruff: noqa`` is Ruff's.
"""

from __future__ import annotations

import bisect
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Iterable, Optional

from viewlint.diagnostics import RESERVED_CODES

__all__ = ["Suppressions", "add_noqa", "parse_codes"]

_CODE = r"[A-Za-z]+[0-9]+"
# Line level: `#` then `noqa` (so `# ruff: noqa` and `# flake8: noqa: X` never match), then optional codes.
_LINE_NOQA = re.compile(
    rf"#\s*noqa\b(?:\s*:\s*(?P<codes>{_CODE}(?:(?:\s*,\s*|\s+){_CODE})*))?",
    re.IGNORECASE,
)
_FILE_NOQA = re.compile(
    rf"#\s*viewlint\s*:\s*noqa\b(?:\s*:\s*(?P<codes>{_CODE}(?:(?:\s*,\s*|\s+){_CODE})*))?",
    re.IGNORECASE,
)
_FLAKE8_FILE_NOQA = re.compile(r"#\s*flake8\s*:\s*noqa\b(?P<rest>\s*:)?", re.IGNORECASE)
_SPLIT = re.compile(r"[\s,]+")
# Every form above contains this word: a file without it has nothing to suppress (no need to tokenize).
_ANY_NOQA = re.compile(r"noqa", re.IGNORECASE)


def parse_codes(text: Optional[str]) -> tuple[str, ...]:
    """Split a noqa code list (commas and/or spaces) into upper-case codes."""
    if not text:
        return ()
    return tuple(code.upper() for code in _SPLIT.split(text) if code)


def _matches(code: str, selectors: tuple[str, ...]) -> bool:
    """Whether ``code`` is named by one of ``selectors`` (by prefix, case-insensitive)."""
    upper = code.upper()
    return any(upper.startswith(selector) for selector in selectors)


@dataclass
class _Comment:
    """A comment on one row: its text and where it starts in the line."""

    row: int
    column: int
    text: str


@dataclass
class _Scan:
    """What tokenizing a source yields for noqa purposes."""

    comments: list[_Comment]
    # Rows that cannot end with a comment (inside a multi-line string, or ending in a backslash).
    blocked: set[int] = field(default_factory=set)
    tokenized: bool = True


def _comment_in_line(line: str) -> Optional[int]:
    """Column of the first `#` outside an obvious single-line string, or None (the fallback scanner)."""
    quote: Optional[str] = None
    index = 0
    while index < len(line):
        char = line[index]
        if quote:
            if char == "\\":
                index += 1
            elif line.startswith(quote, index):
                index += len(quote) - 1
                quote = None
        elif char in "'\"":
            quote = char * 3 if line.startswith(char * 3, index) else char
            index += len(quote) - 1
        elif char == "#":
            return index
        index += 1
    return None


def _scan(source: str) -> _Scan:
    """Find comments and comment-less rows with tokenize; fall back to a per-line scan."""
    comments: list[_Comment] = []
    blocked: set[int] = set()
    string_types = {tokenize.STRING}
    fstring_start = getattr(tokenize, "FSTRING_START", None)  # Python 3.12+
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    open_fstrings: list[int] = []
    comment_rows: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            kind, (start_row, start_col), (end_row, _) = token.type, token.start, token.end
            if kind == tokenize.COMMENT:
                comments.append(_Comment(start_row, start_col, token.string))
                comment_rows.add(start_row)
            elif kind in string_types and end_row > start_row:
                blocked.update(range(start_row, end_row))
            elif kind == fstring_start:
                open_fstrings.append(start_row)
            elif kind == fstring_end and open_fstrings:
                blocked.update(range(open_fstrings.pop(), end_row))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        lines = source.split("\n")
        fallback = []
        for row, line in enumerate(lines, start=1):
            column = _comment_in_line(line)
            if column is not None:
                fallback.append(_Comment(row, column, line[column:].rstrip("\r")))
        return _Scan(fallback, _continuations(lines, set()), tokenized=False)
    lines = source.split("\n")
    return _Scan(comments, blocked | _continuations(lines, comment_rows | blocked))


def _continuations(lines: list[str], skip: set[int]) -> set[int]:
    """Rows ending in a backslash continuation (not inside strings, not ending in a comment)."""
    return {
        row
        for row, line in enumerate(lines, start=1)
        if row not in skip and line.rstrip("\r").endswith("\\")
    }


def _noqa_row(row: int, blocked: set[int], last_row: int) -> int:
    """The first row at or after ``row`` that can hold a trailing comment."""
    while row in blocked and row < last_row:
        row += 1
    return row


class Suppressions:
    """The noqa comments of one file, queried per finding."""

    def __init__(
        self,
        lines: dict[int, Optional[tuple[str, ...]]],
        file_all: bool = False,
        file_codes: tuple[str, ...] = (),
        blocked: Optional[set[int]] = None,
        last_row: int = 0,
    ) -> None:
        """``lines`` maps a row to its codes (None: a blanket ``# noqa``)."""
        self.lines = lines
        self.rows = sorted(lines)
        self.file_all = file_all
        self.file_codes = file_codes
        self.blocked = blocked or set()
        self.last_row = last_row

    @classmethod
    def from_source(cls, source: str) -> "Suppressions":
        """Read every line-level and file-level noqa comment of ``source``."""
        if _ANY_NOQA.search(source) is None:
            return cls({}, last_row=source.count("\n") + 1)
        scan = _scan(source)
        lines: dict[int, Optional[tuple[str, ...]]] = {}
        file_all = False
        file_codes: list[str] = []
        for comment in scan.comments:
            file_match = _FILE_NOQA.match(comment.text)
            if file_match:
                codes = parse_codes(file_match.group("codes"))
                if codes:
                    file_codes.extend(codes)
                else:
                    file_all = True
                continue
            flake8 = _FLAKE8_FILE_NOQA.match(comment.text)
            if flake8:
                # `# flake8: noqa: X` is not file-level in flake8 either: it means nothing.
                file_all = file_all or flake8.group("rest") is None
                continue
            line_match = _LINE_NOQA.search(comment.text)
            if line_match:
                codes = parse_codes(line_match.group("codes"))
                previous = lines.get(comment.row, ())
                if codes and previous is not None:
                    lines[comment.row] = previous + codes
                else:
                    lines[comment.row] = None  # a blanket noqa covers everything on the row
        return cls(lines, file_all, tuple(file_codes), scan.blocked, source.count("\n") + 1)

    def is_suppressed(self, code: str, row: int, rows: tuple[int, int] = (0, 0)) -> bool:
        """Whether a finding of ``code`` at ``row`` is silenced.

        ``rows`` is the (first, last) row of the statement holding the finding; a noqa on
        any of them applies. With (0, 0) only ``row`` counts (and, when ``row`` is inside a
        multi-line string or continued line, the row where its noqa comment must go).
        Reserved codes (VL000-VL002) are only silenced when named, never by a blanket noqa.
        """
        reserved = code.upper() in RESERVED_CODES
        if (self.file_all and not reserved) or _matches(code, self.file_codes):
            return True
        first, last = rows if rows != (0, 0) else (row, row)
        first, last = min(first, row), max(last, row)
        last = _noqa_row(last, self.blocked, self.last_row)
        start = bisect.bisect_left(self.rows, first)
        for noqa_row in self.rows[start:]:
            if noqa_row > last:
                break
            codes = self.lines[noqa_row]
            if codes is None:
                if not reserved:
                    return True
            elif _matches(code, codes):
                return True
        return False


def _merge_line(line: str, comments: list[_Comment], codes: list[str]) -> Optional[str]:
    """``line`` with ``codes`` added to its noqa comment (or a new one); None if nothing changes."""
    for comment in comments:
        match = _LINE_NOQA.search(comment.text)
        if match is None:
            continue
        existing = parse_codes(match.group("codes"))
        if not existing:
            return None  # a blanket `# noqa` already covers every code
        missing = [code for code in codes if not _matches(code, existing)]
        if not missing:
            return None
        merged = ", ".join((*existing, *missing))
        start = comment.column + match.start()
        end = comment.column + match.end("codes")
        return f"{line[:start]}# noqa: {merged}{line[end:]}"
    return f"{line.rstrip()}  # noqa: {', '.join(codes)}"


def add_noqa(source: str, findings: Iterable[tuple[int, str]]) -> tuple[str, int]:
    """Add ``# noqa: CODE`` comments for ``(row, code)`` findings; return (new source, rows changed).

    Codes merge into an existing ``# noqa: X`` on the row; a finding inside a multi-line
    string or a backslash-continued line gets its comment on the row where the string or
    line ends. Line endings (``\\n``, ``\\r\\n``) are kept as they are.
    """
    scan = _scan(source)
    lines = source.split("\n")
    last_row = len(lines)
    wanted: dict[int, list[str]] = {}
    for row, code in findings:
        if not 1 <= row <= last_row:
            continue
        target = _noqa_row(row, scan.blocked, last_row)
        if target in scan.blocked:
            continue  # no row after it can take a comment (e.g. an unterminated string)
        codes = wanted.setdefault(target, [])
        if code.upper() not in codes:
            codes.append(code.upper())
    comments_by_row: dict[int, list[_Comment]] = {}
    for comment in scan.comments:
        comments_by_row.setdefault(comment.row, []).append(comment)
    changed = 0
    for row, codes in sorted(wanted.items()):
        line = lines[row - 1]
        ending = "\r" if line.endswith("\r") else ""
        body = line[: len(line) - len(ending)]
        if not body.strip():
            continue  # an empty row holds no statement to silence
        updated = _merge_line(body, comments_by_row.get(row, []), sorted(codes))
        if updated is not None:
            lines[row - 1] = updated + ending
            changed += 1
    return "\n".join(lines), changed
