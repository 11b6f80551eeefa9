"""The base class every rule in ``viewlint.rules`` derives from.

A rule is a small class: its docstring is the user documentation (Ruff's sections),
its class attributes say what it is, and its ``visit_<Node>`` / ``leave_<Node>``
methods are called by the analysis walker while it walks the file once, in statement
order. Rules ask the walker's facts (``self.facts``) instead of re-deriving PyTorch
semantics themselves.
"""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING, Any, ClassVar, Optional

import libcst as cst

from viewlint.diagnostics import Applicability

if TYPE_CHECKING:
    from viewlint.analysis.walker import Facts

_SECTION = re.compile(r"^## ", re.M)


class Rule:
    """Base class: subclasses set the class attributes and define visitor methods."""

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    default_enabled: ClassVar[bool] = True
    # None when the rule offers no edit; the fix message still shows in the finding.
    fix_applicability: ClassVar[Optional[Applicability]] = None
    # Substrings one of which must appear in a segment (a top-level statement or a member of a
    # top-level class) for the rule to be able to fire there; the engine does not parse segments
    # no enabled rule can fire in (viewlint.prefilter). Empty: the rule can fire anywhere.
    triggers: ClassVar[tuple[str, ...]] = ()
    # True for rules that only fire inside hot paths (forward, __call__, compiled or marked code):
    # segments without a hot function or a `# viewlint: hot` marker are skipped for them.
    hot_path_only: ClassVar[bool] = False
    # "class": a trigger anywhere in a top-level class keeps the whole class (for rules that read
    # a class as a whole); "segment": only the members that hold a trigger are kept.
    trigger_scope: ClassVar[str] = "segment"

    @classmethod
    def index_triggers(cls, index: Any, settings: Any) -> tuple[str, ...]:
        """Module-specific triggers, from the module index and settings (e.g. functions that retain an argument)."""
        return ()
    # Per-rule options, read from [tool.viewlint.rules.<CODE>]: name -> default value.
    options: ClassVar[dict[str, Any]] = {}

    def __init__(self, facts: "Facts", options: dict[str, Any]) -> None:
        self.facts = facts
        self.option_values = {**self.options, **options}

    def option(self, name: str) -> Any:
        return self.option_values[name]

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        fix_message: Optional[str] = None,
        edits: tuple[tuple[cst.CSTNode, str], ...] = (),
        applicability: Optional[Applicability] = None,
    ) -> None:
        """Report a finding at ``node``. ``edits`` replace nodes' source text with new text."""
        self.facts.report(
            self,
            node,
            message,
            fix_message=fix_message,
            edits=edits,
            applicability=applicability or self.fix_applicability,
        )

    @classmethod
    def documentation(cls) -> str:
        """The rule's Markdown documentation, as `viewlint rule CODE` prints it."""
        body = inspect.cleandoc(cls.__doc__ or "")
        return f"# {cls.name} ({cls.code})\n\n{body}\n"

    @classmethod
    def doc_sections(cls) -> list[str]:
        return [line.strip()[3:].strip() for line in (cls.__doc__ or "").splitlines() if line.strip().startswith("## ")]

    @classmethod
    def metadata(cls) -> dict[str, Any]:
        return {
            "code": cls.code,
            "name": cls.name,
            "summary": cls.summary,
            "default_enabled": cls.default_enabled,
            "fix": cls.fix_applicability.value if cls.fix_applicability else "none",
            "options": dict(cls.options),
        }
