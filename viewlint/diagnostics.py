"""The data every part of viewlint passes around: diagnostics, fixes, edits and verdicts."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional


class Applicability(str, enum.Enum):
    """How safe a fix is to apply without review (Ruff's three levels)."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True, order=True)
class Location:
    """A position in a file: 1-based row, 1-based column counted in characters."""

    row: int
    column: int

    def to_json(self) -> dict[str, int]:
        return {"row": self.row, "column": self.column}


@dataclass(frozen=True)
class Edit:
    """Replace the text between ``start`` and ``end`` with ``content``."""

    content: str
    start: Location
    end: Location

    def to_json(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "location": self.start.to_json(),
            "end_location": self.end.to_json(),
        }


@dataclass(frozen=True)
class Fix:
    """A set of edits that together resolve one finding."""

    applicability: Applicability
    message: str
    edits: tuple[Edit, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "applicability": self.applicability.value,
            "message": self.message,
            "edits": [edit.to_json() for edit in self.edits],
        }


@dataclass(frozen=True)
class Verdict:
    """What ``--verify`` measured for one finding."""

    status: str  # confirmed | refuted | not reached | cpu-only | error
    evidence: str = ""
    device: Optional[str] = None
    hits: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "evidence": self.evidence, "device": self.device, "hits": self.hits}


# Codes that viewlint reports about the input itself rather than about tensors.
# They cannot be deselected: a file we could not read is never silently skipped.
SYNTAX_ERROR = "VL000"
IO_ERROR = "VL001"
INTERNAL_ERROR = "VL002"
RESERVED_CODES = {
    SYNTAX_ERROR: "syntax-error",
    IO_ERROR: "io-error",
    INTERNAL_ERROR: "internal-error",
}


# Where the rules' documentation is published: docs/rules.md, one anchor per code (`#vl201`),
# reserved codes included. None while the project has no published home: no JSON `url`, no
# SARIF `helpUri` then, rather than a link to a site nobody has checked. Set it once, here.
RULES_DOCS_URL: Optional[str] = None


def rule_url(code: str) -> Optional[str]:
    """The documentation URL of a rule (or reserved code), or None when the docs are not published."""
    return f"{RULES_DOCS_URL}#{code.lower()}" if RULES_DOCS_URL else None


@dataclass(frozen=True)
class Diagnostic:
    """One finding at one place in one file."""

    path: str
    code: str
    name: str
    message: str
    start: Location
    end: Location
    fix: Optional[Fix] = None
    noqa_row: Optional[int] = None
    verdict: Optional[Verdict] = None
    # Rows of the whole statement holding the finding: a `# noqa` on any of them applies.
    statement_rows: tuple[int, int] = field(default=(0, 0), compare=False)
    # In a notebook: the cell (1-based, among all cells); rows and columns then count in that cell.
    cell: Optional[int] = None

    @property
    def sort_key(self) -> tuple[str, int, int, int, str, int, int, str, str]:
        """Path, cell, position and code, then what else tells two findings apart: the order never
        depends on how a set or dict happened to hash them (PYTHONHASHSEED)."""
        fix = self.fix
        edits = "" if fix is None else repr([(e.start.row, e.start.column, e.end.row, e.end.column, e.content) for e in fix.edits])
        return (self.path, self.cell or 0, self.start.row, self.start.column, self.code, self.end.row, self.end.column,
                self.message, edits)

    @property
    def position(self) -> str:
        """``row:column``, or ``cell N:row:column`` in a notebook: what follows the path in concise output."""
        where = f"{self.start.row}:{self.start.column}"
        return where if self.cell is None else f"cell {self.cell}:{where}"

    @property
    def is_internal_error(self) -> bool:
        return self.code == INTERNAL_ERROR

    @property
    def fixable(self) -> bool:
        return self.fix is not None and bool(self.fix.edits)

    def with_verdict(self, verdict: Verdict) -> "Diagnostic":
        return replace(self, verdict=verdict)

    def moved(self, row: Callable[[int], int], location: Optional[Callable[[Location], Location]] = None,
              **changes: Any) -> "Diagnostic":
        """The same finding in other coordinates: `row` maps each row (of the statement, of the `# noqa`),
        `location` each position (its start, its end, its fix's edits; by default `row` of its row)."""
        move = location or (lambda where: Location(row(where.row), where.column))
        fix = self.fix
        if fix is not None:
            fix = Fix(fix.applicability, fix.message, tuple(Edit(e.content, move(e.start), move(e.end)) for e in fix.edits))
        rows = self.statement_rows
        return replace(
            self,
            start=move(self.start),
            end=move(self.end),
            fix=fix,
            noqa_row=None if self.noqa_row is None else row(self.noqa_row),
            statement_rows=rows if rows == (0, 0) else (row(rows[0]), row(rows[1])),
            **changes,
        )

    def to_json(self) -> dict[str, Any]:
        """Ruff's JSON schema (``cell``: the notebook cell, else null), plus ``verdict`` when ``--verify`` ran."""
        data: dict[str, Any] = {
            "cell": self.cell,
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "filename": self.path,
            "location": self.start.to_json(),
            "end_location": self.end.to_json(),
            "fix": self.fix.to_json() if self.fix else None,
            "noqa_row": self.noqa_row,
            "url": rule_url(self.code),
        }
        if self.verdict is not None:
            data["verdict"] = self.verdict.to_json()
        return data

    def to_cache(self) -> dict[str, Any]:
        data = self.to_json()
        data["statement_rows"] = list(self.statement_rows)
        return data

    @classmethod
    def from_cache(cls, data: dict[str, Any]) -> "Diagnostic":
        fix = None
        if data["fix"] is not None:
            fix = Fix(
                applicability=Applicability(data["fix"]["applicability"]),
                message=data["fix"]["message"],
                edits=tuple(
                    Edit(e["content"], Location(**e["location"]), Location(**e["end_location"]))
                    for e in data["fix"]["edits"]
                ),
            )
        return cls(
            path=data["filename"],
            code=data["code"],
            name=data["name"],
            message=data["message"],
            start=Location(**data["location"]),
            end=Location(**data["end_location"]),
            fix=fix,
            noqa_row=data["noqa_row"],
            statement_rows=tuple(data.get("statement_rows", (0, 0))),  # type: ignore[arg-type]
            cell=data.get("cell"),
        )
