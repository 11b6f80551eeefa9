"""The result cache: tagged and self-ignoring, served on the second run, never stale, never fatal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_viewlint

import viewlint.engine as engine
from viewlint.cache import CACHEDIR_TAG, Cache
from viewlint.cli import run_check
from viewlint.config import CliOverrides, SettingsResolver
from viewlint.engine import run
from viewlint.files import discover
from viewlint.settings import Settings

BAD = (
    "import torch\n"
    "\n"
    "\n"
    "def write_rows(buf: torch.Tensor, rows: list[int], value: torch.Tensor) -> None:\n"
    "    buf[rows].copy_(value)\n"
)
CLEAN = "import torch\n\nx = torch.zeros(3)\nx[1:2].zero_()\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "clean.py").write_text(CLEAN)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "also_bad.py").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "entries").rglob("*.json"))


def lint(capsys: pytest.CaptureFixture[str], *paths: str, **options: object) -> tuple[int, str]:
    code = run_check(paths or (".",), jobs=1, quiet=True, **options)  # type: ignore[arg-type]
    return code, capsys.readouterr().out


def forbid_linting(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on, any file that is really linted fails the test: results must come from the cache."""

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("linted although the cache holds the result")

    monkeypatch.setattr(engine, "lint_text", fail)


def test_cache_folder_is_tagged_and_ignores_itself(project: Path) -> None:
    result = run_viewlint(".", cwd=project)
    assert result.returncode == 1
    cache = project / ".viewlint_cache"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache / "CACHEDIR.TAG").read_text() == CACHEDIR_TAG
    assert "*" in (cache / ".gitignore").read_text().splitlines()


def test_no_cache_writes_nothing(project: Path) -> None:
    assert run_viewlint("--no-cache", ".", cwd=project).returncode == 1
    assert not (project / ".viewlint_cache").exists()


def test_cache_dir_option(project: Path) -> None:
    assert run_viewlint("--cache-dir", "elsewhere/cache", ".", cwd=project).returncode == 1
    assert (project / "elsewhere" / "cache" / "CACHEDIR.TAG").is_file()
    assert not (project / ".viewlint_cache").exists()
    # The cache folder is never linted itself, even when it sits in the tree.
    assert "elsewhere" not in run_viewlint("--cache-dir", "elsewhere/cache", ".", cwd=project).stdout


def test_second_run_is_served_from_the_cache_findings_included(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    first = lint(capsys)
    assert first[0] == 1 and first[1].count(" VL201 ") == 2
    assert len(entries(project / ".viewlint_cache")) == 3, "files with and without findings are cached"
    forbid_linting(monkeypatch)
    assert lint(capsys) == first


def test_results_report_whether_they_came_from_the_cache(project: Path) -> None:
    files = discover(["."], SettingsResolver(CliOverrides()))
    cache = project / "cache"
    cold = run(files, 1, cache)
    warm = run(files, 1, cache)
    assert [result.from_cache for result in cold] == [False] * 3
    assert [result.from_cache for result in warm] == [True] * 3
    assert [result.diagnostics for result in warm] == [result.diagnostics for result in cold]
    assert any(result.diagnostics for result in warm)


def test_editing_a_file_misses_the_cache(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert lint(capsys)[0] == 1
    (project / "bad.py").write_text(BAD.replace("buf[rows].copy_(value)", "buf[rows] = value"))
    (project / "pkg" / "also_bad.py").write_text(CLEAN)
    assert lint(capsys) == (0, "")


def test_settings_are_part_of_the_key(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert lint(capsys, select=("VL201",))[0] == 1
    assert lint(capsys, select=("VL1",)) == (0, ""), "a cached VL201 result must not leak into a VL1-only run"
    assert lint(capsys, select=("VL201",))[0] == 1
    (project / "pyproject.toml").write_text('[tool.viewlint]\nper-file-ignores = { "pkg/*" = ["VL201"] }\n')
    code, out = lint(capsys)
    assert code == 1 and "also_bad" not in out
    assert Settings(select=("VL201",)).fingerprint() != Settings(select=("ALL",)).fingerprint()
    assert Settings(hot_functions=("step",)).fingerprint() != Settings().fingerprint()
    assert Settings(source="a/pyproject.toml").fingerprint() == Settings(source="b/pyproject.toml").fingerprint()


def test_same_content_under_two_names_gets_two_entries(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Diagnostics carry the displayed path, so the path is part of the key."""
    code, out = lint(capsys)
    assert "bad.py:5:5" in out and "pkg/also_bad.py:5:5" in out
    key_a = Cache.key(BAD.encode(), "settings", "bad.py")
    key_b = Cache.key(BAD.encode(), "settings", "pkg/also_bad.py")
    assert key_a != key_b


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x00\xff garbage",
        b'{"diagnostics": [',  # a write cut short
        b"",
        b"[]",
        b"null",
        b'{"diagnostics": 5}',
        b'{"diagnostics": [{"code": "VL201"}]}',
        b"[" * 100_000 + b"]" * 100_000,  # nested too deeply for json to read back (RecursionError)
        b'{"dependencies": ' + b'{"a": ' * 100_000 + b"1" + b"}" * 100_001,
        b'{"diagnostics": [{"code": "VL201", "name": "n", "message": "m", "filename": "f", "location": "1:1",'
        b' "end_location": {"row": 1}, "fix": "yes", "noqa_row": 1}]}',
        b'{"diagnostics": [{"code": "VL201", "name": "n", "message": "m", "filename": "f", "location": {"row": 1, "column": 1},'
        b' "end_location": {"row": 1, "column": 1}, "fix": {"applicability": "bogus", "message": "", "edits": []}, "noqa_row": 1}]}',
    ],
)
def test_corrupt_entries_are_ignored_and_rewritten(project: Path, capsys: pytest.CaptureFixture[str], garbage: bytes) -> None:
    expected = lint(capsys)
    cache = project / ".viewlint_cache"
    for entry in entries(cache):
        entry.write_bytes(garbage)
    assert lint(capsys) == expected
    for entry in entries(cache):  # each corrupt entry was replaced by a good one
        assert json.loads(entry.read_text())["diagnostics"] is not None


def test_an_unwritable_cache_is_not_fatal(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "not_a_folder").write_text("a file where the cache folder should be\n")
    expected = lint(capsys, no_cache=True)
    assert lint(capsys, cache_dir="not_a_folder") == expected
    assert lint(capsys, cache_dir="not_a_folder/cache") == expected


def test_no_temporary_files_are_left_behind(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lint(capsys)
    leftovers = [path for path in (project / ".viewlint_cache").rglob("*") if path.name.startswith(".tmp-")]
    assert leftovers == []
