"""Positions between viewlint and an editor.

viewlint counts rows from 1 and columns from 1 in characters (code points). LSP counts lines
from 0 and characters from 0 in the units the client and server agreed on: UTF-16 code units
unless the client offered UTF-8 or UTF-32 (``general.positionEncodings``). A character outside
the Basic Multilingual Plane (an emoji) is one viewlint column but two UTF-16 units.
Lines end at ``\\r\\n``, ``\\r`` or ``\\n`` in both, as for Python's tokenizer.
"""

from __future__ import annotations

from typing import NamedTuple

from viewlint.diagnostics import Location
from viewlint.fix import LineIndex

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


class Position(NamedTuple):
    """An LSP position: 0-based line, 0-based offset in the encoding's units."""

    line: int
    character: int


def _units(character: str, encoding: str) -> int:
    """How many units of ``encoding`` one code point takes."""
    if encoding == UTF32:
        return 1
    point = ord(character)
    if encoding == UTF8:
        return 1 if point < 0x80 else 2 if point < 0x800 else 3 if point < 0x10000 else 4
    return 2 if point > 0xFFFF else 1


class PositionEncoder:
    """Converts positions in one text; build one per text version."""

    def __init__(self, text: str, encoding: str = UTF16) -> None:
        if encoding not in (UTF8, UTF16, UTF32):
            raise ValueError(f"unknown position encoding {encoding!r}")
        self.text = text
        self.encoding = encoding
        self.starts = LineIndex(text).starts

    def line_text(self, line: int) -> str:
        """Line ``line`` (0-based) without its line ending."""
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def to_lsp(self, location: Location) -> Position:
        """The LSP position of a viewlint location; one past the end is clamped to the end of the text."""
        line = location.row - 1
        if line >= len(self.starts):
            last = len(self.starts) - 1
            return Position(last, self.width(self.line_text(last)))
        prefix = self.line_text(max(line, 0))[: max(location.column - 1, 0)]
        return Position(max(line, 0), self.width(prefix))

    def to_location(self, position: Position) -> Location:
        """The viewlint location of an LSP position; an offset inside a character or past the line's end
        is moved to the end of that character or line (as LSP asks)."""
        if position.line >= len(self.starts):
            last = len(self.starts) - 1
            return Location(last + 1, len(self.line_text(last)) + 1)
        units = 0
        column = 1
        for character in self.line_text(position.line):
            if units >= position.character:
                break
            units += _units(character, self.encoding)
            column += 1
        return Location(position.line + 1, column)

    def width(self, text: str) -> int:
        """The length of ``text`` in the encoding's units."""
        if self.encoding == UTF32 or text.isascii():  # one unit per character in every encoding
            return len(text)
        return sum(_units(character, self.encoding) for character in text)
