"""Writing text to the terminal and to output files without ever failing on a character.

Two kinds of text cannot be encoded as they are: characters the output encoding lacks
(`…` under `PYTHONIOENCODING=latin-1`), and the bytes of a file name that is not valid
UTF-8, which Python carries as lone surrogates. The ``viewlint-output`` error handler
writes the latter back as the original bytes (as `ls` shows the name) and spells the
former in ASCII, so output never raises UnicodeEncodeError.
"""

from __future__ import annotations

import codecs
import io
import os
import sys
from typing import Optional

__all__ = ["ERRORS", "protect_standard_streams", "silence_stdout", "write_stdout"]

ERRORS = "viewlint-output"

# The non-ASCII characters viewlint's own messages use, spelled for an ASCII-only terminal.
_ASCII_SPELLING = {"\u2026": "...", "\u2014": "--", "\u2013": "-", "\u00d7": "x", "\u2192": "->"}


def _replace_unencodable(error: UnicodeError) -> tuple[bytes, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    pieces = []
    for character in error.object[error.start:error.end]:
        code = ord(character)
        if 0xDC80 <= code <= 0xDCFF:  # surrogateescape's stand-in for one undecodable byte
            pieces.append(bytes([code - 0xDC00]))
        else:
            spelling = _ASCII_SPELLING.get(character) or character.encode("ascii", "backslashreplace").decode("ascii")
            pieces.append(spelling.encode("ascii"))
    return b"".join(pieces), error.end


codecs.register_error(ERRORS, _replace_unencodable)


def _protect(stream: Optional[object]) -> None:
    if isinstance(stream, io.TextIOWrapper):
        try:
            stream.reconfigure(errors=ERRORS)
        except (ValueError, OSError):  # a closed or detached stream: nothing will be written to it
            pass


def protect_standard_streams() -> None:
    """Make stdout and stderr use the ``viewlint-output`` error handler (keeping their encoding)."""
    _protect(sys.stdout)
    _protect(sys.stderr)


def silence_stdout() -> None:
    """The reader of stdout went away (`viewlint ... | head`): send the rest to the null device,
    so neither later writes nor the flush at exit fail."""
    try:
        descriptor = sys.stdout.fileno() if sys.stdout is not None else None
    except (AttributeError, ValueError, OSError):  # not a real file (a test's capture)
        descriptor = None
    if descriptor is None:
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, descriptor)
    finally:
        os.close(null)


def write_stdout(text: str, *, colour: bool = False) -> None:
    """Write ``text`` to stdout; a closed pipe ends the output quietly, not the run (its exit code stays).
    ``colour``: keep its ANSI codes (click strips them when stdout is no terminal)."""
    import click

    try:
        click.echo(text, nl=False, color=True if colour else None)
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
