"""Re-linting an edited document in time proportional to the edit: parsed statements are reused.

A lint of a 4,000-line file spends most of its time in libcst: parsing the module (and, for the
call-graph summaries, single functions alone), and computing positions of the flagged
statements by generating their code. All three are pure functions of source text. While the
language server runs, ``StatementCache`` (installed with ``enabled()``) keeps them across
lints, keyed by text:

- the module is parsed one module-level statement at a time (cut where ``viewlint.engine``
  cuts a file into pieces: at rows where a statement starts) and the pieces joined into one
  ``Module``; each piece is parsed once per distinct text, so after a one-line edit only the
  statement holding that line is parsed again. The comment and blank lines that end a piece
  are put back where a whole-module parse puts them (in front of the next statement), so the
  tree is equal node for node to ``libcst.parse_module`` of the whole text (checked by a test
  on real files);
- ``viewlint.analysis.tree.parse_module`` answers a text parsed before from the cache (the
  functions the summaries parse alone);
- the position table of a flagged statement is computed once per parsed statement.

The analysis itself (facts, summaries, rules) runs in full on every lint: the findings are
those of a lint from scratch, only the parsing is saved. libcst nodes are immutable, and the
analysis keeps its per-node facts per lint, so sharing nodes between lints is safe.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from typing import Any, Callable, Iterator, Mapping, Optional

import libcst as cst

from viewlint.analysis import tree
from viewlint.prefilter import split_lines

MAX_TEXTS = 4096  # parsed texts kept (statements and functions); least recently used go first
MAX_TABLES = 1024  # position tables kept
MAX_REMEMBERED = 65536  # results of pure per-node computations kept (``remembered``)


_ABSENT = object()


class StatementCache:
    """Parses and position tables by source text, shared by the lints of one server."""

    def __init__(self) -> None:
        self._modules: "OrderedDict[str, cst.Module]" = OrderedDict()
        self._joined: "OrderedDict[tuple[int, ...], tuple[cst.CSTNode, tuple[cst.EmptyLine, ...], cst.CSTNode]]" = OrderedDict()
        self._tables: "OrderedDict[tuple[int, int], tuple[cst.CSTNode, cst.CSTNode, Mapping[Any, Any]]]" = OrderedDict()
        self._remembered: "OrderedDict[tuple[Any, cst.CSTNode], Any]" = OrderedDict()
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

    def remembered(self, kind: Any, node: cst.CSTNode, compute: Callable[[], Any]) -> Any:
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
