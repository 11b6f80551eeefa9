"""Code written for a newer Python than the one running viewlint is linted, not reported as VL000.

Users lint code newer than their interpreter: PEP 695 generics and `type` statements, PEP 701
f-strings (3.12), type parameter defaults (3.13), `except*` (3.11), `match` (3.10). These tests
run on every Python; on one that has the syntax they check its `ast` nodes are handled, on an
older one that the downgraded parse keeps every other finding where it is.
"""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest

from conftest import run_viewlint

from viewlint.engine import lint_text
from viewlint.newer_syntax import downgrade, parse_source
from viewlint.settings import Settings

# Each source: a construct, a finding inside it where it has a body, and one after it.
NEWER_SYNTAX = {
    "generic function (3.12)": """
        import torch

        def scatter[T: torch.Tensor, *Shape, **P](buf: torch.Tensor, rows: list[T]) -> torch.Tensor:
            buf[[1, 2]].fill_(0.0)
            return buf

        buf = torch.zeros(8, 4)
        buf[[3]].fill_(2.0)
    """,
    "generic class over several lines (3.12)": """
        import torch

        class Buffer[
            K,  # the key type
            V: (int, str),
        ](Base):
            def reset(self, buf: torch.Tensor) -> None:
                buf[[1, 2]].fill_(0.0)

        buf = torch.zeros(8, 4)
        buf[[3]].fill_(2.0)
    """,
    "type statements (3.12)": """
        import torch

        type Rows = list[int]
        type Pair[T] = tuple[T, T]; buf = torch.zeros(8, 4)
        buf[[3]].fill_(2.0)
    """,
    "type parameter defaults (3.13)": """
        import torch

        def fill[T = int](buf: torch.Tensor, rows: list[T]) -> torch.Tensor:
            buf[[1, 2]].fill_(0.0)
            return buf

        buf = torch.zeros(8, 4)
        buf[[3]].fill_(2.0)
    """,
    "nested f-strings (3.12)": """
        import torch

        def report(buf: torch.Tensor, stats: dict[str, float]) -> str:
            buf[[1, 2]].fill_(0.0)
            return f"{stats["mean"]:.2f} {f"{stats["max"]}"!r}" + f'{
                stats['min']  # a comment in a replacement field
            }'

        buf = torch.zeros(8, 4)
        label = f"{"é"}"; buf[[3]].fill_(2.0)
    """,
    "ParamSpec decorator like torch's py312 helpers (3.12)": """
        import functools
        from typing import Callable

        import torch

        def traced[**P, R](fn: Callable[P, R]) -> Callable[P, R]:
            @functools.wraps(fn)
            def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
                return fn(*args, **kwargs)
            return wrapper

        buf = torch.zeros(8, 4)
        buf[[3]].fill_(2.0)
    """,
    "except* (3.11)": """
        import torch

        buf = torch.zeros(8, 4)
        try:
            buf[[1, 2]].fill_(0.0)
        except* (RuntimeError, ValueError) as group:
            raise
        buf[[3]].fill_(2.0)
    """,
    "match (3.10)": """
        import torch

        def pick(buf: torch.Tensor, command: object) -> None:
            match command:
                case ["clear", *rows] if rows:
                    buf[[1, 2]].fill_(0.0)
                case {"fill": value, **rest}:
                    pass
                case (1 |
                      2):
                    pass
                case _:
                    pass

        buf = torch.zeros(8, 4)
        buf[[3]].fill_(2.0)
    """,
}


def _findings(source: str) -> list[tuple[int, int, str]]:
    diagnostics = lint_text(textwrap.dedent(source), "newer.py", Settings(select=("VL2",)))
    return [(d.start.row, d.start.column, d.code) for d in diagnostics]


def _expected(source: str) -> list[tuple[int, int, str]]:
    """Where the `.fill_(` findings are: on the lines that call it, at the start of `buf`."""
    lines = textwrap.dedent(source).splitlines()
    return [(row, line.index("buf[[") + 1, "VL201") for row, line in enumerate(lines, start=1) if "buf[[" in line]


@pytest.mark.parametrize("source", NEWER_SYNTAX.values(), ids=NEWER_SYNTAX.keys())
def test_newer_syntax_is_linted_with_every_finding_where_it_is(source: str) -> None:
    assert _findings(source) == _expected(source)


@pytest.mark.parametrize("source", NEWER_SYNTAX.values(), ids=NEWER_SYNTAX.keys())
def test_every_name_is_read_where_it_stands(source: str) -> None:
    """Whatever the Python, each name `ast` reads is the same name at the same row and byte column."""
    text = textwrap.dedent(source)
    lines = [line.encode("utf-8") for line in text.splitlines()]
    for node in ast.walk(parse_source(text)):
        if isinstance(node, ast.Name):
            line = lines[node.lineno - 1]
            assert line[node.col_offset:node.end_col_offset].decode() == node.id, (node.lineno, node.id)


@pytest.mark.parametrize("source", NEWER_SYNTAX.values(), ids=NEWER_SYNTAX.keys())
def test_downgraded_text_keeps_every_line_break_and_byte_column(source: str) -> None:
    text = textwrap.dedent(source)
    try:
        ast.parse(text)
        pytest.skip("this Python has the syntax: nothing to downgrade")
    except SyntaxError:
        pass
    downgraded, touched_rows = downgrade(text)
    original_lines, new_lines = text.splitlines(keepends=True), downgraded.splitlines(keepends=True)
    assert [len(line.encode("utf-8")) for line in new_lines] == [len(line.encode("utf-8")) for line in original_lines]
    assert [line for row, line in enumerate(new_lines, start=1) if row not in touched_rows] == \
        [line for row, line in enumerate(original_lines, start=1) if row not in touched_rows]
    ast.parse(downgraded)


def test_vl104_sees_a_budget_charged_inside_a_match_case() -> None:
    source = textwrap.dedent("""
        import torch

        class Pool:
            def __init__(self):
                self.items = []
                self.used_bytes = 0

            def add(self, t: torch.Tensor, kind: str):
                match kind:
                    case "keep":
                        self.items.append(t)
                        self.used_bytes += t.nbytes
    """)
    diagnostics = lint_text(source, "pool.py", Settings(select=("VL1",)))
    assert [(d.start.row, d.code) for d in diagnostics] == [(13, "VL104")]


@pytest.mark.parametrize(
    ("source", "row"),
    [
        # a mistake below newer syntax is reported on its own row, not at the newer syntax
        ("type Rows = list[int]\n\nx = 1 = 2\n", 3),
        ("type Rows = list[int]\n\ndef f[T](x: T) -> T:\n    return x +* 2\n", 4),
        ("def f[T](x: T) -> T:\n    return x\n\ny = (1 +\n  * 2)\n", 5),
        # and a mistake in code without newer syntax where CPython puts it
        ("import torch\nif torch.cuda.is_available()\n    pass\n", 2),
        ("x = f'{1 +* 2}'\n", 1),
    ],
)
def test_a_real_syntax_error_is_still_vl000_on_its_row(source: str, row: int) -> None:
    diagnostics = lint_text(source, "broken.py", Settings(select=("ALL",)))
    assert [(d.code, d.start.row) for d in diagnostics] == [("VL000", row)]


def test_fix_applies_in_a_file_with_newer_syntax(tmp_path) -> None:
    source = "import torch\n\ntype Rows = list[int]\n\nbuf = torch.zeros(8, 4)\nbuf[[3]].fill_(2.0)\n"
    (tmp_path / "newer.py").write_text(source)
    result = run_viewlint("--isolated", "--no-cache", "--fix", "--unsafe-fixes", "newer.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "newer.py").read_text() == source.replace("buf[[3]].fill_(2.0)", "buf[[3]] = 2.0")


def test_a_project_module_with_newer_syntax_still_tells_what_its_methods_keep(tmp_path) -> None:
    """The cache class lives in a module that uses 3.12 syntax; its `set` keeps the view it gets."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "cache.py").write_text(textwrap.dedent("""
        import torch

        type Key = int


        class EmbeddingCache[K]:
            def __init__(self) -> None:
                self.entries = {}

            def set(self, key: K, embedding: torch.Tensor) -> None:
                self.entries[key] = embedding
    """))
    (package / "user.py").write_text(textwrap.dedent("""
        import torch

        from pkg.cache import EmbeddingCache

        cache = EmbeddingCache()


        def admit(batch: torch.Tensor, counts: list[int], keys: list[int]) -> None:
            for key, piece in zip(keys, torch.split(batch, counts)):
                cache.set(key, piece)
    """))
    result = run_viewlint("--isolated", "--no-cache", "--select", "VL101", "pkg/user.py", cwd=tmp_path)
    assert result.stdout.splitlines() and all(" VL101 " in line for line in result.stdout.splitlines()), \
        result.stdout + result.stderr
    assert "pkg/user.py:11:" in result.stdout
