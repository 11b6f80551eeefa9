"""The engine's parallel run: same bytes out whatever the number of workers, in a stable order."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES, run_viewlint

from viewlint.config import CliOverrides, SettingsResolver
from viewlint import engine
from viewlint.engine import run
from viewlint.files import discover

COPIES = 3


@pytest.fixture(scope="module")
def many_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every fixture folder copied many times, plus files with bad input, spread over nested folders."""
    root = tmp_path_factory.mktemp("many")
    for copy in range(COPIES):
        shutil.copytree(FIXTURES, root / f"copy{copy:02d}" / "fixtures")
    (root / "copy00" / "broken.py").write_text("import torch\nx = torch.zeros(3\n")
    (root / "copy02" / "latin.py").write_bytes(b"import torch\nname = '\xe9'\n")
    (root / "copy01" / "clean.py").write_text("import torch\n\nx = torch.zeros(3)\n")
    return root


def lint_jobs(folder: Path, jobs: int, output_format: str) -> str:
    result = run_viewlint("--no-cache", "--select", "ALL", "-j", str(jobs), "--output-format", output_format, ".", cwd=folder)
    assert result.returncode in (1, 2), result.stderr  # the fixtures have findings (2: a rule crashed somewhere)
    assert "Traceback" not in result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def serial_concise(many_files: Path) -> str:
    return lint_jobs(many_files, 1, "concise")


@pytest.mark.parametrize("output_format", ["concise", "json"])
def test_one_and_several_workers_print_identical_bytes(many_files: Path, serial_concise: str, output_format: str) -> None:
    serial = serial_concise if output_format == "concise" else lint_jobs(many_files, 1, output_format)
    parallel = lint_jobs(many_files, 2, output_format)
    assert serial.count("\n") > COPIES, "the copies must produce findings"
    assert parallel == serial


def test_output_is_sorted_by_path_row_column_code(serial_concise: str) -> None:
    lines = serial_concise.splitlines()

    def key(line: str) -> tuple[str, int, int, str]:
        path, row, column, rest = line.split(":", 3)
        return path, int(row), int(column), rest.split()[0]

    assert [key(line) for line in lines] == sorted(key(line) for line in lines)
    assert "copy00/broken.py:2:" in serial_concise
    assert "copy02/latin.py:2:" in serial_concise


def test_run_returns_results_in_file_order_for_any_worker_count(many_files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(many_files)
    files = discover(["."], SettingsResolver(CliOverrides(select=("ALL",))))
    assert len(files) > 4 * COPIES
    serial = run(files, 1, None)
    parallel = run(files, 2, None)
    assert [result.path for result in serial] == [str(source.path) for source in files]
    assert [result.path for result in parallel] == [result.path for result in serial]
    assert [result.diagnostics for result in parallel] == [result.diagnostics for result in serial]


def test_parallel_run_with_the_cache_gives_the_same_output(many_files: Path, serial_concise: str, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    expected = serial_concise
    for _ in range(2):  # cold, then warm
        result = run_viewlint("--select", "ALL", "-j", "2", "--cache-dir", str(cache), ".", cwd=many_files)
        assert result.stdout == expected


def test_run_keeps_the_collector_off_while_linting_and_restores_it(many_files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    monkeypatch.chdir(many_files)
    files = discover(["."], SettingsResolver(CliOverrides(select=("ALL",))))
    before = gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()
    enabled_while_linting: list[bool] = []
    collections: list[int] = []
    real = engine._process_batch

    def spy(batch, directory):  # type: ignore[no-untyped-def]
        enabled_while_linting.append(gc.isenabled())
        return real(batch, directory)

    def on_collection(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append(info["generation"])

    monkeypatch.setattr(engine, "_process_batch", spy)
    gc.callbacks.append(on_collection)
    try:
        results = run(files, 1, None)
    finally:
        gc.callbacks.remove(on_collection)
    assert any(result.diagnostics for result in results)
    assert enabled_while_linting == [False]  # no automatic collection while the files are linted
    assert collections.count(0) >= len(files)  # the young objects are collected after each file
    assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == before


def test_cycles_a_file_leaves_are_collected_after_it() -> None:
    import gc
    import weakref

    class Node:
        pass

    survivors = []
    with engine.few_collections():
        node = Node()
        node.cycle = node  # type: ignore[attr-defined]
        survivors.append(weakref.ref(node))
        del node
        assert survivors[0]() is not None  # nothing collects it while linting
        engine._after_file()
        assert survivors[0]() is None
    assert gc.isenabled()


def test_parse_module_skips_validation_only_while_parsing() -> None:
    import libcst as cst

    source = "def f(x):\n    return (x[0] + 1)  # c\n\n\nclass A(B, metaclass=M):\n    y: int = 2\n"
    assert engine.parse_module(source).code == source
    assert engine.parse_module(source).deep_equals(cst.parse_module(source))
    with pytest.raises(cst.ParserSyntaxError):
        engine.parse_module("def (:\n")
    with pytest.raises(cst.CSTValidationError):  # validation is back on, after success and failure alike
        cst.Name("not a name")


def test_parallel_run_reads_cache_hits_itself_and_lints_only_the_rest(many_files: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    monkeypatch.chdir(many_files)
    files = discover(["."], SettingsResolver(CliOverrides(select=("ALL",))))
    cache = tmp_path / "cache"
    cold = run(files, 2, cache)
    warm = run(files, 2, cache)
    assert not any(result.from_cache for result in cold) and all(result.from_cache for result in warm)
    assert [(r.path, r.diagnostics) for r in warm] == [(r.path, r.diagnostics) for r in cold]
    # Not the VL000 file: Python 3.9 reports an unclosed bracket at the end of the file, which the append moves.
    touched = next(source.path for source, result in zip(files, cold)
                   if result.diagnostics and all(d.code != "VL000" for d in result.diagnostics))
    touched.write_text(touched.read_text(encoding="utf-8") + "\n# touched\n", encoding="utf-8")
    again = run(files, 2, cache)
    assert [r.from_cache for r in again] == [source.path != touched for source in files]
    assert [(r.path, r.diagnostics) for r in again] == [(r.path, r.diagnostics) for r in cold]
