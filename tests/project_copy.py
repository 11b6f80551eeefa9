"""Copy this project's source tree (what git would commit) to a folder, for tests that build or install it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Used when the tree is not a git checkout (e.g. an unpacked sdist).
_IGNORED = shutil.ignore_patterns(
    ".git", "__pycache__", "*.pyc", "*.egg-info", ".viewlint_cache", ".pytest_cache", ".hypothesis",
    "build", "dist", ".venv", "venv", ".ci-venv",
)


def _git_files() -> list[str] | None:
    """Tracked and untracked-but-not-ignored files, or None outside a git checkout."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        return None
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=False,
    )
    if listing.returncode != 0:
        return None
    return [name for name in listing.stdout.decode().split("\0") if name]


def copy_project(destination: Path) -> Path:
    """Copy the working tree (uncommitted edits included) to ``destination``; returns it."""
    names = _git_files()
    if names is None:
        shutil.copytree(ROOT, destination, ignore=_IGNORED, symlinks=True)
        return destination
    destination.mkdir(parents=True, exist_ok=True)
    for name in names:
        source = ROOT / name
        if not source.is_file():  # deleted in the working tree, or a submodule
            continue
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return destination


def commit_all(repository: Path) -> None:
    """`git init` (if needed), add everything and commit, with a throwaway identity."""
    env_args = ["-c", "user.name=viewlint tests", "-c", "user.email=tests@viewlint.invalid", "-c", "commit.gpgsign=false"]
    if not (repository / ".git").exists():
        subprocess.run(["git", "init", "-q", str(repository)], check=True)
    subprocess.run(["git", *env_args, "add", "-A"], cwd=repository, check=True)
    subprocess.run(["git", *env_args, "commit", "-q", "--no-verify", "-m", "snapshot"], cwd=repository, check=True)
