"""Fuzz: mutations of real PyTorch sources (the shipped fixtures) never crash viewlint, never make
it report an internal error, give the same output twice, and `--fix` leaves code that parses and
that a second `--fix` does not change (issue 14).

A short run is part of the suite. A longer one:

    VIEWLINT_FUZZ_EXAMPLES=3000 pytest tests/test_fuzz.py

The end-to-end test runs the real command line on a few mutated files with two workers.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, run_viewlint

from viewlint.diagnostics import INTERNAL_ERROR, SYNTAX_ERROR
from viewlint.engine import lint_text
from viewlint.file_fixes import engine_lint
from viewlint.fix import fix_text
from viewlint.newer_syntax import parse_source
from viewlint.settings import Settings

EXAMPLES = int(os.environ.get("VIEWLINT_FUZZ_EXAMPLES", "60"))
SOURCES = sorted(p.read_text(encoding="utf-8") for p in FIXTURES.glob("VL*/*.py"))
SETTINGS = Settings(select=("ALL",))
NO_PREFILTER = Settings(select=("ALL",), prefilter=False)
LINT = engine_lint(SETTINGS)

# Pieces of PyTorch code and of Python syntax that mutations splice in.
FRAGMENTS = [
    ".contiguous()", ".item()", ".tolist()", ".cpu()", ".cuda()", ".half()", ".clone()", ".detach()",
    "[idx]", "[mask]", "[:, 0]", "[0]", ".copy_(v)", ".fill_(0)", "torch.split(x, 2)", "torch.cat([a, b])",
    "self.cache[k] = ", "for i in range(3):", "if x.any():", "def forward(self, x):", "class M(torch.nn.Module):",
    "return ", "with torch.no_grad():", "# noqa: VL201", "# noqa", "lambda: ", "yield ", "await ", "async ",
    "(", ")", "[", "]", "{", "}", ":", ",", "\\", "'", '"', '"""', "#", "\t", "    ", "\n", "\r\n", "\x0c",
    "é", "\u2028", "\x00", "\ufeff", "if 0:", "else:", "try:", "except Exception:", "match x:", "case 1:",
    "@torch.compile", "global cache", "nonlocal y", "x := 1", "*a, b = c", "f'{x!r:>{w}}'", "type X = int",
]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SOURCES))
    lines = text.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 6))):
        if not lines:
            lines = ["\n"]
        where = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["insert", "delete", "duplicate", "splice", "indent", "dedent", "truncate", "swap", "text"]))
        if action == "insert":
            lines.insert(where, draw(st.sampled_from(FRAGMENTS)) + "\n")
        elif action == "delete":
            del lines[where]
        elif action == "duplicate":
            lines[where:where] = lines[where:where + draw(st.integers(1, 8))]
        elif action == "splice":
            line = lines[where]
            column = draw(st.integers(0, len(line)))
            lines[where] = line[:column] + draw(st.sampled_from(FRAGMENTS)) + line[column:]
        elif action == "indent":
            lines[where] = "    " + lines[where]
        elif action == "dedent":
            lines[where] = lines[where].lstrip(" ")
        elif action == "truncate":
            line = lines[where]
            lines[where] = line[:draw(st.integers(0, len(line)))]
        elif action == "swap" and len(lines) > 1:
            other = draw(st.integers(0, len(lines) - 1))
            lines[where], lines[other] = lines[other], lines[where]
        elif action == "text":
            lines.insert(where, draw(st.text(max_size=40)))
    return "".join(lines)


def _compiles(text: str) -> bool:
    """Valid Python: of the running version, or newer syntax viewlint reads downgraded."""
    try:
        parse_source(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _key(diagnostics: list) -> list[tuple]:
    return [(d.code, d.start.row, d.start.column, d.end.row, d.end.column, d.message) for d in diagnostics]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=EXAMPLES <= 60)
@given(mutated())
def test_mutated_sources_lint_without_internal_errors(text: str) -> None:
    first = lint_text(text, "mutated.py", SETTINGS)
    assert not [d for d in first if d.code == INTERNAL_ERROR], [d.message for d in first if d.code == INTERNAL_ERROR]
    assert _key(lint_text(text, "mutated.py", SETTINGS)) == _key(first)  # deterministic
    if _compiles(text):
        assert not [d for d in first if d.code == SYNTAX_ERROR]
        # The prefilter is documented to change nothing.
        assert _key(lint_text(text, "mutated.py", NO_PREFILTER)) == _key(first)
    else:
        assert [d for d in first if d.code == SYNTAX_ERROR]


@settings(max_examples=max(EXAMPLES // 2, 10), deadline=None, suppress_health_check=list(HealthCheck),
          derandomize=EXAMPLES <= 60)
@given(mutated(), st.booleans())
def test_fix_of_mutated_sources_parses_and_is_idempotent(text: str, unsafe: bool) -> None:
    outcome = fix_text(text, LINT, "mutated.py", unsafe_fixes=unsafe)
    if _compiles(text):
        assert _compiles(outcome.text)
    else:
        assert outcome.text == text  # a file that does not parse is never fixed
    again = fix_text(outcome.text, LINT, "mutated.py", unsafe_fixes=unsafe)
    assert again.text == outcome.text


def test_the_command_line_on_mutated_files(tmp_path: Path) -> None:
    """Exit code 0 or 1, no traceback, the same output twice, with two workers and with --fix."""
    texts: list[str] = []

    @settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(mutated())
    def collect(text: str) -> None:
        texts.append(text)

    collect()
    for k, text in enumerate(texts):
        with open(tmp_path / f"m{k:02d}.py", "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    outputs = []
    for _ in range(2):
        result = run_viewlint("check", "--no-cache", "-j", "2", "--select", "ALL", "--output-format", "json", ".",
                              cwd=tmp_path)
        assert result.returncode in (0, 1), result.stderr[-3000:]
        assert "Traceback" not in result.stderr
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    fixed = run_viewlint("check", "--no-cache", "-j", "2", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert fixed.returncode in (0, 1), fixed.stderr[-3000:]
    assert "Traceback" not in fixed.stderr
    for k, text in enumerate(texts):
        after = (tmp_path / f"m{k:02d}.py").read_text(encoding="utf-8")
        if _compiles(text):
            assert _compiles(after)
        else:
            assert after == text
    snapshot = {p.name: p.read_bytes() for p in tmp_path.glob("*.py")}
    run_viewlint("check", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.py")} == snapshot
