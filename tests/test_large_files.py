"""Files too large to analyse in one piece are cut into chunks of whole module-level statements
(`viewlint.large_files`, issue 29): the cuts are where CPython's own statements start, rows and
fixes land where they are in the file, `# noqa` reads the whole file, and a file that cannot be cut
is analysed whole."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

import viewlint.engine as engine
import viewlint.large_files as large_files
from viewlint.large_files import Unsplittable, chunks_of
from viewlint.settings import Settings

# Module-level statements whose lines at column 0 are not statements: a string, brackets, clauses of
# compound statements, decorators and a continued line. Each copy is about 700 characters.
TRICKY = '''
TEMPLATE_{i} = """
def not_code_{i}():
    return 1
else:
x = [
"""
SIZES_{i} = [
1,
2,
]
if SIZES_{i}:
    SIZES_{i}.append(3)
else:
    SIZES_{i}.append(4)
try:
    import json
except ImportError:
    json = None
finally:
    pass


@torch.no_grad()
def helper_{i}(buf: torch.Tensor, idx: torch.Tensor, value: torch.Tensor) -> None:
    buf[idx].copy_(value)


total_{i} = 1 + \\
2
'''

HEADER = "import torch\nimport torch.nn as nn\nSCALE = torch.ones(2)\n"


def tricky_source(copies: int, newline: str = "\n") -> str:
    return (HEADER + "".join(TRICKY.format(i=i) for i in range(copies))).replace("\n", newline)


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(large_files, "CHUNK_BYTES", 1000)
    monkeypatch.setattr(large_files, "MOST_CHUNK_BYTES", 20_000)
    monkeypatch.setattr(engine, "LARGE_FILE_BYTES", 1500)


def statement_starts(text: str) -> set[int]:
    tree = ast.parse(text)
    return {min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]) for s in tree.body}


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_chunks_are_runs_of_whole_module_level_statements(small_chunks: None, newline: str) -> None:
    text = tricky_source(12, newline)
    chunks = list(chunks_of(text))
    assert len(chunks) >= 4
    lines = text.splitlines(keepends=True)
    own = []
    starts = statement_starts(text)
    for chunk in chunks:
        assert chunk.first in starts  # cut where CPython's own statement starts, never inside one
        chunk_lines = chunk.text.splitlines(keepends=True)
        own.extend(chunk_lines[chunk.preamble_rows:])
        # Its tree is the tree of its text; its rows below the preamble are the file's, shifted.
        assert ast.dump(chunk.tree) == ast.dump(ast.parse(chunk.text))
        for row, line in enumerate(chunk_lines[chunk.preamble_rows:], start=chunk.preamble_rows + 1):
            assert lines[row + chunk.shift - 1] == line
    assert "".join(own) == text


def test_later_chunks_start_with_the_imports_and_short_assignments_before_them(small_chunks: None) -> None:
    chunks = list(chunks_of(tricky_source(12)))
    first, *later = chunks
    assert first.preamble_rows == 0
    for chunk in later:
        head = chunk.text.splitlines(keepends=True)[:chunk.preamble_rows]
        assert head[:3] == HEADER.splitlines(keepends=True)  # the file's imports first, once each
        assert "TEMPLATE_0" not in "".join(head)  # a multi-line assignment is not repeated
        assert sum(line == "import torch\n" for line in head) == 1


def test_a_file_with_a_syntax_error_cannot_be_cut() -> None:
    text = tricky_source(3) + "def broken(:\n    pass\n" + tricky_source(3)
    with pytest.raises(Unsplittable):
        list(chunks_of(text))


def test_a_statement_longer_than_a_chunk_can_be_is_analysed_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(large_files, "CHUNK_BYTES", 200)
    monkeypatch.setattr(large_files, "MOST_CHUNK_BYTES", 800)
    text = HEADER + "DATA = [\n" + "".join(f"{k},\n" for k in range(400)) + "]\n" + tricky_source(2)
    with pytest.raises(Unsplittable):
        list(chunks_of(text))
    monkeypatch.setattr(engine, "LARGE_FILE_BYTES", 500)
    whole = [(d.start.row, d.code) for d in engine.lint_text(text, "big.py", Settings(select=("ALL",)))]
    assert whole and all(code == "VL201" for _, code in whole)


def lint(text: str, **settings: object) -> list[tuple[int, int, int, int, str, str]]:
    return [(d.start.row, d.start.column, d.end.row, d.end.column, d.code, repr(d.fix))
            for d in engine.lint_text(text, "big.py", Settings(select=("ALL",), **settings))]


def generated(megabytes: float) -> str:
    """bench/large_file.py's realistic generated file."""
    spec = importlib.util.spec_from_file_location("large_file", Path(__file__).resolve().parents[1] / "bench" / "large_file.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "large.py"
        module.generate(path, megabytes)
        return path.read_text()


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_chunked_file_gives_the_findings_and_fixes_of_the_whole(monkeypatch: pytest.MonkeyPatch, newline: str) -> None:
    text = generated(0.03).replace("\n", newline) + tricky_source(3, newline)
    whole = lint(text)
    monkeypatch.setattr(large_files, "CHUNK_BYTES", 4000)
    monkeypatch.setattr(engine, "LARGE_FILE_BYTES", 10_000)
    assert len(list(chunks_of(text))) >= 6
    chunked = lint(text)
    assert len(whole) > 40
    assert chunked == whole
    assert any(fix != "None" for *_, fix in chunked)  # fixes too land at the file's rows


def test_a_module_level_tensor_of_the_first_chunk_is_known_in_the_last(small_chunks: None) -> None:
    text = tricky_source(12) + "SCALE[torch.tensor([0])].fill_(2.0)\n"
    found = lint(text)
    assert (text.count("\n"), 1, text.count("\n"), 36, "VL201", found[-1][-1]) in found


def test_noqa_comments_are_read_over_the_whole_file(small_chunks: None) -> None:
    text = tricky_source(12)
    rows = [row for row, _, _, _, code, _ in lint(text) if code == "VL201"]
    assert len(rows) == 12
    last = rows[-1]
    lines = text.splitlines(keepends=True)
    lines[last - 1] = lines[last - 1].rstrip("\n") + "  # noqa: VL201\n"
    silenced = "".join(lines)
    assert [row for row, *_ in lint(silenced)] == rows[:-1]
    assert lint("# viewlint: noqa: VL201\n" + text) == []  # a file-level noqa in the first chunk covers the last
    assert len(lint(silenced, ignore_noqa=True)) == 12
