"""What a terminal gets and a pipe does not: colour and a progress bar.

Colour follows Ruff's `--color auto|always|never`; with `auto`, `NO_COLOR` (https://no-color.org)
turns it off and `FORCE_COLOR` on, in that order of precedence (as Python 3.13's own
colouring), and otherwise only a terminal other than `TERM=dumb` gets it. The progress bar
goes to stderr, and only when stderr is a terminal: a pipe or a log file never sees it.
"""

from __future__ import annotations

import os
import time
from typing import IO, Any, Optional

__all__ = ["BOLD", "BOLD_RED", "CYAN", "COLOR_CHOICES", "ProgressBar", "colour_enabled", "paint"]

COLOR_CHOICES = ("auto", "always", "never")

BOLD, BOLD_RED, CYAN = "1", "1;31", "36"


def _is_terminal(stream: Optional[IO[Any]]) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError, OSError):  # closed, detached, or no file at all
        return False


def colour_enabled(choice: str, stream: Optional[IO[Any]]) -> bool:
    """Whether text written to ``stream`` is coloured, for `--color CHOICE`."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return _is_terminal(stream) and os.environ.get("TERM") != "dumb"


def paint(text: str, style: str) -> str:
    """``text`` in an ANSI ``style`` (an SGR parameter string such as ``BOLD_RED``)."""
    return f"\x1b[{style}m{text}\x1b[0m"


class ProgressBar:
    """`[#####.....]  512/2860 files` on one line of stderr, redrawn at most ten times a second
    and erased when the run ends, so the findings and the summary print as without it."""

    WIDTH = 30
    INTERVAL = 0.1

    def __init__(self, total: int, stream: IO[str]) -> None:
        self.total = total
        self.done = 0
        self.stream = stream
        self._drawn_at = 0.0
        self._draw()

    @classmethod
    def for_stderr(cls, total: int, *, quiet: bool, stream: Optional[IO[str]] = None) -> Optional["ProgressBar"]:
        """A bar on ``stream`` (default stderr) when it is a terminal and the run is not quiet; else None."""
        import sys

        stream = stream if stream is not None else sys.stderr
        if quiet or total < 1 or not _is_terminal(stream) or os.environ.get("TERM") == "dumb":
            return None
        return cls(total, stream)

    def advance(self, count: int) -> None:
        """``count`` more files are linted."""
        self.done = min(self.total, self.done + count)
        if self.done == self.total or time.monotonic() - self._drawn_at >= self.INTERVAL:
            self._draw()

    def _draw(self) -> None:
        filled = self.WIDTH * self.done // self.total
        width = len(str(self.total))
        self._write(f"\r[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done:>{width}}/{self.total} files")
        self._drawn_at = time.monotonic()

    def close(self) -> None:
        """Erase the bar's line."""
        self._write("\r\x1b[2K")

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: the run goes on without a bar
            pass
