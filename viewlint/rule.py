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
    from viewlint.analysis.features import Needs
    from viewlint.analysis.facts import Facts

_SECTION = re.compile(r"^## ", re.M)


# What `viewlint rule` says of a rule that is off by default (the memory rules: issue 27, docs/precision.md).
OFF_BY_DEFAULT = """## Default
Off by default (opt-in: `--extend-select {code}`, or `extend-select = ["{code}"]` in
`[tool.viewlint]`). {reason}"""
# Why a memory rule is opt-in (a rule may give its own `off_by_default_reason`).
MEMORY_RULE_OFF_REASON = """On libraries the team had never read (timm, torchvision, open_clip,
vllm), none of its sampled findings held up: whether a view pins memory nothing else
holds depends on who owns the base and which parts of it other code keeps (a flat buffer
the object also keeps, a batch of one, a tail shorter than an alignment block), which the
code rarely says. It stays a strong check on caches you write yourself."""


class Rule:
    """Base class: subclasses set the class attributes and define visitor methods."""

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    default_enabled: ClassVar[bool] = True
    off_by_default_reason: ClassVar[str] = MEMORY_RULE_OFF_REASON  # said by `viewlint rule` when not default_enabled
    # None when the rule offers no edit; the fix message still shows in the finding.
    fix_applicability: ClassVar[Optional[Applicability]] = None
    # True for rules that only fire inside hot paths (forward, __call__, compiled or marked code):
    # segments without a hot function or a `# viewlint: hot` marker are skipped for them.
    hot_path_only: ClassVar[bool] = False
    # True for rules whose finding is a cost (a copy, a conversion) rather than a wrong result: they are
    # quiet in test code (`tests/`, `test_*.py`), as the hot-path rules are.
    reports_a_cost: ClassVar[bool] = False

    @classmethod
    def prefilter_needs(cls, index: Any, settings: Any) -> Optional["Needs"]:
        """What a segment (a top-level statement or class member) must contain for this rule to fire in it.

        Any one of the returned conjunctions of `viewlint.analysis.features` atoms must hold;
        the engine does not parse segments no enabled rule can fire in (viewlint.prefilter).
        None (the default): the rule can fire anywhere. Needs must be a superset of where the
        rule fires: `tests/test_prefilter.py` compares both paths.
        """
        return None

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
        statement: Optional[cst.CSTNode] = None,
    ) -> None:
        """Report a finding at ``node``. ``edits`` replace nodes' source text with new text; ``statement``: the
        statement ``node`` is in, when it is not the one being walked (an earlier one of the same function)."""
        self.facts.report(
            self,
            node,
            message,
            fix_message=fix_message,
            edits=edits,
            applicability=applicability or self.fix_applicability,
            statement=statement,
        )

    @classmethod
    def documentation(cls) -> str:
        """The rule's Markdown documentation, as `viewlint rule CODE` prints it (with how to turn it on, for
        a rule that is off by default)."""
        body = inspect.cleandoc(cls.__doc__ or "")
        if not cls.default_enabled:
            body += "\n\n" + OFF_BY_DEFAULT.format(code=cls.code, reason=cls.off_by_default_reason)
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
