"""Which files to lint: walk the given paths, apply excludes and .gitignore, attach settings.

Paths are walked breadth first so that ``.gitignore`` can be asked about a whole
level of the tree at once (one ``git check-ignore`` process per level and repository,
never one per file). Problems with a path (a broken symbolic link, a loop, a directory
we may not read) become ``SourceFile`` entries with ``error`` set, so the engine can
report them as VL001 instead of skipping the file in silence.
"""

from __future__ import annotations

import errno
import fnmatch
import functools
import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Optional, Sequence

from viewlint.config import SettingsResolver
from viewlint.reading import describe_special
from viewlint.settings import Settings

__all__ = ["PYTHON_SUFFIXES", "PathNotFoundError", "SourceFile", "discover", "is_excluded", "is_included"]

# The suffixes of the default `include` (Python, stubs, Jupyter notebooks); a file named
# explicitly is linted whatever its name.
PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass(frozen=True)
class SourceFile:
    """One file to lint: its display path, its settings, and a problem found while discovering it."""

    path: Path
    settings: Settings
    error: Optional[str] = None
    is_directory: bool = False  # the error is about a folder we cannot list or enter


class PathNotFoundError(Exception):
    """A path given on the command line does not exist."""


@functools.lru_cache(maxsize=64)
def _exclusion(globs: tuple[str, ...]) -> tuple["re.Pattern[str]", "re.Pattern[str]"]:
    """Two regexes for a list of exclude globs: one for a basename, one for a project-relative
    POSIX path. `./x` and `x/` mean `x`; `**/x` also matches `x` at the project root, as it does
    in gitignore-style globs."""
    cleaned = []
    for glob in globs:
        glob = glob.rstrip("/")
        cleaned.append(glob[2:] if glob.startswith("./") else glob)
    by_name = [fnmatch.translate(glob) for glob in cleaned]
    by_path = by_name + [fnmatch.translate(glob[3:]) for glob in cleaned if glob.startswith("**/")]
    return re.compile("|".join(by_name)), re.compile("|".join(by_path))


def _relative_to_root(absolute: Path, settings: Settings) -> Optional[str]:
    """``absolute`` relative to the settings' project root as a POSIX string, or None if outside it."""
    root = Path(settings.project_root)
    if not _is_under(absolute, root):
        return None
    return PurePosixPath(os.path.relpath(absolute, root)).as_posix()


def _is_under(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or inside it (lexically; symlinks are not resolved)."""
    inner, outer = str(path), str(root)
    return inner == outer or inner.startswith(outer if outer.endswith(os.sep) else outer + os.sep)


def _matches(absolute: Path, settings: Settings, globs: tuple[str, ...]) -> bool:
    """Whether one of `globs` names this path, by basename or project-relative path."""
    if not globs:
        return False
    relative = _relative_to_root(absolute, settings)
    target = relative if relative is not None else absolute.as_posix()
    by_name, by_path = _exclusion(tuple(globs))
    return by_name.match(absolute.name) is not None or by_path.match(target) is not None


def is_excluded(absolute: Path, settings: Settings) -> bool:
    """Whether ``exclude``/``extend-exclude`` name this path (by basename or project-relative path)."""
    return _matches(absolute, settings, tuple(settings.exclude) + tuple(settings.extend_exclude))


def is_included(absolute: Path, settings: Settings) -> bool:
    """Whether ``include``/``extend-include`` pick up this file when a directory is walked
    (by basename or project-relative path, as Ruff's `include`)."""
    return _matches(absolute, settings, tuple(settings.include) + tuple(settings.extend_include))


def _force_excluded(absolute: Path, settings: Settings) -> bool:
    """``--force-exclude``: the path itself or any of its ancestors inside the project is excluded."""
    if is_excluded(absolute, settings):
        return True
    root = Path(settings.project_root)
    inside = [parent for parent in absolute.parents if parent != root and root in parent.parents]
    return any(is_excluded(parent, settings) for parent in inside)


def _is_listed_as_dir(entry: "os.DirEntry[str]") -> bool:
    """Whether the directory listing itself says this entry is a folder (no stat needed)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _describe(error: OSError, path: str) -> str:
    """A short, one-line description of why ``path`` cannot be used."""
    if error.errno == errno.ELOOP:
        return "symbolic link loop"
    if error.errno == errno.ENOENT and os.path.islink(path):
        return "broken symbolic link"
    if error.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    return (error.strerror or str(error)).lower()


@dataclass(frozen=True)
class _Chain:
    """The (device, inode) identities of a directory and its ancestors, to detect symlink loops."""

    identity: tuple[int, int]
    parent: Optional["_Chain"] = None

    def __contains__(self, identity: object) -> bool:
        node: Optional[_Chain] = self
        while node is not None:
            if node.identity == identity:
                return True
            node = node.parent
        return False


@dataclass
class _Dir:
    """A directory waiting to be scanned."""

    display: Path
    absolute: Path
    chain: _Chain
    repo: Optional[Path]  # the git work tree holding it, if any
    via_link: bool  # reached through a symlinked directory: git cannot answer for it


@dataclass
class _Candidate:
    """A directory entry that passed the excludes and waits for the .gitignore check."""

    display: Path
    absolute: Path
    settings: Settings
    parent: _Dir
    is_dir: bool
    identity: tuple[int, int] = (0, 0)
    is_link: bool = False


def _find_repo(directory: Path) -> Optional[Path]:
    """The nearest directory at or above ``directory`` holding ``.git`` (a folder or a worktree file)."""
    for candidate in (directory, *directory.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def _git_ignored(repo: Path, candidates: list[_Candidate]) -> set[int]:
    """Indexes of ``candidates`` that git ignores, asked in one ``git check-ignore`` run.

    Returns an empty set when git is missing or fails: the option is then silently moot.
    """
    git = shutil.which("git")
    if git is None or not candidates:
        return set()
    queries = []
    for candidate in candidates:
        relative = PurePosixPath(os.path.relpath(candidate.absolute, repo)).as_posix()
        # A trailing slash lets directory-only patterns such as `build/` match.
        queries.append(relative + "/" if candidate.is_dir else relative)
    try:
        result = subprocess.run(
            [git, "check-ignore", "-z", "--stdin"],
            cwd=repo,
            input=("\0".join(queries) + "\0").encode("utf-8", "surrogateescape"),
            capture_output=True,
            check=False,
        )
    except OSError:
        return set()
    if result.returncode not in (0, 1):  # 128: not a work tree, or a path git refuses
        return set()
    ignored = {item for item in result.stdout.decode("utf-8", "surrogateescape").split("\0") if item}
    return {index for index, query in enumerate(queries) if query in ignored}


def skipped_by_walk(absolute: Path, settings: Settings) -> bool:
    """Whether walking a folder would pass over this file: it, or a folder above it inside the
    project, matches ``exclude``/``extend-exclude``, or ``.gitignore`` ignores it (with
    ``respect-gitignore``). For callers handed one file at a time, such as the flake8 plugin."""
    if _force_excluded(absolute, settings):
        return True
    if not settings.respect_gitignore:
        return False
    repo = _find_repo(absolute.parent)
    if repo is None:
        return False
    # Asked once about the file: git answers for the folders above it too (`build/` ignores build/x.py).
    return bool(_git_ignored(repo, [_Candidate(absolute, absolute, settings, None, False)]))  # type: ignore[arg-type]


class _Discovery:
    """Collects SourceFiles for one ``discover`` call, deduplicated by absolute path."""

    def __init__(self, resolver: SettingsResolver) -> None:
        self.resolver = resolver
        self.found: dict[str, SourceFile] = {}
        self.git_available = shutil.which("git") is not None

    def add(self, display: Path, absolute: Path, settings: Settings, error: Optional[str] = None,
            is_directory: bool = False) -> None:
        """Record a file once; the first spelling of a path is the one displayed."""
        key = os.path.normcase(str(absolute))
        if key not in self.found:
            self.found[key] = SourceFile(display, settings, error, is_directory)

    def walk(self, display: Path, absolute: Path, identity: tuple[int, int]) -> None:
        """Walk a directory tree breadth first, one .gitignore query per level and repository."""
        level = [_Dir(display, absolute, _Chain(identity), _find_repo(absolute), False)]
        while level:
            candidates: list[_Candidate] = []
            for directory in level:
                candidates.extend(self._scan(directory))
            ignored = self._ignored(candidates)
            next_level: list[_Dir] = []
            for index, candidate in enumerate(candidates):
                if index in ignored:
                    continue
                if not candidate.is_dir:
                    self.add(candidate.display, candidate.absolute, candidate.settings)
                    continue
                parent = candidate.parent
                # A directory holding .git starts its own work tree (a submodule or nested repository).
                repo = candidate.absolute if os.path.lexists(candidate.absolute / ".git") else parent.repo
                next_level.append(
                    _Dir(
                        candidate.display,
                        candidate.absolute,
                        _Chain(candidate.identity, parent.chain),
                        repo,
                        parent.via_link or candidate.is_link,
                    )
                )
            level = next_level

    def _scan(self, directory: _Dir) -> list[_Candidate]:
        """List one directory's children that pass the excludes; report unreadable entries."""
        settings = self.resolver.settings_for_dir(directory.absolute)
        try:
            with os.scandir(directory.absolute) as iterator:
                entries = sorted(iterator, key=lambda entry: entry.name)
        except OSError as error:
            self.add(directory.display, directory.absolute, settings, _describe(error, str(directory.absolute)), True)
            return []
        candidates = []
        for entry in entries:
            absolute = directory.absolute / entry.name
            if is_excluded(absolute, settings):
                continue
            display = directory.display / entry.name
            is_python = is_included(absolute, settings)
            try:
                is_link = entry.is_symlink()
                info = entry.stat()  # follows symbolic links
            except OSError as error:
                # Only report files we would have linted (a broken link named notes.txt is not ours),
                # and folders we cannot enter (the directory entry still says it is one).
                listed_as_dir = _is_listed_as_dir(entry)
                if is_python or listed_as_dir:
                    self.add(display, absolute, settings, _describe(error, entry.path), listed_as_dir)
                continue
            if stat.S_ISDIR(info.st_mode):
                identity = (info.st_dev, info.st_ino)
                if is_link and identity in directory.chain:
                    self.add(display, absolute, settings, "symbolic link loop")
                    continue
                candidates.append(_Candidate(display, absolute, settings, directory, True, identity, is_link))
            elif is_python and stat.S_ISREG(info.st_mode):
                candidates.append(_Candidate(display, absolute, settings, directory, False, is_link=is_link))
            elif is_python:
                # A named pipe or a device called *.py is reported, never opened (a pipe would block).
                self.add(display, absolute, settings, describe_special(info.st_mode))
        return candidates

    def _ignored(self, candidates: list[_Candidate]) -> set[int]:
        """Indexes of candidates that .gitignore excludes, one git process per repository."""
        if not self.git_available:
            return set()
        by_repo: dict[Path, list[int]] = {}
        for index, candidate in enumerate(candidates):
            parent = candidate.parent
            if candidate.settings.respect_gitignore and parent.repo is not None and not parent.via_link:
                by_repo.setdefault(parent.repo, []).append(index)
        ignored: set[int] = set()
        for repo, indexes in by_repo.items():
            hits = _git_ignored(repo, [candidates[index] for index in indexes])
            ignored.update(indexes[hit] for hit in hits)
        return ignored


def discover(paths: Sequence[str], resolver: SettingsResolver, force_exclude: bool = False) -> list[SourceFile]:
    """The files to lint under ``paths``, sorted by path and deduplicated.

    Directories are walked for the files ``include``/``extend-include`` name (``*.py``,
    ``*.pyi`` and ``*.ipynb`` by default), skipping excluded and
    git-ignored entries. A path named explicitly is linted even when excluded (and
    whatever its suffix) unless ``force_exclude``. Raises PathNotFoundError for a
    path that does not exist; other problems become entries with ``error`` set.
    """
    discovery = _Discovery(resolver)
    for raw in paths:
        try:
            os.lstat(raw)
        except OSError as error:
            if error.errno in (errno.ENOENT, errno.ENOTDIR):
                raise PathNotFoundError(f"{raw}: No such file or directory") from None
            # e.g. a folder above it that we may not enter: the path may well exist; report it as VL001.
        display = Path(raw)
        absolute = Path(os.path.abspath(raw))
        settings = resolver.settings_for(absolute)
        if force_exclude and _force_excluded(absolute, settings):
            continue
        try:
            info = os.stat(raw)
        except OSError as error:
            discovery.add(display, absolute, settings, _describe(error, raw))
            continue
        if stat.S_ISDIR(info.st_mode):
            discovery.walk(display, absolute, (info.st_dev, info.st_ino))
        else:
            discovery.add(display, absolute, settings)
    return sorted(discovery.found.values(), key=lambda source: source.path)
