"""Parse source written for a newer Python than the one running viewlint.

viewlint analyses a file with the running interpreter's `ast` and finds positions and fixes
with libcst, whose parser knows every grammar up to 3.13. When `ast.parse` rejects a file
that libcst accepts, the file usually uses syntax newer than the interpreter: PEP 695 type
parameters and `type` statements (3.12), PEP 701 f-strings (3.12), `except*` (3.11), `match`
(3.10). `parse_source` then parses a *downgraded* copy instead: the same text with each such
construct rewritten in place into older syntax of the same shape, each line keeping its length
in UTF-8 bytes (what `ast` columns count), so every other node keeps its row and column and the
findings elsewhere in the file come out where they are.

The rewrites (each keeps every newline where it was):

- `def f[T](x)`, `class C[T]:`, `type X[T] = …`: the brackets and what is in them become
  spaces (a `\\` before each newline when they span lines).
- `type X = v` becomes `pass;X = v` (so `X` is still bound where it stands).
- an f-string the old grammar rejects (nested quotes, a comment or newline in a replacement
  field) becomes a plain string of blanks between the same quotes.
- `except* E:` becomes `except  E:`.
- `match s:` becomes `if    s:` (an unparenthesised tuple subject becomes `()` of blanks),
  `case P if g:` becomes `if (  ) or g:` and `case P:` becomes `if (  ):`.

The expressions inside a rewritten f-string, `match` pattern or type parameter list are
invisible to the `ast` side (libcst still sees them); everything else is analysed as usual.
"""

from __future__ import annotations

import ast
import bisect
import re
import warnings
from contextlib import contextmanager
from typing import Iterator, Optional

import libcst as cst
from libcst._nodes.internal import CodegenState

from viewlint.analysis.tree import parse_module

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class _CannotDowngrade(Exception):
    """A construct whose rewrite could not keep every position (e.g. an empty line inside it)."""


def parse_source(text: str) -> ast.Module:
    """`ast.parse(text)`, or, when the running Python's grammar is too old for the text, the tree
    of its downgraded copy (same rows and byte columns). Raises SyntaxError for text no Python
    accepts: at the mistake when it can tell newer syntax from mistakes, else where CPython does."""
    try:
        return ast.parse(text)
    except SyntaxError as error:
        original = error
    try:
        return _parse_newer(text, original)
    except SyntaxError:
        raise
    except Exception:  # a construct this module does not foresee: the interpreter's own error stands
        raise original from None


def _parse_newer(text: str, original: SyntaxError) -> ast.Module:
    try:
        module = parse_module(text)
    except cst.ParserSyntaxError as error:
        raise _genuine_error(text, error.raw_line, error.raw_column, original) from None
    except Exception:  # libcst's parser fails in other ways on odd input (or nesting too deep)
        raise original from None
    downgraded = _downgrade_module(text, module)
    if downgraded is None:
        raise original
    return _parse_downgraded(*downgraded, original)


def downgrade(text: str) -> Optional[tuple[str, set[int]]]:
    """The text with newer-than-running-Python syntax rewritten in place, and the rows touched;
    None when libcst cannot parse the text either or there is nothing to rewrite."""
    try:
        module = parse_module(text)
    except Exception:  # libcst's parser raises its own error types
        return None
    return _downgrade_module(text, module)


def _parse_downgraded(text: str, touched_rows: set[int], original: SyntaxError) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as error:
        # A genuine error outside what was rewritten is reported where it is; one inside, as CPython saw it.
        if error.lineno is not None and error.lineno not in touched_rows:
            raise error from None
        raise original from None


# A line that may hold syntax newer than the running Python's (checked properly before it counts).
_NEWER_SYNTAX_HINT = re.compile(
    r"^\s*(?:type\s|match\b|case\b|except\s*\*|(?:async\s+)?def\s+\w+\s*\[|class\s+\w+\s*\[)|\b(?:[rR]?[fF]|[fF][rR])['\"]")
_PREFIX_TRIES = 5


def _genuine_error(text: str, row: int, column: int, original: SyntaxError) -> SyntaxError:
    """The syntax error to report when libcst, which knows the newer grammar, fails too, at `row`.

    When CPython stopped earlier, on syntax that is only newer, the mistake is further on: let
    CPython pinpoint it in the text with the rows above `row` downgraded, or else take libcst's row.
    """
    starts = [0] + [match.end() for match in _LINE_BREAK.finditer(text)]
    first = original.lineno
    if first is None or row <= first or first > len(starts) \
            or not _NEWER_SYNTAX_HINT.search(text, starts[first - 1], starts[first] if first < len(starts) else len(text)):
        return original
    if not _is_newer_syntax(text, starts, first, row):
        return original
    cut = starts[row - 1]
    downgraded = downgrade(text[:cut])
    if downgraded is not None:
        prefix, touched_rows = downgraded
        try:
            ast.parse(prefix + text[cut:])
        except SyntaxError as error:
            if error.lineno is not None and error.lineno not in touched_rows:
                return error
    error = SyntaxError("invalid syntax")
    error.lineno, error.offset = row, column + 1
    return error


def _is_newer_syntax(text: str, starts: list[int], error_row: int, libcst_row: int) -> bool:
    """Whether CPython's error row holds newer syntax: the first whole statements through it that
    libcst parses get rewritten there."""
    for last_row in range(error_row, min(libcst_row, error_row + _PREFIX_TRIES)):
        prefix = text[:starts[last_row]] if last_row < len(starts) else text
        try:
            module = parse_module(prefix)
        except Exception:
            continue  # the statement goes on past `last_row`
        downgraded = _downgrade_module(prefix, module)
        return downgraded is not None and error_row in downgraded[1]
    return False


def _downgrade_module(text: str, module: cst.Module) -> Optional[tuple[str, set[int]]]:
    try:
        recorder = _SpanRecorder(module)
        module._codegen(recorder)
        rewriter = _Rewriter(text, recorder.spans)
        for node in recorder.spans:
            if isinstance(node, cst.TypeParameters):
                rewriter.blank_brackets(node)
            elif isinstance(node, cst.TypeAlias):
                rewriter.type_alias(node)
            elif isinstance(node, cst.ExceptStarHandler):
                rewriter.except_star(node)
            elif isinstance(node, cst.Match):
                rewriter.match(node)
        rewriter.formatted_strings([node for node in recorder.spans if isinstance(node, cst.FormattedString)])
    except Exception:  # _CannotDowngrade, nesting too deep, or a shape not foreseen here: no downgrade then
        return None
    if not rewriter.touched_rows:
        return None
    return "".join(rewriter.characters), rewriter.touched_rows


# The nodes a rewrite starts from; inside a `match`, every node (its parts are addressed too).
_REWRITTEN = (cst.TypeParameters, cst.TypeAlias, cst.ExceptStarHandler, cst.Match, cst.FormattedString)


class _SpanRecorder(CodegenState):
    """libcst's code generation, counting characters only, noting the syntactic span (start and end
    offsets, parentheses excluded) of the nodes the rewrites need. libcst's PositionProvider
    computes rows and columns for every node, several times slower."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.offset = 0
        self.spans: dict[cst.CSTNode, tuple[int, int]] = {}
        self._starts: list[int] = []
        self._inside_match = 0

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.offset += len(value)

    def pop_trailing_newline(self) -> None:
        pass  # the end of the file: no span ends after it

    def before_codegen(self, node: cst.CSTNode) -> None:
        if self._inside_match or isinstance(node, _REWRITTEN):
            self._starts.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        # The whole code of nodes that note no syntactic span themselves (brackets, type parameters).
        if self._inside_match or isinstance(node, _REWRITTEN):
            self.spans.setdefault(node, (self._starts.pop(), self.offset))

    @contextmanager
    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None,
                                  end_node: Optional[cst.CSTNode] = None) -> Iterator[None]:
        start = self.offset
        is_match = type(node) is cst.Match
        self._inside_match += is_match
        try:
            yield
        finally:
            self._inside_match -= is_match
            if self._inside_match or isinstance(node, _REWRITTEN):
                self.spans[node] = (start, self.offset)


class _Rewriter:
    """Edits on the characters of a text, addressed by offsets from libcst's code generation, that keep every line's
    length in UTF-8 bytes (what `ast` columns count): a character is only ever replaced by ASCII
    of its own encoded width."""

    def __init__(self, text: str, spans: dict[cst.CSTNode, tuple[int, int]]) -> None:
        self.text = text
        self.characters = list(text)  # one entry per character of `text`: what it becomes
        self.spans = spans
        self.touched_rows: set[int] = set()
        self._line_starts = [0] + [match.end() for match in _LINE_BREAK.finditer(text)]
        self._blanked: list[tuple[int, int]] = []  # spans already rewritten, sorted

    # -- addressing

    def _span(self, node: cst.CSTNode) -> tuple[int, int]:
        """Start and end offsets of a node, its own parentheses included."""
        lpar, rpar = getattr(node, "lpar", ()), getattr(node, "rpar", ())
        return self.spans[lpar[0] if lpar else node][0], self.spans[rpar[-1] if rpar else node][1]

    def _row(self, offset: int) -> int:
        return bisect.bisect_right(self._line_starts, offset)

    def _expect(self, offset: int, word: str) -> None:
        if self.text[offset:offset + len(word)] != word:
            raise _CannotDowngrade(f"expected {word!r} at offset {offset}")

    # -- edits

    def _set(self, offset: int, character: str, padding_first: bool = False) -> None:
        """Replace the character at `offset` by an ASCII one, padded with spaces to its width."""
        if self.text[offset] in "\r\n":
            raise _CannotDowngrade("an edit would move a line break")
        padding = " " * (len(self.text[offset].encode("utf-8", "surrogatepass")) - 1)
        self.characters[offset] = padding + character if padding_first else character + padding

    def _put(self, offset: int, replacement: str) -> None:
        for index, character in enumerate(replacement):
            self._set(offset + index, character)
        self.touched_rows.add(self._row(offset))

    def _blank(self, start: int, end: int, continue_lines: bool, keep: tuple[int, int] = (0, 0)) -> None:
        """Spaces over [start, end) except line breaks and the first/last `keep` characters; with
        `continue_lines`, a `\\` before each line break so that the statement goes on."""
        first, last = start + keep[0], end - keep[1]
        for offset in range(first, last):
            if self.text[offset] not in "\r\n":
                self._set(offset, " ")
        self.touched_rows.update(range(self._row(start), self._row(max(start, end - 1)) + 1))
        bisect.insort(self._blanked, (start, end))
        if continue_lines:
            for match in _LINE_BREAK.finditer(self.text, start, end):
                before = match.start() - 1
                if before < first or self.text[before] in "\r\n":
                    raise _CannotDowngrade("no room for a line continuation")
                self._set(before, "\\", padding_first=True)  # the backslash must end the line

    def _inside_blanked(self, start: int, end: int) -> bool:
        """Whether [start, end) lies in a span already rewritten (spans are disjoint, kept sorted)."""
        index = bisect.bisect_right(self._blanked, (start, len(self.text) + 1)) - 1
        return index >= 0 and self._blanked[index][1] >= end

    # -- the constructs

    def blank_brackets(self, node: cst.TypeParameters) -> None:
        """`[T, *Ts, **P]` after a def, class or type name: spaces."""
        start, end = self._span(node)
        self._expect(start, "[")
        self._expect(end - 1, "]")
        self._blank(start, end, continue_lines=True)

    def type_alias(self, node: cst.TypeAlias) -> None:
        """`type X = v` -> `pass;X = v`: `X` is still bound, at its own position."""
        start, _ = self._span(node)
        self._expect(start, "type")
        if self.text[start + len("type")] not in " \t":
            raise _CannotDowngrade("no blank after `type`")
        self._put(start, "pass;")

    def except_star(self, node: cst.ExceptStarHandler) -> None:
        """`except* E:` -> `except  E:`."""
        start, _ = self._span(node)
        star = start + len("except") + len(node.whitespace_after_except.value)
        self._expect(star, "*")
        self._put(star, " ")

    def match(self, node: cst.Match) -> None:
        start, _ = self._span(node)
        self._expect(start, "match")
        self._put(start, "if   ")
        subject = node.subject
        if isinstance(subject, cst.Tuple) and not subject.lpar:  # `match a, b:` -> `if    ( ):`
            subject_start, subject_end = self._span(subject)
            self._blank(subject_start, subject_end, continue_lines=False)
            self._put(subject_start, "(")
            self._put(subject_end - 1, ")")
        for case in node.cases:
            self._case(case)

    def _case(self, case: cst.MatchCase) -> None:
        """`case P if g:` -> `if (  ) or g:`; `case P:` -> `if (  ):` (the pattern is not an expression)."""
        start, _ = self._span(case)
        self._expect(start, "case")
        if case.guard is not None:
            guard_start, _ = self._span(case.guard)
            keyword = guard_start - len(case.whitespace_after_if.value) - len("if")
            self._expect(keyword, "if")
            self._put(keyword, "or")
            pattern_end = keyword
        else:
            _, pattern_end = self._span(case.pattern)
            pattern_end += len(case.whitespace_before_colon.value)
            self._expect(pattern_end, ":")
        # Everything between `case` and the `if`/`:` (pattern, its brackets, comments) is inside `( … )`.
        self._blank(start + len("case"), pattern_end, continue_lines=False)
        self._put(start, "if (")
        last = pattern_end - 1
        while last > start + len("case") and self.text[last] in "\r\n":
            last -= 1
        if last <= start + len("case"):
            raise _CannotDowngrade("no room to close the pattern")
        self._put(last, ")")

    def formatted_strings(self, strings: list[cst.FormattedString]) -> None:
        """Each f-string that the running Python cannot parse on its own -> blanks between its quotes."""
        spans = sorted((self.spans[node] + (node,) for node in strings), key=lambda item: (item[0], -item[1]))
        for start, end, node in spans:
            if self._inside_blanked(start, end) or _parses_alone(self.text[start:end]):
                continue
            quote = node.end  # `"`, `'`, `"""` or `'''`
            opening = len(node.start)  # prefix and quote
            self._expect(start + opening - len(quote), quote)
            self._expect(end - len(quote), quote)
            self._blank(start, end, continue_lines=len(quote) == 1, keep=(opening, len(quote)))
            self._put(start, quote + " " * (opening - len(quote)))


def _parses_alone(expression: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(f"(\n{expression}\n)", mode="eval")
    except (SyntaxError, ValueError):
        return False
    return True
