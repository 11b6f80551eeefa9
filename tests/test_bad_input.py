"""Bad input gets a clear one-line diagnostic, never a traceback, and the run goes on."""

from __future__ import annotations

import os
import pathlib
import sys
from pathlib import Path
from typing import Any

import libcst as cst
import pytest

from conftest import run_viewlint

import viewlint.engine as engine
import viewlint.registry as registry
from viewlint.cli import run_check
from viewlint.rule import Rule

BAD = (
    "import torch\n"
    "\n"
    "\n"
    "def write_rows(buf: torch.Tensor, rows: list[int], value: torch.Tensor) -> None:\n"
    "    buf[rows].copy_(value)\n"
)
FINDING = "bad.py:5:5: VL201"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "bad.py").write_text(BAD)
    return tmp_path


def lint(folder: Path, *args: str):
    """The real CLI, concise output; the cache is off so each file is really read."""
    return run_viewlint(*args, "--no-cache", cwd=folder)


def lines_for(stdout: str, name: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(f"{name}:")]


def assert_one_line_and_the_run_goes_on(result: Any, name: str, code: str, text: str, position: str = "1:1") -> None:
    """``name`` has exactly one ``code`` diagnostic at ``position`` holding ``text``; bad.py was still linted."""
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = lines_for(result.stdout, name)
    assert line.startswith(f"{name}:{position}: {code} "), line
    assert text in line, line
    assert FINDING in result.stdout, "the other files must still be linted"
    assert result.returncode == 1, result.stderr


# --- syntax errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "position", "text"),
    [
        ("import torch\nx = torch.zeros(3)\nx = 1 +* 2\n", "3:8", "invalid syntax"),
        # Python 3.9's parser reports these at the end of the file or without the hint; viewlint says what it says.
        ("import torch\n\ndef f(buf, idx):\n    buf[idx].zero_(\n\nx = 1\n",
         *(("4:19", "'(' was never closed") if sys.version_info >= (3, 10) else ("6:6", "unexpected EOF while parsing"))),
        ("import torch\na = torch.ones(2)\nb = )\n", "3:5", "unmatched ')'"),
        ("import torch\nif torch.cuda.is_available()\n    pass\n",
         "2:29", "expected ':'" if sys.version_info >= (3, 10) else "invalid syntax"),
    ],
)
def test_syntax_error_is_vl000_at_the_error_position(project: Path, source: str, position: str, text: str) -> None:
    (project / "broken.py").write_text(source)
    result = lint(project, ".")
    assert_one_line_and_the_run_goes_on(result, "broken.py", "VL000", f"syntax error: {text}", position)


def test_syntax_error_alone_still_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import torch\nx = torch.zeros(3\n")
    result = lint(tmp_path, "broken.py")
    assert result.returncode == 1
    assert result.stdout.startswith("broken.py:2:")
    assert " VL000 syntax error: " in result.stdout
    assert result.stderr == "Found 1 finding (0 fixable).\n"


def test_syntax_error_cannot_be_deselected_or_noqaed(project: Path) -> None:
    (project / "broken.py").write_text("import torch  # noqa\nx = torch.zeros(3  # noqa\n")
    result = lint(project, "--select", "VL1", "broken.py")
    assert result.returncode == 1
    assert " VL000 " in result.stdout


# --- files that cannot be read or decoded ----------------------------------------------------------


def test_invalid_utf8_without_a_cookie(project: Path) -> None:
    (project / "latin.py").write_bytes(b"import torch\nname = '\xe9t\xe9'\n")
    result = lint(project, ".")
    assert_one_line_and_the_run_goes_on(result, "latin.py", "VL001", "cannot decode as utf-8: byte 0xe9", "2:9")


def test_a_coding_cookie_is_honoured(project: Path) -> None:
    (project / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nimport torch\nname = '\xe9t\xe9'\n")
    result = lint(project, ".")
    assert lines_for(result.stdout, "latin.py") == []


def test_unknown_coding_cookie(project: Path) -> None:
    (project / "cookie.py").write_bytes(b"# -*- coding: klingon -*-\nimport torch\n")
    result = lint(project, ".")
    assert_one_line_and_the_run_goes_on(result, "cookie.py", "VL001", "cannot determine encoding: unknown encoding: klingon")


def test_nul_bytes(project: Path) -> None:
    (project / "binary.py").write_bytes(b"import torch\nx = 1\x00\x00\n")
    result = lint(project, ".")
    assert_one_line_and_the_run_goes_on(result, "binary.py", "VL001", "file contains NUL bytes", "2:6")


def test_broken_symlink(project: Path) -> None:
    (project / "dangling.py").symlink_to(project / "nowhere.py")
    result = lint(project, ".")
    assert_one_line_and_the_run_goes_on(result, "dangling.py", "VL001", "broken symbolic link")
    # Named on the command line, too.
    named = lint(project, "dangling.py", "bad.py")
    assert_one_line_and_the_run_goes_on(named, "dangling.py", "VL001", "broken symbolic link")


def test_symlink_loop(project: Path) -> None:
    (project / "loop_a.py").symlink_to(project / "loop_b.py")
    (project / "loop_b.py").symlink_to(project / "loop_a.py")
    result = lint(project, ".")
    assert_one_line_and_the_run_goes_on(result, "loop_a.py", "VL001", "symbolic link loop")
    assert_one_line_and_the_run_goes_on(result, "loop_b.py", "VL001", "symbolic link loop")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file_for_real(project: Path) -> None:
    secret = project / "secret.py"
    secret.write_text(BAD)
    secret.chmod(0)
    try:
        result = lint(project, ".")
    finally:
        secret.chmod(0o644)
    assert_one_line_and_the_run_goes_on(result, "secret.py", "VL001", "cannot read file: Permission denied")


@pytest.mark.parametrize("use_cache", [False, True])
def test_unreadable_file(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], use_cache: bool) -> None:
    """Permissions are simulated (tests may run as root): opening secret.py raises EACCES."""
    (project / "secret.py").write_text(BAD)
    real_open = os.open

    def os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if os.path.basename(path) == "secret.py":
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.chdir(project)
    code = run_check((".",), jobs=1, no_cache=not use_cache, cache_dir=str(project / "cache"), quiet=True)
    out = capsys.readouterr().out
    assert code == 1
    assert lines_for(out, "secret.py") == ["secret.py:1:1: VL001 cannot read file: Permission denied"]
    assert FINDING in out


def test_very_large_file(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(engine, "MAX_FILE_BYTES", 1024 * 1024)
    (project / "huge.py").write_text("import torch\n" + "x = 1\n" * 250_000)
    monkeypatch.chdir(project)
    for use_cache in (False, True):
        code = run_check((".",), jobs=1, no_cache=not use_cache, cache_dir=str(project / "cache"), quiet=True)
        out = capsys.readouterr().out
        assert code == 1
        (line,) = lines_for(out, "huge.py")
        assert line.startswith("huge.py:1:1: VL001 file too large to lint (1.4 MiB > 1 MiB)"), line
        assert FINDING in out


def test_directory_named_like_a_python_file_is_walked_not_read(project: Path) -> None:
    (project / "package.py").mkdir()
    (project / "package.py" / "inner.py").write_text(BAD)
    result = lint(project, ".")
    assert "package.py/inner.py:5:5: VL201" in result.stdout
    assert result.returncode == 1


# --- a crash inside a rule ----------------------------------------------------------------------


class AlwaysReports(Rule):
    """
    ## What it does
    Test-only rule: reports every `import`.

    ## Why it matters
    It shows that other rules keep reporting when one rule crashes.

    ## Example
    ```python
    import torch
    ```

    ## Fix
    None.
    """

    code = "VL902"
    name = "always-reports"
    summary = "Reports imports"

    def visit_Import(self, node: cst.Import) -> None:
        self.report(node, "an import")


def test_rule_crash_is_vl002_naming_rule_and_file_and_exits_2(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    rules = {**registry.all_rules(), "VL902": AlwaysReports}
    monkeypatch.setattr(registry, "all_rules", lambda: rules)
    monkeypatch.setattr(engine, "all_rules", lambda: rules)
    vl201 = rules["VL201"]
    handlers = [name for name in dir(vl201) if name.startswith(("visit_", "leave_")) and name in vars(vl201)]
    assert handlers, "VL201 has visitor methods to break"

    def explode(self: Rule, node: cst.CSTNode) -> None:
        raise RuntimeError("boom")

    for name in handlers:
        monkeypatch.setattr(vl201, name, explode)
    (project / "other.py").write_text("import os\n")
    monkeypatch.chdir(project)
    code = run_check((".",), select=("VL201", "VL902"), jobs=1, no_cache=True)
    captured = capsys.readouterr()
    assert code == 2
    lines = captured.out.splitlines()
    assert "bad.py:1:1: VL002 internal error in rule VL201: RuntimeError: boom" in lines
    assert "bad.py:1:1: VL902 an import" in lines, "the other rule still reports on the same file"
    assert "other.py:1:1: VL902 an import" in lines, "the other files are still linted"
    assert not any(" VL201 " in line for line in lines)
    assert "Traceback" not in captured.err


def test_rule_crash_is_not_cached(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    vl201 = registry.all_rules()["VL201"]
    handlers = [name for name in vars(vl201) if name.startswith(("visit_", "leave_"))]

    def explode(self: Rule, node: cst.CSTNode) -> None:
        raise RuntimeError("boom")

    monkeypatch.chdir(project)
    with monkeypatch.context() as patch:
        for name in handlers:
            patch.setattr(vl201, name, explode)
        assert run_check(("bad.py",), jobs=1, cache_dir="cache", quiet=True) == 2
    capsys.readouterr()
    assert run_check(("bad.py",), jobs=1, cache_dir="cache", quiet=True) == 1
    assert capsys.readouterr().out.startswith(FINDING)


def test_prefilter_crash_is_an_internal_error_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in the module index or the prefilter reports VL002 for that file; lint_text never raises."""
    from viewlint.settings import Settings

    def explode(tree: object, text: str) -> None:
        raise RuntimeError("index boom")

    monkeypatch.setattr(engine, "build_index_from_ast", explode)
    diagnostics = engine.lint_text("import torch\nx = torch.zeros(3)\n", "f.py", Settings(select=("ALL",)))
    assert [(d.code, d.message) for d in diagnostics] == [
        ("VL002", "internal error in the prefilter: RuntimeError: index boom")
    ]
