"""The language server's re-lint after an edit reuses parsed statements (`viewlint.lsp.incremental`):
its findings must be those of a lint from scratch, edit after edit, on real multi-function files."""

from __future__ import annotations

import random
from pathlib import Path

import libcst as cst
import pytest

from conftest import OPT_IN_CONFIG, ROOT
from viewlint.analysis import tree
from viewlint.lsp.documents import lint_document
from viewlint.lsp.incremental import StatementCache, enabled, join_pieces
from viewlint.prefilter import split_lines

FIXTURES = sorted((ROOT / "fixtures").glob("*/*.py"))
# Every fixture of a few families in one module: many functions and classes, findings of every kind.
PROJECT_FILE = "".join(path.read_text(encoding="utf-8") + "\n\n" for path in FIXTURES if path.parent.name in
                       ("VL101", "VL201", "VL301", "VL401"))


def statement_starts(text: str) -> list[int]:
    import ast

    return sorted({min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))])
                   for s in ast.parse(text).body if s.col_offset == 0})


@pytest.mark.parametrize("path", FIXTURES[::7], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_statements_parsed_apart_and_joined_equal_the_whole_parse(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    lines = [content + ending for content, ending in split_lines(text)]
    bounds = [1, *[row for row in statement_starts(text) if row > 1], len(lines) + 1]
    pieces = [cst.parse_module("".join(lines[a - 1:b - 1])) for a, b in zip(bounds, bounds[1:])]
    joined = join_pieces(pieces)
    assert joined.code == text
    assert joined.deep_equals(cst.parse_module(text))


def one_line_edits(text: str, count: int, seed: int) -> list[str]:
    """Successive texts, each one line away from the one before: a line changed, added or removed."""
    generator = random.Random(seed)
    texts = []
    lines = text.splitlines(keepends=True)
    for step in range(count):
        candidates = [k for k, line in enumerate(lines) if line.startswith("        ") and line.strip()
                      and not line.rstrip().endswith(("(", ",", "[", "{", "\\", ":")) and '"""' not in line]
        k = generator.choice(candidates)
        indent = lines[k][: len(lines[k]) - len(lines[k].lstrip())]
        kind = step % 3
        if kind == 0:  # a line changed: now it stores a view in a long-lived place, or is left as it was plus a comment
            lines[k] = lines[k].rstrip("\n") + f"  # edit {step}\n"
        elif kind == 1:  # a line added
            lines.insert(k + 1, f"{indent}self.cache_{step} = x[:, :2] if False else None\n")
        else:  # a line removed (a `pass` keeps the block)
            lines[k] = f"{indent}pass\n"
        texts.append("".join(lines))
    return texts


def test_relints_after_edits_equal_lints_from_scratch(tmp_path: Path) -> None:
    path = tmp_path / "project.py"
    (tmp_path / "pyproject.toml").write_text(OPT_IN_CONFIG)  # the fixtures' VL101 findings too
    cache = StatementCache()
    texts = [PROJECT_FILE, *one_line_edits(PROJECT_FILE, 12, seed=7)]
    with enabled(cache):
        relinted = [lint_document(text, path, tmp_path).diagnostics for text in texts]
    assert tree.PARSE_CACHE is None
    scratch = [lint_document(text, path, tmp_path).diagnostics for text in texts]
    assert relinted == scratch
    assert len(scratch[0]) > 20  # a file with findings of several rules
    assert {d.code for d in scratch[0]} >= {"VL101", "VL201", "VL301"}
    assert cache.hits > cache.misses  # statements were reused, not parsed again


HEAD = '''import torch


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x, mode):
        y = self.proj(x)
        if y.abs().max().item() > 1.0:
            y = y / 2
        if mode == "train":
            y = y * 2
        return y


def helper(a):
    return a + 1
'''


def test_results_remembered_per_node_follow_the_edits(tmp_path: Path) -> None:
    """What the cache remembers per node (`tree.remembered`: whether a `forward` hands its results to the
    host, the printed text of an expression) is recomputed for the statement an edit changes, and reused for
    the others: each re-lint equals a lint from scratch."""
    path = tmp_path / "head.py"
    (tmp_path / "pyproject.toml").write_text('[tool.viewlint]\nextend-select = ["VL401"]\n')  # an opt-in rule
    texts = [
        HEAD,
        HEAD.replace("        return y\n", "        return y.cpu()\n"),  # the end of a pipeline: not hot, no VL401
        HEAD.replace("    return a + 1\n", "    return a + 2\n"),  # hot again; then only `helper` changes
        HEAD.replace("    return a + 1\n", "    return a + 3\n"),
        HEAD.replace("y.abs().max().item()", "y.abs().amax().item()"),  # the message quotes the new text
    ]
    cache = StatementCache()
    with enabled(cache):
        relinted = [[(d.start.row, d.code, d.message) for d in lint_document(text, path, tmp_path).diagnostics]
                    for text in texts]
    scratch = [[(d.start.row, d.code, d.message) for d in lint_document(text, path, tmp_path).diagnostics]
               for text in texts]
    assert relinted == scratch
    assert [[code for _, code, _ in found] for found in scratch] == [["VL401"], [], ["VL401"], ["VL401"], ["VL401"]]
    assert "amax" in scratch[4][0][2] and "amax" not in scratch[3][0][2]
    assert any(kind == "hands over to host" for kind, _ in cache._remembered)


# Lines an edit may bring in: statements, lines that continue or open blocks, brackets and strings left open.
SNIPPETS = ["x = 1", "    y = 2", "def g():", "    return 3", '"""', "(", ")", "else:", "@dec", "class K:", "", "# c",
            "x = 1; y = 2", "\\", "z = 1 + \\", "        pass", "if a:", "    pass", "elif b:", "'''", "try:",
            "except E:", "    q = [", "    ]", "async def h():", "\tx = 1"]


def test_syntax_trees_after_edits_equal_whole_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    """`StatementCache.syntax_tree` keeps the `ast` trees of the statements an edit left alone: the tree
    (rows and columns included), or the syntax error, is the one a parse of the whole text gives."""
    import ast

    from viewlint.lsp import incremental
    from viewlint.newer_syntax import parse_source

    reparsed = incremental._reparsed
    kept: list[ast.Module] = []  # the trees made from kept statements

    def counted(*arguments: object) -> object:
        tree = reparsed(*arguments)
        if tree is not None:
            kept.append(tree)
        return tree

    monkeypatch.setattr(incremental, "_reparsed", counted)
    generator = random.Random(3)
    for base in [PROJECT_FILE, *(path.read_text(encoding="utf-8") for path in FIXTURES[::23])]:
        cache = StatementCache()
        lines = base.split("\n")
        for _ in range(40):
            row = generator.randrange(len(lines))
            kind = generator.randrange(4)
            if kind == 0:
                lines[row] = generator.choice(SNIPPETS)
            elif kind == 1:
                lines.insert(row, generator.choice(SNIPPETS))
            elif kind == 2 and len(lines) > 2:
                del lines[row]
            else:
                lines[row] += "  # edited"
            if generator.random() < 0.3:
                lines = base.split("\n")  # back to a text that parses
            text = "\n".join(lines)
            try:
                expected = ast.dump(parse_source(text), include_attributes=True)
            except SyntaxError as error:
                expected = f"SyntaxError {error.msg} {error.lineno}"
            try:
                found = ast.dump(cache.syntax_tree(text, parse_source), include_attributes=True)
            except SyntaxError as error:
                found = f"SyntaxError {error.msg} {error.lineno}"
            assert found == expected, text
    assert len(kept) > 50  # most edits were read from the kept statements and a parse of the lines between
