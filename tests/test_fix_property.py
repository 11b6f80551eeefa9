"""Property: on any mix of fixable and unfixable code, `--fix` gives valid Python, is idempotent,
and changes nothing but the fixed statements."""

from __future__ import annotations

import ast

import libcst as cst
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from viewlint.fix import engine_lint, fix_text
from viewlint.settings import Settings

HEADER = (
    "import torch\n"
    "buf = torch.zeros(8, 4)\n"
    "idx = torch.tensor([1, 2])\n"
    "v = torch.ones(2, 4)\n"
    "x = torch.zeros(4)\n"
    "i = 3\n"
)

# (line as written, line after --fix); the two are equal where VL201 offers no edit.
PATTERNS = [
    ("buf[idx].copy_(v)", "buf[idx] = v"),
    ("buf[[1, 2]].fill_(0.5)", "buf[[1, 2]] = 0.5"),
    ("buf[[3]].zero_()", "buf[[3]] = 0"),
    ("buf[idx].add_(v)", "buf[idx] += v"),
    ("buf[idx].div_(2)", "buf[idx] /= 2"),
    ("buf[[0]].fill_(1.0)  # keep me", "buf[[0]] = 1.0  # keep me"),
    ("buf[[2]].zero_(); buf[[4]].fill_(3)", "buf[[2]] = 0; buf[[4]] = 3"),
    # Flagged, but no exact rewrite exists: a hint only.
    ("buf[idx].add_(v, alpha=2)", None),
    ("buf[[1]].mul_(2).add_(1)", None),
    # Suppressed: never fixed.
    ("buf[[1]].zero_()  # noqa: VL201", None),
    # Look-alikes that write through (basic indexing) or do not write at all.
    ("x[i].fill_(1)", None),
    ("buf[1:3].zero_()", None),
    ("tmp = buf[[3]]", None),
    ("# buf[[3]].zero_() in a comment", None),
    ("s = 'buf[[3]].zero_()'", None),
    ("", None),
]
# A multi-line statement (at module level, so no block indentation is involved).
MULTILINE = ("buf[idx].copy_(torch.ones(\n    2, 4))", "buf[idx] = torch.ones(\n    2, 4)")

LINT = engine_lint(Settings(select=("VL201",)))
LINT_ALL = engine_lint(Settings(select=("ALL",)))


@st.composite
def snippets(draw: st.DrawFn) -> tuple[str, str]:
    """(source, the exact expected text after --fix)."""
    indexes = draw(st.lists(st.integers(0, len(PATTERNS)), min_size=1, max_size=14))
    indent = draw(st.booleans())
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    before, after = [HEADER.rstrip("\n")], [HEADER.rstrip("\n")]
    if indent:
        before.append("if True:")
        after.append("if True:")
        before.append("    pass")
        after.append("    pass")
    for n in indexes:
        if n == len(PATTERNS):
            if indent:  # keep the multi-line case at module level (see MULTILINE)
                continue
            line, fixed = MULTILINE
        else:
            line, fixed = PATTERNS[n]
        prefix = "    " if indent and line else ""
        before.append(prefix + line)
        after.append(prefix + (fixed if fixed is not None else line))
    source = "\n".join(before) + "\n"
    expected = "\n".join(after) + "\n"
    return source.replace("\n", newline), expected.replace("\n", newline)


def _valid(text: str) -> bool:
    ast.parse(text)
    return cst.parse_module(text).code == text


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snippets())
def test_fix_is_exact_valid_and_idempotent(case: tuple[str, str]) -> None:
    source, expected = case
    outcome = fix_text(source, LINT, "snippet.py", unsafe_fixes=True)  # VL201's fix is unsafe
    # Exactly the fixable statements change: every other line (comments, blanks, look-alikes,
    # suppressed and hint-only findings, line endings) is byte-identical.
    assert outcome.text == expected
    assert _valid(outcome.text)
    again = fix_text(outcome.text, LINT, "snippet.py", unsafe_fixes=True)
    assert again.text == outcome.text and not again.fixed
    assert fix_text(source, LINT, "snippet.py").text == source  # plain --fix leaves VL201 sites alone


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snippets())
def test_fix_with_every_rule_and_unsafe_fixes_stays_valid_and_idempotent(case: tuple[str, str]) -> None:
    source, _ = case
    outcome = fix_text(source, LINT_ALL, "snippet.py", unsafe_fixes=True)
    assert _valid(outcome.text)
    if not outcome.fixed:
        assert outcome.text == source  # nothing changes without a fix
    again = fix_text(outcome.text, LINT_ALL, "snippet.py", unsafe_fixes=True)
    assert again.text == outcome.text
