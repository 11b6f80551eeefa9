"""Whether the analysis of the current file ran out of stack somewhere it carried on regardless.

A few places give up on one expression when Python's recursion limit is reached (the value of a
deeply nested expression is unknown, a summary stops early) so that the rest of the file is still
analysed. The engine then lints the file again on a deep stack, where nothing is given up: the
same findings come out whatever the nesting.
"""

from __future__ import annotations

_exhausted = False


def ran_out() -> None:
    """Record that some analysis stopped early for lack of stack."""
    global _exhausted
    _exhausted = True


def reset() -> bool:
    """Whether the stack ran out since the last reset; clears the record."""
    global _exhausted
    exhausted, _exhausted = _exhausted, False
    return exhausted
