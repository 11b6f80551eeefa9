"""Lint files: read, decode, parse once, walk once with every enabled rule, suppress, report.

Bad input never raises: an unreadable or undecodable file becomes a VL001 finding,
a syntax error a VL000 finding, and a crash inside a rule a VL002 finding naming the
rule, while the other rules and files still run.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import io
import os
import re
import tokenize
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence

import libcst as cst

from viewlint.analysis import stack
from viewlint.analysis.module_index import build_index_from_ast
from viewlint.analysis import tree as tree_module
from viewlint.analysis.tree import parse_module
from viewlint.analysis.twins import register as register_twins
from viewlint.analysis.callgraph import callgraph_of
from viewlint.analysis.facts import Facts
from viewlint.analysis.project import Project, remember_linted
from viewlint.analysis.elsewhere import walker
from viewlint.analysis.summaries import ModuleSummaries
from viewlint.analysis.walker import Walker
from viewlint.newer_syntax import parse_source
from viewlint.large_files import LARGE_FILE_BYTES, Unsplittable, chunks_of, parsed_or_none
from viewlint.prefilter import Reduction, reduce, split_lines
from viewlint.reading import FileTooLargeError, read_regular_file
from viewlint.diagnostics import (
    INTERNAL_ERROR,
    IO_ERROR,
    RESERVED_CODES,
    SYNTAX_ERROR,
    Diagnostic,
    Location,
)
from viewlint.notebook import Notebook, NotebookError, is_notebook
from viewlint.positions import present_starts, resolve
from viewlint.registry import all_rules
from viewlint.settings import Settings
from viewlint.suppression import Suppressions

# Files larger than this are reported, not parsed: generated code this big is not worth minutes of parsing.
MAX_FILE_BYTES = 8 * 1024 * 1024


@dataclass
class FileResult:
    """The findings for one file, and its decoded text (for `full` output and fixes)."""

    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    source: Optional[str] = None
    from_cache: bool = False


class DecodeError(Exception):
    """Bytes that are not Python source text; ``row``/``column`` (1-based) point at the offending byte."""

    def __init__(self, message: str, row: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.row, self.column = row, column


def _byte_position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based row and 1-based byte column of ``offset`` in ``data``."""
    return data.count(b"\n", 0, offset) + 1, offset - (data.rfind(b"\n", 0, offset) + 1) + 1


def decode_source(data: bytes) -> str:
    """Decode Python source bytes as the interpreter would (PEP 263 cookie, BOM, UTF-8 default)."""
    if b"\x00" in data:
        raise DecodeError("file contains NUL bytes (binary file?)", *_byte_position(data, data.index(b"\x00")))
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise DecodeError(f"cannot determine encoding: {error}") from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        row, column = _byte_position(data, error.start)
        raise DecodeError(f"cannot decode as {encoding}: byte 0x{data[error.start]:02x}: {error.reason}", row, column) from None
    except LookupError as error:
        raise DecodeError(f"cannot decode as {encoding}: {error}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def _reserved(path: str, code: str, message: str, row: int = 1, column: int = 1) -> Diagnostic:
    location = Location(row, column)
    return Diagnostic(path=path, code=code, name=RESERVED_CODES[code], message=message, start=location, end=location,
                      statement_rows=(row, row))


def read_error(display: str, message: str, row: int = 1, column: int = 1) -> Diagnostic:
    """A VL001 finding: the input (a file, or stdin) could not be read or decoded."""
    return _reserved(display, IO_ERROR, message, row, column)


def too_large_message(error: FileTooLargeError) -> str:
    """``file too large to lint (9.5 MiB > 8 MiB)``; the size is unknown for a stream or a growing file."""
    limit = f"{error.limit / 1048576:g} MiB"
    if error.size is None:
        return f"file too large to lint (more than {limit})"
    return f"file too large to lint ({error.size / 1048576:.1f} MiB > {limit})"


def read_file(path: Path, display: str) -> tuple[Optional[str], Optional[Diagnostic]]:
    """The decoded text of a file, or a VL001 diagnostic saying why it cannot be read."""
    data, problem = read_bytes(path, display)
    if problem is not None:
        return None, problem
    assert data is not None
    try:
        return decode_source(data), None
    except DecodeError as error:
        return None, _reserved(display, IO_ERROR, str(error), error.row, error.column)


def read_bytes(path: Path, display: str) -> tuple[Optional[bytes], Optional[Diagnostic]]:
    """The bytes of a file, or a VL001 diagnostic saying why it cannot be read."""
    try:
        if path.is_symlink() and not path.exists():
            return None, _reserved(display, IO_ERROR, "cannot read file: broken symbolic link")
        data = read_regular_file(path, MAX_FILE_BYTES)
    except FileTooLargeError as error:
        return None, _reserved(display, IO_ERROR, too_large_message(error))
    except IsADirectoryError:
        return None, _reserved(display, IO_ERROR, "cannot read file: is a directory")
    except OSError as error:
        reason = error.strerror or str(error)
        if getattr(error, "errno", None) == 40:
            reason = "symbolic link loop"
        return None, _reserved(display, IO_ERROR, f"cannot read file: {reason}")
    return data, None


_TEST_DIRECTORIES = frozenset({"tests", "test", "testing"})
_EXPORT_DIRECTORIES = frozenset({"export", "_export", "exporter", "exporters"})
# `export.py`, `exporter.py`, `export_onnx.py`, `onnx_export.py`, `_exporter_utils.py` (not `exported_model.py`).
_EXPORT_FILE = re.compile(r"(?:^_?|_)export(?:ers?)?(?:_|\.pyi?$)")


def is_test_path(path: str) -> bool:
    """`tests/…`, `test/…`, `testing/…`, `test_*.py`, `*_test.py`, `conftest.py` (relative to the project)."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" \
        or any(part in _TEST_DIRECTORIES for part in parts[:-1])


def is_export_path(path: str) -> bool:
    """`export/…`, `_export/…`, `exporters/…`, `exporter.py`, `export_onnx.py`, `onnx_export.py` (relative to the
    project): code that runs once per export (a dry run, a trace), not per step."""
    parts = path.replace("\\", "/").split("/")
    return bool(_EXPORT_FILE.search(parts[-1])) or any(part in _EXPORT_DIRECTORIES for part in parts[:-1])


def lint_text(text: str, display: str, settings: Settings, relative: Optional[str] = None) -> list[Diagnostic]:
    """Lint source text; never raises for any input."""
    return lint_text_with_dependencies(text, display, settings, relative)[0]


def lint_text_with_dependencies(text: str, display: str, settings: Settings,
                                relative: Optional[str] = None) -> tuple[list[Diagnostic], dict[str, str]]:
    """The diagnostics, and the other modules of the project (path -> content digest) they rely on.

    Valid code can nest deeper than the default recursion limit allows the parsers and the walk to
    follow (a chain of hundreds of calls, hundreds of joined strings): a file that runs out of stack
    is linted again on a thread with a deep stack. Any other failure is a VL002 for this file alone.
    """
    if len(text) > LARGE_FILE_BYTES:
        try:
            return _lint_chunks(text, display, settings, relative)
        except Unsplittable:
            pass  # analysed whole
    return _lint_whole(text, display, settings, relative)


def _lint_whole(text: str, display: str, settings: Settings, relative: Optional[str],
                tree: Optional[ast.Module] = None) -> tuple[list[Diagnostic], dict[str, str]]:
    """`lint_text_with_dependencies` of `text` as one module; `tree`: its `ast`, when already parsed."""
    project = Project(display, walker(settings))
    stack.reset()
    parsed: dict[str, cst.Module] = {}  # what libcst read in the first try, for the second
    try:
        with stack.giving_up():
            diagnostics = _lint_text(text, display, settings, relative, project, deep=False, parsed=parsed, tree=tree)
        if not stack.reset():
            return diagnostics, project.dependencies
    except (Exception, stack.Exhausted):  # noqa: BLE001 - RecursionError, or an error it left behind (libcst positions)
        pass
    project = Project(display, walker(settings))
    outcome = _on_deep_stack(lambda: _lint_text(text, display, settings, relative, project, deep=True, parsed=parsed,
                                                tree=tree))
    stack.reset()
    if isinstance(outcome, BaseException):
        message = ("internal error: code nested too deeply to analyse" if isinstance(outcome, RecursionError)
                   else f"internal error: {type(outcome).__name__}: {outcome}".splitlines()[0])
        return [_reserved(display, INTERNAL_ERROR, message)], project.dependencies
    return outcome, project.dependencies


def _lint_chunks(text: str, display: str, settings: Settings,
                 relative: Optional[str]) -> tuple[list[Diagnostic], dict[str, str]]:
    """`text` linted a chunk at a time (see `viewlint.large_files`); `# noqa` comments read over the whole file."""
    diagnostics: list[Diagnostic] = []
    dependencies: dict[str, str] = {}
    quiet = replace(settings, ignore_noqa=True)
    for chunk in chunks_of(text):
        found, depends = _lint_whole(chunk.text, display, quiet, relative, tree=chunk.tree)
        dependencies.update(depends)
        for diagnostic in found:
            if diagnostic.start.row > chunk.preamble_rows:
                diagnostics.append(diagnostic.moved(lambda row, shift=chunk.shift: row + shift))
            elif diagnostic.code in RESERVED_CODES:  # about the chunk as a whole (an internal error): at its first row
                diagnostics.append(replace(diagnostic, start=Location(chunk.first, 1), end=Location(chunk.first, 1),
                                           noqa_row=chunk.first, statement_rows=(0, 0)))
            # else: a finding in a statement repeated from an earlier chunk, where it was reported
        del chunk, found
        _after_file()
    if not settings.ignore_noqa and diagnostics:
        suppressions = Suppressions.from_source(text)
        diagnostics = [
            d for d in diagnostics
            if d.code in (SYNTAX_ERROR, INTERNAL_ERROR) or not suppressions.is_suppressed(d.code, d.start.row, d.statement_rows)
        ]
    return sorted(set(diagnostics), key=lambda d: d.sort_key), dependencies


DEEP_RECURSION_LIMIT = 60_000
DEEP_STACK_BYTES = 1024 * 1024 * 1024  # reserved address space; only the pages a deep file touches are used


def _on_deep_stack(work: Callable[[], Any]) -> Any:
    """`work()` on a thread with a large stack and a high recursion limit; its result, or the exception it raised."""
    import sys
    import threading

    outcome: list[Any] = [RecursionError("no result")]

    def target() -> None:
        try:
            outcome[0] = work()
        except BaseException as error:  # noqa: BLE001 - handed back to the caller
            outcome[0] = error

    previous_size = threading.stack_size()
    try:
        threading.stack_size(DEEP_STACK_BYTES)
        thread = threading.Thread(target=target, name="viewlint-deep", daemon=True)
        previous_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(previous_limit, DEEP_RECURSION_LIMIT))
        try:
            thread.start()
            thread.join()
        finally:
            sys.setrecursionlimit(previous_limit)
    except (ValueError, RuntimeError, MemoryError) as error:  # no thread of that size on this platform
        return error
    finally:
        threading.stack_size(previous_size)
    return outcome[0]


class _TooDeep(Exception):
    """The code nests deeper than the current stack lets the parsers or the walk follow."""


def _lint_text(text: str, display: str, settings: Settings, relative: Optional[str], project: Project,
               deep: bool = True, parsed: Optional[dict[str, cst.Module]] = None,
               tree: Optional[ast.Module] = None) -> list[Diagnostic]:
    """`parsed`: libcst modules by source text, shared by the two tries of `lint_text_with_dependencies` (libcst
    takes time quadratic in the length of a chain of calls to read one: it is read once); `tree`: the `ast` of
    `text`, when it was parsed already."""
    codes = settings.codes_for(relative if relative is not None else display)
    registry = all_rules()
    rule_classes = [registry[code] for code in sorted(codes) if code in registry]
    where = relative if relative is not None else display
    if is_test_path(where) or is_export_path(where):
        # Tests run once, on small inputs, and export code once per export (a dry run, a trace): what costs time or
        # memory per step does not matter there.
        rule_classes = [cls for cls in rule_classes if not (cls.hot_path_only or cls.reports_a_cost)]
    if not rule_classes:
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. invalid escape sequences: not ours to report
            # Newer syntax than this Python's is parsed downgraded; the language server keeps the statements
            # an edit left alone from the tree of an earlier text.
            cache = tree_module.PARSE_CACHE
            if tree is None:
                tree = cache.syntax_tree(text, parse_source) if cache is not None else parse_source(text)
    except SyntaxError as error:
        return [_reserved(display, SYNTAX_ERROR, f"syntax error: {error.msg}", error.lineno or 1, max(error.offset or 1, 1))]
    except RecursionError as error:
        if not deep:
            raise _TooDeep() from error
        return [_reserved(display, SYNTAX_ERROR, "syntax error: too many nested parentheses or calls to compile")]
    except (ValueError, MemoryError) as error:
        return [_reserved(display, SYNTAX_ERROR, f"syntax error: {error}".splitlines()[0])]
    original = text
    text = _without_lone_continuations(text, tree)
    # Parse with libcst only the statements an enabled rule can fire in (see viewlint.prefilter).
    try:
        index = build_index_from_ast(tree, text)
        if text is original:
            remember_linted(project.path, text, index)  # other files of the run may import this module
        # A form feed resets the indentation count where CPython reads it and libcst drops it: the
        # prefilter's segments could miss a member after one, so such (rare) files take the full path.
        prefilter = settings.prefilter and "\x0c" not in text
        reduction = reduce(text, tree, rule_classes, settings, index, project) if prefilter else None
    except RecursionError as error:
        if not deep:
            raise _TooDeep() from error
        return [_reserved(display, INTERNAL_ERROR, "internal error: code nested too deeply to analyse")]
    except Exception as error:  # a bug in the index or the prefilter must not stop the other files
        return [_reserved(display, INTERNAL_ERROR, f"internal error in the prefilter: {type(error).__name__}: {error}")]
    if prefilter and reduction is None:
        index.memo.clear()  # the call graph there points back at the index
        return []
    reduced = reduction.text if reduction is not None else text
    rows = reduction.rows if reduction is not None else None
    module: Optional[cst.Module] = None
    if len(reduced) <= PIECE_BYTES:
        try:
            if tree_module.PARSE_CACHE is not None:  # the language server: statements parsed in an earlier lint are reused
                module = tree_module.PARSE_CACHE.module(reduced, _piece_starts(reduced, tree, reduction), parse_module)
            else:
                module = parsed.get(reduced) if parsed is not None else None
                if module is None:
                    module = parse_module(reduced)
                    if parsed is not None:
                        parsed.clear()
                        parsed[reduced] = module
        except cst.ParserSyntaxError as error:
            if parsed_or_none(text) is not None:  # valid Python (of this version, or newer syntax)
                module = None  # valid Python that libcst cannot read: lint it statement by statement
            else:
                row, column, message = _syntax_error_details(text, error, reduction)
                return [_reserved(display, SYNTAX_ERROR, f"syntax error: {message}", row, column)]
        except RecursionError as error:
            if not deep:
                raise _TooDeep() from error
            return [_reserved(display, SYNTAX_ERROR, "syntax error: expression nested too deeply to parse")]
        except Exception as error:  # libcst's native parser can raise other errors on odd input
            return [_reserved(display, SYNTAX_ERROR, f"syntax error: {error}".splitlines()[0])]

    diagnostics: list[Diagnostic] = []
    try:
        if module is not None:
            activity = _activity(module, tree, reduction) if reduction is not None and reduction.active else None
            if rows is not None:
                index.memo["kept rows"] = rows  # what the walk will not see (`viewlint.analysis.rebinding`)
            facts = _walk(module, settings, index, project, rule_classes, activity)
            diagnostics.extend(_reserved(display, INTERNAL_ERROR, f"internal error in rule {code}: {message}")
                               for code, message in facts.errors)
            if facts.reports:
                diagnostics.extend(resolve(module, facts.reports, display, (tree, rows), reduction))
            facts.close()
        else:
            diagnostics.extend(_lint_pieces(reduced, tree, reduction, display, settings, index, project, rule_classes))
    except RecursionError as error:
        if not deep:
            raise _TooDeep() from error
        return [_reserved(display, INTERNAL_ERROR, "internal error: code nested too deeply to analyse")]
    except Exception as error:
        return [_reserved(display, INTERNAL_ERROR, f"internal error in the analysis: {type(error).__name__}: {error}")]
    index.memo.clear()
    if not settings.ignore_noqa and diagnostics:
        suppressions = Suppressions.from_source(text)
        diagnostics = [
            d for d in diagnostics
            if d.code in (SYNTAX_ERROR, INTERNAL_ERROR) or not suppressions.is_suppressed(d.code, d.start.row, d.statement_rows)
        ]
    return sorted(set(diagnostics), key=lambda d: d.sort_key)




# Parsed text longer than this is parsed, walked and resolved a piece at a time (runs of whole
# module-level statements about this long): libcst's tree takes ~700 bytes of memory per byte of
# source, so a generated file of megabytes would otherwise need gigabytes, and everything kept per
# statement stays bounded. Values bound at module level carry from one piece to the next.
PIECE_BYTES = 256 * 1024


_LONE_CONTINUATION = re.compile(r"^[ \t]*\\[ \t]*(?:\r\n|\r|\n)", re.MULTILINE)


def _without_lone_continuations(text: str, tree: ast.Module) -> str:
    """`text` with each line that holds only a `\\` outside string literals made blank (its line
    ending kept). CPython joins such a line to the next one and reads nothing from it; libcst
    cannot parse it and would leave out the whole statement around it. Rows and columns stay."""
    if _LONE_CONTINUATION.search(text) is None:
        return text
    inside: set[int] = set()  # rows inside multi-line strings, where a `\\` line is text
    for node in ast.walk(tree):
        if isinstance(node, (ast.Constant, ast.JoinedStr)) and node.end_lineno is not None and node.end_lineno > node.lineno:
            inside.update(range(node.lineno + 1, node.end_lineno + 1))
    lines = split_lines(text)
    rows = [content for content, _ in lines]
    endings = [ending for _, ending in lines]
    continued = False  # the row before ends in a `\\` that joins this one to its statement
    for number, content in enumerate(rows, start=1):
        if not continued and number not in inside and endings[number - 1] and content.strip(" \t") == "\\":
            rows[number - 1] = ""  # it starts a logical line (and so may the next ones like it): nothing to read
            continue
        continued = content.endswith("\\")  # `x = a + \\` then a `\\` row: part of the statement, kept
    return "".join(content + ending for content, ending in zip(rows, endings))


def _walk(module: cst.Module, settings: Settings, index: Any, project: Project, rule_classes: list[type],
          activity: Optional[dict[int, frozenset[str]]], module_values: Optional[dict[str, Any]] = None) -> Facts:
    """Walk one module (or one piece of it) with fresh facts and rules; `module_values`: what the
    module level bound before this piece."""
    facts = Facts(module, settings, index, ModuleSummaries(index, module, settings, callgraph_of(index), project))
    if module_values:
        facts._scopes[0].update(module_values)
    rules = [cls(facts, settings.options_for(cls.code)) for cls in rule_classes]
    Walker(facts, rules, activity).walk(module)
    return facts


def _piece_starts(text: str, tree: ast.Module, reduction: Optional[Reduction]) -> list[int]:
    """Rows of `text` where a module-level statement (with its decorators) starts: where the text
    can be cut into pieces that parse alone."""
    inverse: Optional[dict[int, int]] = None
    if reduction is not None and reduction.line_map:
        inverse = {file_row: k for k, file_row in enumerate(reduction.line_map, start=1)}
    lines = split_lines(text)
    starts = []
    for statement in tree.body:
        first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
        row = inverse.get(first) if inverse is not None else first
        if row is not None and statement.col_offset == 0:
            # A line holding only a `\` joins the statement's logical line: it starts there, not with the
            # statement before (whose piece would end in a dangling continuation libcst cannot read).
            while row > 1 and lines[row - 2][0].strip() == "\\":
                row -= 1
            starts.append(row)
    return sorted(set(starts))


def _lint_pieces(text: str, tree: ast.Module, reduction: Optional[Reduction], display: str, settings: Settings,
                 index: Any, project: Project, rule_classes: list[type]) -> list[Diagnostic]:
    """Lint `text` a run of module-level statements at a time (see PIECE_BYTES); a statement that
    libcst cannot parse although CPython can (`(y): int = 1`) is left out, not the whole file."""
    lines = [content + ending for content, ending in split_lines(text)]
    starts = _piece_starts(text, tree, reduction)
    if not starts or starts[0] != 1:
        starts = [1, *starts]
    bounds = starts + [len(lines) + 1]
    groups: list[tuple[int, int]] = []
    first, size = bounds[0], 0
    for row, following in zip(bounds, bounds[1:]):
        size += sum(len(line) for line in lines[row - 1:following - 1])
        if size >= PIECE_BYTES:
            groups.append((first, following))
            first, size = following, 0
    if first < bounds[-1]:
        groups.append((first, bounds[-1]))
    diagnostics: list[Diagnostic] = []
    module_values: dict[str, Any] = {}
    if reduction is not None:
        index.memo["kept rows"] = reduction.rows  # what the walk will not see (`viewlint.analysis.rebinding`)
    pending = list(reversed(groups))
    while pending:
        first, last = pending.pop()
        piece = "".join(lines[first - 1:last - 1])
        try:
            module = parse_module(piece)
        except cst.ParserSyntaxError:
            inner = [row for row in bounds if first < row < last]
            if inner:  # try the statements one at a time, to leave out only the one libcst cannot read
                cuts = [first, *inner, last]
                pending.extend(reversed(list(zip(cuts, cuts[1:]))))
            else:
                diagnostics.append(_left_out(display, lines, first, last, reduction))
            continue
        shift = first - 1
        file_row = (lambda row, shift=shift: reduction.file_row(row + shift)) if reduction is not None \
            else (lambda row, shift=shift: row + shift)
        low, high = file_row(1), file_row(last - first)
        statements = [statement for statement in tree.body if low <= statement.lineno <= high]
        # The `ast` twins of the piece's functions and loops (`ContextStack.ast_of`): its own statements.
        register_twins(index.memo, module, ast.Module(body=statements, type_ignores=[]),
                       reduction.rows if reduction is not None else None)
        facts = _walk(module, settings, index, project, rule_classes, None, module_values)
        module_values = dict(facts._scopes[0])
        diagnostics.extend(_reserved(display, INTERNAL_ERROR, f"internal error in rule {code}: {message}")
                           for code, message in facts.errors)
        if facts.reports:
            # Positions statement by statement, as for a file in one piece: printing the whole piece to find them
            # cost a third of the time of a large file.
            located = (ast.Module(body=statements, type_ignores=[]), reduction.rows if reduction is not None else None)
            diagnostics.extend(resolve(module, facts.reports, display, located, reduction, file_row=file_row))
        facts.close()
    return diagnostics


def _left_out(display: str, lines: list[str], first: int, last: int, reduction: Optional[Reduction]) -> Diagnostic:
    """The VL000 that says a statement was left out (rows `first` to `last`, excluded, of the linted text), and why:
    its findings are missing, and the file must not look clean for them."""
    rows = [row for row in range(first, last) if lines[row - 1].strip()] or [first]
    start, end = (reduction.file_row(rows[0]), reduction.file_row(rows[-1])) if reduction is not None else (rows[0], rows[-1])
    text = " ".join(lines[rows[0] - 1].split())
    shown = text if len(text) <= 40 else text[:39] + "…"
    span = f"line {start}" if start == end else f"lines {start}-{end}"
    message = (f"statement not analysed ({span}: `{shown}`): Python accepts it but viewlint's parser (libcst) "
               f"cannot read it; findings in it are not reported")
    return _reserved(display, SYNTAX_ERROR, message, start, len(lines[rows[0] - 1]) - len(lines[rows[0] - 1].lstrip()) + 1)


def _syntax_error_details(text: str, error: cst.ParserSyntaxError, reduction: Optional[Reduction] = None) -> tuple[int, int, str]:
    """Row, 1-based column and message of a syntax error.

    libcst's native parser often points at the start of the line (or the wrong line for
    tokenizer errors), so ask CPython's parser, which pinpoints it, and fall back to libcst.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. invalid escape sequences: not ours to report
            compile(text, "<viewlint>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as python_error:
        if python_error.lineno:
            return python_error.lineno, max(python_error.offset or 1, 1), python_error.msg
    except (ValueError, RecursionError, MemoryError):
        pass
    first_line = str(error.message).splitlines()[0] if error.message else ""
    message = re.sub(r"^(parser|tokenizer) error: (error at \d+:\d+: )?", "", first_line) or "invalid syntax"
    row = reduction.file_row(error.raw_line) if reduction is not None else error.raw_line
    return row, error.raw_column + 1, message


def _activity(module: cst.Module, tree: ast.Module, reduction: Reduction) -> Optional[dict[int, frozenset[str]]]:
    """For each parsed module-level statement and class member (by `id`), the rules that can fire
    in it; None when the parsed statements cannot be matched to rows (then every rule runs everywhere)."""
    starts = present_starts(tree.body, reduction.rows)
    if len(starts) != len(module.body):
        return None
    by_row = {statement.lineno: statement for statement in reversed(tree.body)}
    active = reduction.active
    activity: dict[int, frozenset[str]] = {}
    for statement, row in zip(module.body, starts):
        original = by_row.get(row)
        if isinstance(statement, cst.ClassDef) and isinstance(original, ast.ClassDef):
            if isinstance(statement.body, cst.IndentedBlock):
                members = statement.body.body
                member_rows = present_starts(original.body, reduction.rows)
                if len(member_rows) == len(members):
                    for member, member_row in zip(members, member_rows):
                        codes = active.get(member_row)
                        if codes is not None:
                            activity[id(member)] = codes
            continue
        codes = active.get(row)
        if codes is not None:
            activity[id(statement)] = codes
    return activity


def lint_path(path: Path, display: str, settings: Settings, relative: Optional[str] = None) -> FileResult:
    """Read and lint one file (a Jupyter notebook by its code cells)."""
    if is_notebook(path):
        data, problem = read_bytes(path, display)
        if problem is not None:
            return FileResult(display, [problem], None)
        assert data is not None
        diagnostics, _, text = lint_notebook(data, display, settings, relative)
        return FileResult(display, diagnostics, text)
    text, problem = read_file(path, display)
    if problem is not None:
        return FileResult(display, [problem], None)
    assert text is not None
    return FileResult(display, lint_text(text, display, settings, relative), text)


def lint_notebook(data: bytes, display: str, settings: Settings,
                  relative: Optional[str] = None) -> tuple[list[Diagnostic], dict[str, str], Optional[str]]:
    """Lint a Jupyter notebook's bytes: its code cells as one module, findings in their cells.

    Returns the diagnostics, the project modules they rely on, and the linted module's text
    (`Notebook.python_source`; None for a notebook that cannot be read, reported as VL001).
    """
    try:
        notebook = Notebook.from_bytes(data)
    except NotebookError as error:
        return [_reserved(display, IO_ERROR, f"invalid notebook: {error}")], {}, None
    if not notebook.is_python:
        return [], {}, notebook.python_source
    diagnostics, dependencies = lint_text_with_dependencies(notebook.python_source, display, settings, relative)
    located = sorted((notebook.locate(d) for d in diagnostics), key=lambda d: d.sort_key)
    return located, dependencies, notebook.python_source


def settings_relative(path: Path, settings: Settings) -> str:
    """`path` relative to the project root (where per-file settings and the cache key it)."""
    try:
        return os.path.relpath(path.absolute(), settings.project_root)
    except ValueError:  # another drive on Windows
        return str(path)


def cached(source_file: "SourceFile", cache: "Cache") -> Optional[FileResult]:
    """The stored result for a file whose bytes and settings have not changed, or None."""
    if source_file.error is not None:
        return None
    try:
        data = read_regular_file(source_file.path, MAX_FILE_BYTES)
    except OSError:
        return None
    display = str(source_file.path)
    stored = cache.get(cache.key(data, source_file.settings.fingerprint(), display))
    return FileResult(display, stored, None, from_cache=True) if stored is not None else None


def process(source_file: "SourceFile", cache: Optional["Cache"]) -> FileResult:
    """Lint one discovered file, through the cache when one is given."""
    display = str(source_file.path)
    if source_file.error is not None:
        what = "directory" if source_file.is_directory else "file"
        return FileResult(display, [_reserved(display, IO_ERROR, f"cannot read {what}: {source_file.error}")])
    path = source_file.path
    settings = source_file.settings
    relative = settings_relative(path, settings)
    if cache is None:
        return lint_path(path, display, settings, relative)
    text, problem = None, None
    try:
        data = read_regular_file(path, MAX_FILE_BYTES)
    except OSError:
        return lint_path(path, display, settings, relative)  # reports the error
    key = cache.key(data, settings.fingerprint(), display)
    stored = cache.get(key)
    if stored is not None:
        return FileResult(display, stored, None, from_cache=True)
    dependencies: dict[str, str] = {}
    if is_notebook(path):
        diagnostics, dependencies, text = lint_notebook(data, display, settings, relative)
    else:
        try:
            text = decode_source(data)
        except DecodeError as error:
            problem = _reserved(display, IO_ERROR, str(error), error.row, error.column)
        if problem is not None:
            diagnostics = [problem]
        else:
            diagnostics, dependencies = lint_text_with_dependencies(text or "", display, settings, relative)
    if not any(d.code == INTERNAL_ERROR for d in diagnostics):
        cache.put(key, diagnostics, dependencies)
    return FileResult(display, diagnostics, text)


def _process_batch(batch: list["SourceFile"], cache_directory: Optional[str]) -> list[FileResult]:
    from viewlint.cache import Cache

    cache = Cache(Path(cache_directory)) if cache_directory else None
    results = []
    for source_file in batch:
        results.append(process(source_file, cache))
        _after_file()
    for result in results:
        if not result.diagnostics:
            result.source = None  # only files with findings need their text back (`full` output, --add-noqa)
    return results


def _warm_worker() -> None:
    all_rules()  # discover rules once per worker, not once per file


# Set while `few_collections` holds the collector off: each linted file is followed by a collection
# of the objects made since the one before (inherited by forked workers).
_COLLECT_AFTER_EACH_FILE = False


@contextlib.contextmanager
def few_collections() -> Iterator[None]:
    """Keep the cyclic garbage collector out of the linting, and collect once after each file.

    Parsing builds millions of small nodes (ast and libcst), alive until the file is done, then
    freed by reference counting, except for the few held in reference cycles. An automatic
    collection, whatever its thresholds, scans the young nodes while they are still alive and
    moves them to the older generations, which later collections scan again: about a third of
    the run on sglang. Collecting only between files scans just what outlived its file (the
    cycles, the results). Objects alive before linting starts (imported modules, rules) are
    frozen out of the scans; every setting is restored after.
    """
    global _COLLECT_AFTER_EACH_FILE
    enabled, previous = gc.isenabled(), _COLLECT_AFTER_EACH_FILE
    gc.freeze()
    gc.disable()
    _COLLECT_AFTER_EACH_FILE = True
    try:
        yield
    finally:
        _COLLECT_AFTER_EACH_FILE = previous
        if enabled:
            gc.enable()
        gc.unfreeze()


def _after_file() -> None:
    if _COLLECT_AFTER_EACH_FILE:
        gc.collect(0)


def run(files: Sequence["SourceFile"], jobs: int, cache_directory: Optional[Path],
        progress: Optional[Callable[[int], None]] = None) -> list[FileResult]:
    """Lint files in parallel; results come back in the order of `files` whatever `jobs` is.
    ``progress(n)`` is called as each n more files are done (for a progress bar)."""
    with few_collections():
        return _run(files, jobs, cache_directory, progress)


def _run(files: Sequence["SourceFile"], jobs: int, cache_directory: Optional[Path],
         progress: Optional[Callable[[int], None]]) -> list[FileResult]:
    directory = str(cache_directory) if cache_directory else None
    jobs = max(1, jobs)
    if directory is not None and jobs > 1:
        # Cache hits are read here: a warm run (or one with a few files touched) needs no workers.
        from viewlint.cache import Cache

        cache = Cache(Path(directory))
        hits = [cached(source_file, cache) for source_file in files]
        missing = [source_file for source_file, hit in zip(files, hits) if hit is None]
        if len(missing) < len(files):
            if progress is not None:
                progress(len(files) - len(missing))
            linted = iter(_run(missing, jobs, cache_directory, progress) if missing else [])
            return [hit if hit is not None else next(linted) for hit in hits]
    if jobs == 1 or len(files) < 4:
        from viewlint.interrupts import in_worker

        if progress is None:
            return in_worker(_process_batch, list(files), directory)  # type: ignore[no-any-return]
        results = []
        for start in range(0, len(files), 16):  # in pieces, for the progress bar
            results.extend(in_worker(_process_batch, list(files[start:start + 16]), directory))
            progress(len(files[start:start + 16]))
        return results
    # Small batches keep both workers busy to the end; large enough to amortise pickling.
    size = max(1, min(32, len(files) // (jobs * 8) or 1))
    batches = [list(files[i:i + size]) for i in range(0, len(files), size)]
    from viewlint.interrupts import worker_pool

    with worker_pool(jobs, initializer=_warm_worker) as pool:
        results: list[FileResult] = []
        for batch_result in pool.map(_process_batch, batches, [directory] * len(batches)):
            results.extend(batch_result)
            if progress is not None:
                progress(len(batch_result))
    return results


if False:  # typing only, without import cycles at runtime
    from viewlint.cache import Cache
    from viewlint.files import SourceFile
