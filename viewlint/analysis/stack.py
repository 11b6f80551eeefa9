"""Whether the analysis of the current file ran out of stack somewhere it carried on regardless.

A few places give up on one expression when Python's recursion limit is reached (the value of a
deeply nested expression is unknown, a summary stops early) so that the rest of the file is still
analysed. The engine then lints the file again on a deep stack, where nothing is given up: the
same findings come out whatever the nesting.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

_exhausted = False
_give_up = False


class Exhausted(BaseException):
    """The stack ran out during a try whose result would be thrown away (see `giving_up`). A BaseException, so
    that no `except Exception` that keeps the other rules going carries on with the doomed try."""


def ran_out() -> None:
    """Record that some analysis stopped early for lack of stack."""
    global _exhausted
    _exhausted = True
    if _give_up:
        raise Exhausted()


@contextlib.contextmanager
def giving_up() -> Iterator[None]:
    """Within the block, the first `ran_out` raises `Exhausted`: the engine lints such a file again on a deep
    stack, and what the first try would still compute after that point (a chain's every link, each running
    out of stack again) is thrown away."""
    global _give_up
    previous, _give_up = _give_up, True
    try:
        yield
    finally:
        _give_up = previous


def reset() -> bool:
    """Whether the stack ran out since the last reset; clears the record."""
    global _exhausted
    exhausted, _exhausted = _exhausted, False
    return exhausted
