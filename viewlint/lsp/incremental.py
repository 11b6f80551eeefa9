"""Re-linting an edited document in time proportional to the edit: what was computed on the
statements an edit left alone is reused.

A lint of a 4,000-line file spends much of its time on work that depends on nothing but the text
of one statement: parsing it (with ``ast`` for the module index and the prefilter, with libcst for
the walk, and single functions alone for the call-graph summaries), reading facts off one
function's tree, printing expressions for messages, and computing positions of the flagged
statements by generating their code. While the language server runs, ``StatementCache``
(installed with ``enabled()``) keeps these across lints:

- the module is parsed with libcst one module-level statement at a time (cut where
  ``viewlint.engine`` cuts a file into pieces: at rows where a statement starts) and the pieces
  joined into one ``Module``; each piece is parsed once per distinct text, so after a one-line
  edit only the statement holding that line is parsed again. The comment and blank lines that
  end a piece are put back where a whole-module parse puts them (in front of the next
  statement), so the tree is equal node for node to ``libcst.parse_module`` of the whole text
  (checked by a test on real files);
- ``syntax_tree`` gives ``ast``'s tree of the text from the statements of an earlier tree that
  lie wholly in the lines both texts share at their start and end, and a parse of the lines
  between alone (equal, rows and columns included, to a parse of the whole text: checked by a
  test over random edits, including ones that open brackets, strings and blocks);
- ``viewlint.analysis.tree.parse_module`` answers a text parsed before from the cache (the
  functions the summaries parse alone);
- the position table of a flagged statement is computed once per parsed statement;
- ``viewlint.analysis.tree.remembered`` keeps, by node, results that are functions of a node's
  subtree alone: a function's nodes in order (``tree.subtree``) and parent map, whether a
  ``forward`` hands its results to the host, the names a function compares with constants and
  those it uses by shape as tensors, the printed text of an expression (``tree.code_for_node``);
  on the ``ast`` side, a segment's nodes in preorder and what the module index and the call graph
  read off one function's tree (its ``self`` assignments, calls, skeleton). After an edit the
  untouched statements are the very same node objects, so these are found again; the key holds
  the node, so its ``id`` is not reused while it lives. Only the parts that read nothing but the
  node are kept: what they are combined with (the module index, the call graph's names) is
  judged again on every lint.

Everything that depends on more than one statement (the module index, the prefilter's verdicts,
facts, summaries, rules) runs in full on every lint: the findings are those of a lint from
scratch. libcst nodes are immutable, nothing in viewlint changes an ``ast`` node, and the analysis
keeps its per-node facts per lint, so sharing nodes between lints is safe.

After a one-line edit of the 4,000-line file of ``bench/lsp_relint.py`` (findings of several
rules in every block), the findings come back in about 0.35-0.45 s (debounce of 50 ms included),
about a third of a lint from scratch (about 1.1 s); when only the libcst parses were kept,
0.53-0.74 s (measured side by side on a loaded two-core machine). Of a re-lint, about 0.2 s is
the walk (facts, summaries, rules), 0.07 s the prefilter, 0.02 s the module index.
"""
from __future__ import annotations

import ast
import contextlib
import threading
from collections import OrderedDict
from typing import Any, Callable, Iterator, Mapping, Optional

import libcst as cst

from viewlint.analysis import tree
from viewlint.prefilter import split_lines

MAX_TEXTS = 4096  # parsed texts kept (statements and functions); least recently used go first
MAX_TABLES = 1024  # position tables kept
MAX_LAYOUTS = 4  # the last texts whose `ast` trees an edited text may take statements from
MAX_REMEMBERED = 32768  # results of pure per-node computations kept (``remembered``): ~4,000 a lint of a 4,000-line file


_ABSENT = object()


class StatementCache:
    """Parses and position tables by source text, shared by the lints of one server."""

    def __init__(self) -> None:
        self._modules: "OrderedDict[str, cst.Module]" = OrderedDict()
        self._joined: "OrderedDict[tuple[int, ...], tuple[cst.CSTNode, tuple[cst.EmptyLine, ...], cst.CSTNode]]" = OrderedDict()
        self._tables: "OrderedDict[tuple[int, int], tuple[cst.CSTNode, cst.CSTNode, Mapping[Any, Any]]]" = OrderedDict()
        self._remembered: "OrderedDict[tuple[Any, object], Any]" = OrderedDict()
        self._layouts: list[_Layout] = []
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def parsed(self, source: str, parse: Callable[[str], cst.Module]) -> cst.Module:
        """``parse(source)``, from the cache when this text was parsed before."""
        with self._lock:
            module = self._modules.get(source)
            if module is not None:
                self._modules.move_to_end(source)
                self.hits += 1
                return module
        module = parse(source)
        with self._lock:
            self.misses += 1
            self._modules[source] = module
            while len(self._modules) > MAX_TEXTS:
                self._modules.popitem(last=False)
        return module

    def remembered(self, kind: Any, node: object, compute: Callable[[], Any]) -> Any:
        """``compute()``, a function of ``node``'s subtree alone (``viewlint.analysis.tree.remembered``),
        from the cache when it was computed for this very node before. The key holds the node, so its
        ``id`` (by which libcst nodes hash) is not reused while the entry lives."""
        key = (kind, node)
        with self._lock:
            found = self._remembered.get(key, _ABSENT)
            if found is not _ABSENT:
                self._remembered.move_to_end(key)
                return found
        value = compute()
        with self._lock:
            self._remembered[key] = value
            while len(self._remembered) > MAX_REMEMBERED:
                self._remembered.popitem(last=False)
        return value

    def syntax_tree(self, text: str, parse: Callable[[str], ast.Module]) -> ast.Module:
        """``parse(text)`` (``viewlint.newer_syntax.parse_source``), with ``ast``'s trees of the
        module-level statements an edit left alone taken from the tree of an earlier text.

        The text is compared line by line with the texts parsed before: the statements wholly in
        the lines both share at the start (but the last of them, which lines added after it could
        extend) are kept as they are; the statements wholly in the lines both share at the end too
        when the edit did not move them (otherwise they are parsed again). The lines between are
        parsed alone, padded with empty lines to their rows, with ``ast.parse``: CPython's parser
        reports nothing that depends on text outside a module-level statement, and when the lines
        between parse alone they end where a statement may start (no bracket, string, block or
        continuation is left open), so the kept statements read as they did. Anything else (a text
        that ``ast.parse`` rejects, newer syntax read downgraded, ``\r`` or form feeds, a statement
        sharing a line with another) takes ``parse(text)``. The trees are shared between lints:
        nothing in viewlint changes an ``ast`` node."""
        if "\r" in text or "\x0c" in text or "\x00" in text or text.startswith("\ufeff"):
            return parse(text)
        lines = text.split("\n")
        with self._lock:
            layouts = list(self._layouts)
        best: Optional[tuple[int, int, _Layout]] = None
        for layout in layouts:
            shared = _shared_lines(layout.lines, lines)
            if best is None or sum(shared) > best[0] + best[1]:
                best = (*shared, layout)
        tree: Optional[ast.Module] = None
        if best is not None:
            tree = _reparsed(lines, *best)
        if tree is None:
            try:
                tree = ast.parse(text)
            except SyntaxError:
                return parse(text)  # newer syntax read downgraded, or the error, as a lint from scratch finds it
        layout = _Layout(lines, tree)
        with self._lock:
            self._layouts.append(layout)
            del self._layouts[:-MAX_LAYOUTS]
        return tree

    def module(self, text: str, starts: list[int], parse: Callable[[str], cst.Module]) -> cst.Module:
        """``parse(text)``, assembled from the statements that start at rows ``starts`` (1-based),
        each parsed once per distinct text."""
        if "\x0c" in text:  # a form feed resets indentation where libcst drops it: parse as one (rare)
            return parse(text)
        lines = [content + ending for content, ending in split_lines(text)]
        if not starts or starts[0] != 1:
            starts = [1, *starts]
        bounds = [row for row in starts if row <= len(lines)] + [len(lines) + 1]
        try:
            pieces = [self.parsed("".join(lines[first - 1:last - 1]), tree._parse_module)
                      for first, last in zip(bounds, bounds[1:])]
        except Exception:  # noqa: BLE001 - a cut libcst cannot parse alone: the whole text says why
            return parse(text)
        if not pieces:
            return parse(text)
        return join_pieces(pieces, self._with_leading_lines)

    def _with_leading_lines(self, statement: cst.CSTNode, leading: list[cst.EmptyLine]) -> cst.CSTNode:
        """``statement`` with ``leading`` lines in front of its own, the same node for the same
        parts (so that its position table is reused too)."""
        key = (id(statement), *map(id, leading))
        with self._lock:
            found = self._joined.get(key)
            if found is not None and found[0] is statement and all(a is b for a, b in zip(found[1], leading)):
                self._joined.move_to_end(key)
                return found[2]
        joined = statement.with_changes(leading_lines=[*leading, *statement.leading_lines])  # type: ignore[attr-defined]
        with self._lock:
            self._joined[key] = (statement, tuple(leading), joined)
            while len(self._joined) > MAX_TEXTS:
                self._joined.popitem(last=False)
        return joined

    def positions(self, top: cst.CSTNode, unit: cst.CSTNode, compute: Callable[[], Mapping[Any, Any]]) -> Mapping[Any, Any]:
        """The position table of ``unit`` (a module-level statement or a member of ``top``) alone."""
        key = (id(top), id(unit))
        with self._lock:
            found = self._tables.get(key)
            if found is not None and found[0] is top and found[1] is unit:
                self._tables.move_to_end(key)
                return found[2]
        table = compute()
        with self._lock:
            self._tables[key] = (top, unit, table)
            while len(self._tables) > MAX_TABLES:
                self._tables.popitem(last=False)
        return table


class _Layout:
    """A text (split at ``\\n``) and ``ast``'s tree of it, with the rows each module-level statement spans."""

    __slots__ = ("lines", "tree", "spans")

    def __init__(self, lines: list[str], tree: ast.Module) -> None:
        self.lines = lines
        self.tree = tree
        # (first row, decorators included, or 0 where no cut may be made; last row) per statement, in order
        self.spans = [(_first_row(statement, lines), statement.end_lineno or statement.lineno) for statement in tree.body]


def _first_row(statement: ast.stmt, lines: list[str]) -> int:
    """The statement's first row (its first decorator's), or 0 when it does not start its line at
    column 0 (`x = 1; y = 2`): no cut may be made there."""
    decorators = getattr(statement, "decorator_list", ())
    if decorators:
        row = min(d.lineno for d in decorators)
        return row if lines[row - 1].startswith("@") else 0
    return statement.lineno if statement.col_offset == 0 else 0


def _shared_lines(old: list[str], new: list[str]) -> tuple[int, int]:
    """How many lines the two texts share at their start, and at their end (not overlapping)."""
    most = min(len(old), len(new))
    start = 0
    while start < most and old[start] == new[start]:
        start += 1
    end = 0
    while end < most - start and old[-1 - end] == new[-1 - end]:
        end += 1
    return start, end


def _reparsed(lines: list[str], start: int, end: int, layout: _Layout) -> Optional[ast.Module]:
    """The tree of the text ``lines``, which shares ``start`` lines at its start and ``end`` at its end
    with ``layout``'s text, from the statements of ``layout``'s tree those lines hold and a parse of
    the lines between; None when it cannot be made so (``syntax_tree`` says how)."""
    old = layout.lines
    if start == len(old) == len(lines):
        return ast.Module(body=list(layout.tree.body), type_ignores=[])
    spans, body = layout.spans, layout.tree.body
    # Kept before the edit: the statements wholly in the shared first lines, but the last of them
    # (lines the edit added after it may extend it); parsed again from the first row of that one.
    count = 0
    while count < len(spans) and spans[count][1] <= start:
        count += 1
    before = max(count - 1, 0)
    cut = spans[before][0] if before else 1
    if before and (cut == 0 or spans[before - 1][1] >= cut):
        return None
    # Kept after it: the statements wholly in the shared last lines, when the edit moved no row.
    after = len(spans)
    if len(lines) == len(old):
        first_shared = len(old) - end + 1
        while after > before and spans[after - 1][0] >= first_shared:
            after -= 1
    resume = spans[after][0] if after < len(spans) else len(old) + 1  # the first row kept after the edit
    if 0 < after < len(spans) and spans[after - 1][1] >= resume:
        return None
    if cut > 1 and lines[cut - 2].rstrip(" \t").endswith("\\"):
        return None  # a `\\` line joins the next to its own: the cut is not where a statement starts
    last_row = resume - 1 + len(lines) - len(old)  # the last row parsed again, in the new text
    piece = "\n".join(lines[cut - 1:last_row])
    if last_row < len(lines):
        piece += "\n"
    try:
        middle = ast.parse("\n" * (cut - 1) + piece)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return ast.Module(body=[*body[:before], *middle.body, *body[after:]], type_ignores=[])


def join_pieces(pieces: list[cst.Module],
                with_leading_lines: Optional[Callable[[cst.CSTNode, list[cst.EmptyLine]], cst.CSTNode]] = None) -> cst.Module:
    """One module from modules parsed from consecutive pieces of a text: the lines that end a
    piece (its footer) and start the next (its header) go in front of the next statement, as a
    parse of the whole text puts them."""
    body: list[cst.CSTNode] = []
    pending: list[cst.EmptyLine] = []
    for number, piece in enumerate(pieces):
        leading = pending + (list(piece.header) if number else [])
        statements = list(piece.body)
        if statements:
            first = statements[0]
            if leading:
                statements[0] = with_leading_lines(first, leading) if with_leading_lines is not None \
                    else first.with_changes(leading_lines=[*leading, *first.leading_lines])
            pending = list(piece.footer)
        else:
            pending = leading + list(piece.footer)
        body.extend(statements)
    return pieces[0].with_changes(body=body, footer=pending)


@contextlib.contextmanager
def enabled(cache: StatementCache) -> Iterator[StatementCache]:
    """Use ``cache`` for every lint while the block runs (``viewlint.analysis.tree.PARSE_CACHE``)."""
    previous, tree.PARSE_CACHE = tree.PARSE_CACHE, cache
    try:
        yield cache
    finally:
        tree.PARSE_CACHE = previous
