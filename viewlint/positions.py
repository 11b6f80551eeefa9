"""From the nodes rules report to rows and columns: libcst's positions, computed a statement at a time.

libcst computes positions by printing code back; printing a whole module costs as much as walking
it, so each report's position is read from its own module-level statement or class member, printed
alone (at the same indentation, so the columns hold), and shifted to its row in the file. A file
whose statements cannot be matched to rows falls back to printing the whole module once.
"""

from __future__ import annotations

import ast
import functools
from typing import Any, Callable, Mapping, Optional

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from viewlint.analysis import tree as tree_module
from viewlint.analysis.facts import Report
from viewlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location
from viewlint.fix import drops_comments
from viewlint.prefilter import Reduction

__all__ = ["positions_of", "present_starts", "resolve", "statement_positions"]


def _location(position: object, end: bool = False) -> Location:
    point = position.end if end else position.start  # type: ignore[attr-defined]
    return Location(point.line, point.column + 1)


def present_starts(statements: list[ast.stmt], rows: Optional[bytearray]) -> list[int]:
    """The row where each of these statements starts (its keyword, after any decorators: where
    libcst's syntactic position starts), in order, for those present in the parsed text (`rows`:
    the rows the prefilter kept; None: all); statements sharing a row (`a = 1; b = 2`) count once."""
    found = set()
    for statement in statements:
        if rows is None or (statement.lineno < len(rows) and rows[statement.lineno]):
            found.add(statement.lineno)
    return sorted(found)


def positions_of(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """libcst's syntactic positions of every node of `module`.

    The same table as `MetadataWrapper(module).resolve(PositionProvider)`, without the wrapper's
    extra visit of the whole tree (a third of the cost), which only batchable providers need.
    """
    provider = PositionProvider()
    generate = getattr(provider, "_gen_impl", None)
    computed = getattr(provider, "_computed", None)
    if generate is None or not isinstance(computed, dict):  # a libcst without these internals
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    generate(module)
    return computed


class _Positions:
    """Positions of the nodes under a few module-level statements, each computed from that
    statement alone (code generation of the whole module costs as much as the walk)."""

    def __init__(self, tables: list[tuple[Mapping[cst.CSTNode, CodeRange], int]],
                 file_row: Optional[Callable[[int], int]] = None) -> None:
        self._file_row = file_row  # maps rows of a reduced text to the file's
        self._tables = tables
        self._table, self._shift = tables[0] if len(tables) == 1 else ({}, 0)
        # Several tables: the nodes asked about, found in them (merging the tables, each holding every node of its
        # statement, cost more than the lookups): a node's range from the last table that holds it, its shift from
        # the last with a shift that holds it.
        self._found: Optional[dict[cst.CSTNode, tuple[CodeRange, int]]] = {} if len(tables) > 1 else None

    def _lookup(self, node: object) -> Optional[tuple[CodeRange, int]]:
        found = self._found.get(node)  # type: ignore[union-attr, arg-type]
        if found is None:
            code_range: Optional[CodeRange] = None
            shift = 0
            for table, table_shift in reversed(self._tables):
                if node in table:
                    if code_range is None:
                        code_range = table[node]  # type: ignore[index]
                    if table_shift:
                        shift = table_shift
                        break
            if code_range is None:
                return None
            found = self._found[node] = (code_range, shift)  # type: ignore[index]
        return found

    def __contains__(self, node: object) -> bool:
        if self._found is None:
            return node in self._table
        return self._lookup(node) is not None

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        if self._found is None:
            found, shift = self._table[node], self._shift
        else:
            looked_up = self._lookup(node)
            if looked_up is None:
                raise KeyError(node)
            found, shift = looked_up
        if self._file_row is not None:
            return CodeRange(CodePosition(self._file_row(found.start.line), found.start.column),
                             CodePosition(self._file_row(found.end.line), found.end.column))
        if not shift:
            return found
        return CodeRange(CodePosition(found.start.line + shift, found.start.column),
                         CodePosition(found.end.line + shift, found.end.column))


def _unit_positions(module: cst.Module, top: cst.CSTNode, unit: cst.CSTNode, in_class: bool) -> Mapping[cst.CSTNode, CodeRange]:
    """The positions of the nodes of a module-level statement (`top`) alone, or of one member of a class
    (`unit`, `in_class`) inside a one-member copy of its class: same indentation, same columns."""
    wrapper = top.with_changes(decorators=(), leading_lines=(), lines_after_decorators=(),  # type: ignore[attr-defined]
                               body=top.body.with_changes(body=(unit,))) if in_class else top  # type: ignore[attr-defined]
    return positions_of(module.with_changes(header=(), body=(wrapper,), footer=()))


def statement_positions(module: cst.Module, reports: list[Report], tree: ast.Module,
                         rows: Optional[bytearray], partial: frozenset[int] = frozenset()) -> Optional[_Positions]:
    """Positions for the reports, each computed from its own class member or module-level
    statement alone; None when the statements cannot be matched to rows, or a report is in a
    literal kept element by element (`partial`: its rows have gaps); then the whole module is
    resolved through the line map. `rows`: the rows the prefilter kept (None: all)."""
    starts = present_starts(tree.body, rows)
    if len(starts) != len(module.body) or any(report.top is None for report in reports):
        return None
    index_of = {id(statement): k for k, statement in enumerate(module.body)}
    by_row = {statement.lineno: statement for statement in reversed(tree.body)}
    tables: list[tuple[Mapping[cst.CSTNode, CodeRange], int]] = []
    done: set[int] = set()
    for report in reports:
        k = index_of.get(id(report.top))
        if k is None:
            return None
        if starts[k] in partial:
            return None
        top = module.body[k]
        unit, start, in_class = top, starts[k], False
        member_of = by_row.get(starts[k])
        if report.member is not None and isinstance(top, cst.ClassDef) and isinstance(top.body, cst.IndentedBlock) \
                and isinstance(member_of, ast.ClassDef):
            members = list(top.body.body)
            member_starts = present_starts(member_of.body, rows)
            position = next((j for j, m in enumerate(members) if m is report.member), None)
            if position is not None and len(member_starts) == len(members):
                # The member inside a one-member copy of its class: same indentation, same columns.
                unit, start, in_class = report.member, member_starts[position], True
        if id(unit) in done:
            continue
        done.add(id(unit))
        cache = tree_module.PARSE_CACHE
        compute = functools.partial(_unit_positions, module, top, unit, in_class)
        table = compute() if cache is None else cache.positions(top, unit, compute)
        tables.append((table, start - table[unit].start.line))
    positions = _Positions(tables)
    needed = [node for report in reports for node in (report.node, *(n for n, _ in report.edits))]
    return positions if all(node in positions for node in needed) else None


def resolve(module: cst.Module, reports: list[Report], display: str,
             located: Optional[tuple[ast.Module, Optional[bytearray]]] = None,
             reduction: Optional[Reduction] = None, file_row: Optional[Callable[[int], int]] = None) -> list[Diagnostic]:
    """Turn reports (nodes) into diagnostics (rows and columns); `located`: the file's `ast` and
    the rows the prefilter kept (None: all), to compute positions statement by statement;
    `reduction`: maps rows of the parsed text back to the file's."""
    partial = reduction.partial if reduction is not None else frozenset()
    positions: Any = statement_positions(module, reports, *located, partial) if located is not None else None
    if positions is None:
        table = positions_of(module)
        positions = _Positions([(table, 0)], file_row or (reduction.file_row if reduction is not None else None))
    diagnostics = []
    for report in reports:
        position = positions[report.node]
        start, end = _location(position), _location(position, end=True)
        rows = (start.row, end.row)
        if report.statement is not None and report.statement in positions:
            statement = positions[report.statement]
            if isinstance(report.statement, cst.SimpleStatementLine):
                rows = (statement.start.line, statement.end.line)
            else:  # a compound statement: its header, up to the flagged node's last row
                rows = (statement.start.line, end.row)
        fix = None
        if report.fix_message is not None or report.edits:
            edits = tuple(
                Edit(text, _location(positions[node]), _location(positions[node], end=True)) for node, text in report.edits
            )
            message = report.fix_message or ""
            if edits and any(drops_comments(module.code_for_node(node), text) for node, text in report.edits):
                # The rewrite would delete a comment inside the replaced code (`# type: ignore[…]`): offered as a hint only.
                edits, message = (), f"{message} (not applied automatically: it would delete a comment)"
            applicability = report.applicability if edits and report.applicability else Applicability.DISPLAY_ONLY
            fix = Fix(applicability=applicability, message=message, edits=edits)
        diagnostics.append(
            Diagnostic(path=display, code=report.rule.code, name=report.rule.name, message=report.message,
                       start=start, end=end, fix=fix, noqa_row=rows[1] if rows[0] else start.row, statement_rows=rows)
        )
    return diagnostics
