"""Path discovery: walking, excludes, .gitignore, explicit paths and broken links."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from viewlint.config import CliOverrides, SettingsResolver
from viewlint.files import PathNotFoundError, SourceFile, discover


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("import torch\n")


def found(paths: list[str], force_exclude: bool = False, **overrides: Any) -> list[str]:
    resolver = SettingsResolver(CliOverrides(**overrides), cwd=Path.cwd())
    return [source.path.as_posix() for source in discover(paths, resolver, force_exclude)]


def entries(paths: list[str]) -> list[SourceFile]:
    return discover(paths, SettingsResolver(CliOverrides(), cwd=Path.cwd()))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    touch(
        tmp_path,
        "src/model.py",
        "src/stubs.pyi",
        "src/notes.txt",
        "src/sub/deep.py",
        "build/gen.py",
        ".venv/lib/site.py",
        "src/__pycache__/model.py",
        "legacy/old.py",
    )
    return tmp_path


def test_walks_directories_for_py_and_pyi(project: Path) -> None:
    assert found(["src"]) == ["src/model.py", "src/stubs.pyi", "src/sub/deep.py"]


def test_default_excludes_skip_build_and_venv(project: Path) -> None:
    assert found(["."]) == ["legacy/old.py", "src/model.py", "src/stubs.pyi", "src/sub/deep.py"]


def test_sorted_and_deduplicated_keeping_the_given_spelling(project: Path) -> None:
    assert found(["src/model.py", "./src", "src/sub/deep.py", "legacy/old.py"]) == [
        "legacy/old.py",
        "src/model.py",
        "src/stubs.pyi",
        "src/sub/deep.py",
    ]


def test_absolute_path_stays_absolute(project: Path) -> None:
    assert found([str(project / "legacy")]) == [(project / "legacy" / "old.py").as_posix()]


def test_explicit_file_is_linted_whatever_its_suffix(project: Path) -> None:
    assert found(["src/notes.txt"]) == ["src/notes.txt"]


def test_explicit_paths_are_linted_even_when_excluded(project: Path) -> None:
    assert found(["build/gen.py"]) == ["build/gen.py"]
    assert found(["build"]) == ["build/gen.py"]


def test_force_exclude_skips_excluded_explicit_paths(project: Path) -> None:
    assert found(["build/gen.py", "build", "src/model.py"], force_exclude=True) == ["src/model.py"]


def test_config_exclude_replaces_defaults(project: Path) -> None:
    (project / "viewlint.toml").write_text('exclude = ["legacy"]\n')
    assert "build/gen.py" in found(["."])
    assert "legacy/old.py" not in found(["."])


def test_extend_exclude_adds_to_defaults_and_matches_relative_paths(project: Path) -> None:
    (project / "viewlint.toml").write_text('extend-exclude = ["src/sub/*.py"]\n')
    assert found(["."]) == ["legacy/old.py", "src/model.py", "src/stubs.pyi"]


def test_cli_extend_exclude(project: Path) -> None:
    assert found(["."], extend_exclude=("*.pyi", "legacy")) == ["src/model.py", "src/sub/deep.py"]


def test_nested_config_excludes_apply_below_it(project: Path) -> None:
    (project / "src" / "viewlint.toml").write_text('extend-exclude = ["deep.py"]\n')
    sources = entries(["."])
    assert [s.path.as_posix() for s in sources] == ["legacy/old.py", "src/model.py", "src/stubs.pyi"]
    assert sources[1].settings.project_root == str(project / "src")
    assert sources[0].settings.project_root == str(project)


def test_missing_path_raises(project: Path) -> None:
    with pytest.raises(PathNotFoundError, match=r"^path/does/not/exist: No such file or directory$"):
        found(["src", "path/does/not/exist"])


def test_broken_symlink_is_an_error_entry(project: Path) -> None:
    os.symlink(project / "gone.py", project / "src" / "dangling.py")
    os.symlink(project / "gone.txt", project / "src" / "dangling.txt")  # not a Python name: not ours
    errors = {s.path.as_posix(): s.error for s in entries(["src"]) if s.error}
    assert errors == {"src/dangling.py": "broken symbolic link"}
    explicit = entries(["src/dangling.py"])
    assert [(s.path.as_posix(), s.error) for s in explicit] == [("src/dangling.py", "broken symbolic link")]


def test_symlink_loops_are_error_entries(project: Path) -> None:
    os.symlink("self.py", project / "src" / "self.py")
    os.symlink("..", project / "src" / "sub" / "up")  # a directory link back to an ancestor
    errors = {s.path.as_posix(): s.error for s in entries(["src"]) if s.error}
    assert errors == {"src/self.py": "symbolic link loop", "src/sub/up": "symbolic link loop"}


def test_symlinked_file_keeps_its_link_path(project: Path) -> None:
    os.symlink(project / "legacy" / "old.py", project / "src" / "alias.py")
    assert "src/alias.py" in found(["src"])


def test_unreadable_directory_is_an_error_entry(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = project / "src" / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:
        # chmod 000 does not stop root (tests may run as root), so refuse the read here instead.
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    errors = {s.path.as_posix(): s.error for s in entries(["src"]) if s.error}
    assert errors == {"src/locked": "permission denied"}


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)


@needs_git
def test_gitignore_is_respected(project: Path) -> None:
    git_init(project)
    (project / ".gitignore").write_text("legacy/\n*.pyi\n")
    assert found(["."]) == ["src/model.py", "src/sub/deep.py"]


@needs_git
def test_gitignore_uses_one_git_process_per_level(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git_init(project)
    (project / ".gitignore").write_text("deep.py\n")
    calls: list[list[str]] = []
    original = subprocess.run

    def counting_run(args: list[str], **kwargs: Any) -> Any:
        calls.append(args)
        return original(args, **kwargs)

    monkeypatch.setattr(subprocess, "run", counting_run)
    assert found(["."]) == ["legacy/old.py", "src/model.py", "src/stubs.pyi"]
    assert len(calls) == 3  # one per directory level: ., src/legacy, src/sub


@needs_git
def test_gitignore_can_be_turned_off(project: Path) -> None:
    git_init(project)
    (project / ".gitignore").write_text("legacy/\n")
    assert "legacy/old.py" in found(["."], respect_gitignore=False)
    (project / "viewlint.toml").write_text("respect-gitignore = false\n")
    assert "legacy/old.py" in found(["."])


@needs_git
def test_gitignore_does_not_hide_explicit_paths(project: Path) -> None:
    git_init(project)
    (project / ".gitignore").write_text("legacy/\n")
    assert found(["legacy/old.py"]) == ["legacy/old.py"]


def test_gitignore_outside_a_repository_is_moot(project: Path) -> None:
    (project / ".gitignore").write_text("legacy/\n")  # no git repository here (tmp is not in one)
    assert "legacy/old.py" in found(["."])


def test_gitignore_without_git_installed(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("legacy/\n")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert "legacy/old.py" in found(["."])
