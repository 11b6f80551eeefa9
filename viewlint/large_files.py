"""Files too large to analyse in one piece: cut into runs of whole module-level statements.

CPython's `ast` of a file takes about 130 bytes of memory per byte of source, and the analysis
keeps it for the whole run (the index, the prefilter and the positions read it): a generated file
of 8 MB needs more than a gigabyte before anything else. A file longer than `LARGE_FILE_BYTES` is
therefore cut into chunks of about `CHUNK_BYTES`, each a run of whole module-level statements, and
each chunk is analysed as a module of its own, one after the other, so that only one chunk's trees
are alive at a time.

Cuts are found without parsing the whole file: a candidate is a row that starts a line at column 0
with something that can start a statement (not a comment, a closing bracket, `else`, `elif`,
`except` or `finally`, not after a line continued by a backslash). A chunk is accepted when it
parses on its own; CPython's grammar then reads the file as the chunks' statements one after the
other (a chunk that parses ends outside any bracket, string or block, and the next starts a
statement). A candidate inside a multi-line string or bracket fails to parse, and the chunk grows
to a later candidate; a file that cannot be cut (a syntax error, one statement of megabytes) is
analysed whole, as before.

What a chunk loses, and what it keeps: each chunk starts with the module's imports seen before it
(and its one-line module-level assignments), so `torch`, `nn` and `F` mean what they mean in the
file, and a module-level cache is known as one. What is defined in another chunk (a helper's
summary, a class's fields, calls from other chunks that make a function hot) is not known, as if
it were in another module: findings that need it are missed, never invented. The command line says
nothing of it; docs/performance.md measures it.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from typing import Iterator, Optional

from viewlint.newer_syntax import parse_source

__all__ = ["CHUNK_BYTES", "LARGE_FILE_BYTES", "Chunk", "Unsplittable", "chunks_of", "parsed_or_none"]

# Files longer than this (in characters) are analysed a chunk at a time; real modules stay far below it
# (the largest file of transformers 5.23.0 is about 0.4 MB).
LARGE_FILE_BYTES = 2_000_000
# Smaller chunks cost less in all (some of the analysis grows faster than the module: 8 MB took 54 s of CPU in
# chunks of 0.25 MB, 64 s in chunks of 1 MB, 73 s in chunks of 2 MB) and keep less alive at once (199, 404 and
# 577 MiB); a chunk still holds thousands of lines, so what calls what nearby is seen.
CHUNK_BYTES = 256 * 1024
# A chunk that has not parsed by this size is given up: the file is analysed whole.
MOST_CHUNK_BYTES = 4 * CHUNK_BYTES
# Module-level assignments no longer than this (one line) are repeated at the top of later chunks.
SHORT_ASSIGNMENT = 200

# A line that cannot start a module-level statement: indented or blank, a comment, a closing bracket, or
# a clause that continues the statement before it.
_NOT_A_START = re.compile(r"[\s#)\]}]|(?:else|elif|except|finally)\b")
# Characters `str.splitlines` breaks lines at and Python does not (a form feed also resets indentation).
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# The preamble stops growing at this size: a file of imports alone does not make each chunk longer than the last.
MOST_PREAMBLE_BYTES = 64 * 1024


class Unsplittable(Exception):
    """The file cannot be cut where its chunks parse alone (a syntax error, a statement of megabytes)."""


@dataclass
class Chunk:
    """One chunk: its text (the preamble, then the file's rows `first` to `first + rows - 1`), and its `ast`."""

    text: str
    tree: ast.Module
    first: int  # the file row of the chunk's first own row
    preamble_rows: int  # rows of the preamble at the top of `text`

    @property
    def shift(self) -> int:
        """What to add to a row of `text` below the preamble to get the file's row."""
        return self.first - 1 - self.preamble_rows


def parsed_or_none(text: str) -> Optional[ast.Module]:
    """The `ast` of `text` (newer syntax read downgraded), or None when no Python accepts it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return parse_source(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _candidates(lines: list[str]) -> list[int]:
    """0-based indices of the lines where a module-level statement may start."""
    found = []
    for k, line in enumerate(lines):
        if k and not _NOT_A_START.match(line) and not lines[k - 1].rstrip("\r\n").endswith("\\"):
            found.append(k)
    return found


def _carried(tree: ast.Module, lines: list[str], offset: int, preamble_rows: int) -> list[str]:
    """The statements (their text) a later chunk starts with: imports, and one-line module-level assignments,
    of this chunk's own rows (`offset`: the index in `lines` of the chunk's first own row)."""
    carried: list[str] = []
    for statement in tree.body:
        if statement.lineno <= preamble_rows or statement.col_offset != 0:
            continue
        first = statement.lineno - preamble_rows - 1 + offset
        last = (statement.end_lineno or statement.lineno) - preamble_rows - 1 + offset
        if isinstance(statement, (ast.Import, ast.ImportFrom)) or (
                isinstance(statement, (ast.Assign, ast.AnnAssign)) and first == last and len(lines[first]) <= SHORT_ASSIGNMENT):
            text = "".join(lines[first:last + 1])
            carried.append(text if text.endswith(("\n", "\r")) else text + "\n")
    return carried


def chunks_of(text: str) -> Iterator[Chunk]:
    """The chunks of `text`, each parsed, one at a time (the caller analyses each before the next is read).

    Raises `Unsplittable` (possibly after some chunks) when a chunk does not parse by `MOST_CHUNK_BYTES`."""
    if _OTHER_BREAKS.search(text) is not None:
        # str.splitlines cuts at characters Python's tokenizer reads inside a line: rows would not match.
        raise Unsplittable("a line break Python does not count")
    lines = text.splitlines(keepends=True)
    candidates = _candidates(lines)
    sizes = [0]
    for line in lines:
        sizes.append(sizes[-1] + len(line))
    preamble: list[str] = []
    carried: set[str] = set()
    carried_bytes = preamble_rows = 0
    start, position = 0, 0  # the chunk's first line; the next candidate to try as its end
    while start < len(lines):
        want = sizes[start] + CHUNK_BYTES
        while position < len(candidates) and (candidates[position] <= start or sizes[candidates[position]] < want):
            position += 1
        end = candidates[position] if position < len(candidates) else len(lines)
        head = "".join(preamble)
        tree = parsed_or_none(head + "".join(lines[start:end]))
        while tree is None:
            if end == len(lines) or sizes[end] - sizes[start] > MOST_CHUNK_BYTES:
                raise Unsplittable(f"no statement boundary found after row {start + 1}")
            # Grow by a quarter of a chunk at least: a long string or bracket spanning many candidates costs a few
            # parses, not one per candidate.
            want = sizes[end] + CHUNK_BYTES // 4
            while position < len(candidates) and sizes[candidates[position]] < want:
                position += 1
            end = candidates[position] if position < len(candidates) else len(lines)
            tree = parsed_or_none(head + "".join(lines[start:end]))
        yield Chunk(head + "".join(lines[start:end]), tree, start + 1, preamble_rows)
        for statement in _carried(tree, lines, start, preamble_rows):
            if statement not in carried and carried_bytes + len(statement) <= MOST_PREAMBLE_BYTES:
                carried.add(statement)
                carried_bytes += len(statement)
                preamble.append(statement)
                preamble_rows += len(statement.splitlines())
        start = end
