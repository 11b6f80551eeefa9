"""`--add-noqa` writes a file back in its own encoding, as `--fix` does (issue 14, item 3)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import run_viewlint

BODY = (
    "import torch\n"
    "\n"
    "\n"
    "def write_rows(buf: torch.Tensor, rows: list[int], value: torch.Tensor) -> str:\n"
    "    buf[rows].copy_(value)\n"
    "    return NAME\n"
)


@pytest.mark.parametrize("encoding, word", [("latin-1", "naïve"), ("cp1252", "“quoted” – €"), ("utf-8", "naïve ✓")])
def test_add_noqa_keeps_the_coding_declared(tmp_path: Path, encoding: str, word: str) -> None:
    text = f"# -*- coding: {encoding} -*-\n" + f"NAME = {word!r}\n" + BODY
    path = tmp_path / "declared.py"
    path.write_bytes(text.encode(encoding))
    result = run_viewlint("check", "--no-cache", "--add-noqa", "declared.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    data = path.read_bytes()
    # The bytes outside the added comment are the original ones, in the original encoding.
    expected = text.replace("buf[rows].copy_(value)\n", "buf[rows].copy_(value)  # noqa: VL201\n").encode(encoding)
    assert data == expected
    # CPython reads the bytes through their coding declaration and gets the original text back.
    tree = ast.parse(data)
    assert tree.body[0].value.value == word  # type: ignore[attr-defined]
    again = run_viewlint("check", "--no-cache", "declared.py", cwd=tmp_path)
    assert again.returncode == 0, again.stdout


def test_add_noqa_keeps_a_bom(tmp_path: Path) -> None:
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + ("NAME = 'é'\n" + BODY).encode("utf-8"))
    result = run_viewlint("check", "--no-cache", "--add-noqa", "bom.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert path.read_bytes().startswith(b"\xef\xbb\xbfNAME = '\xc3\xa9'\n")
    assert b"# noqa: VL201" in path.read_bytes()


def test_add_noqa_with_a_warm_cache(tmp_path: Path) -> None:
    # Results served from the cache carry no text: the directives must still be added.
    path = tmp_path / "cached.py"
    path.write_text("NAME = 'x'\n" + BODY)
    first = run_viewlint("check", "cached.py", cwd=tmp_path)
    assert first.returncode == 1
    result = run_viewlint("check", "--add-noqa", "cached.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Added 1 noqa directive." in result.stderr
    assert "buf[rows].copy_(value)  # noqa: VL201\n" in path.read_text()
