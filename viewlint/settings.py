"""Resolved settings: what one file is linted with, after config files and CLI flags merge."""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Any, Optional

from viewlint.registry import resolve_selection

# Files linted when a directory is walked (Ruff >= 0.6: notebooks included).
DEFAULT_INCLUDE: tuple[str, ...] = ("*.py", "*.pyi", "*.ipynb")


@dataclass(frozen=True)
class Settings:
    """Everything the engine needs to lint a file. Frozen, hashable, picklable."""

    select: Optional[tuple[str, ...]] = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_ignore: tuple[str, ...] = ()
    # (glob, codes) pairs; a glob starting with "!" applies to files that do NOT match.
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    # Globs of the files linted when a directory is walked (Ruff's `include`, notebooks included).
    include: tuple[str, ...] = DEFAULT_INCLUDE
    extend_include: tuple[str, ...] = ()
    respect_gitignore: bool = True
    # Globs of function names whose bodies are hot paths (in addition to forward/__call__).
    hot_functions: tuple[str, ...] = ()
    # Extra receiver names treated as long-lived caches (in addition to cache/pool/store/registry).
    long_lived_names: tuple[str, ...] = ()
    # Names of tensors known to live on the CPU (host-sync rules never fire on them).
    cpu_names: tuple[str, ...] = ()
    # Context managers that mark deliberate host syncs (`with gpu_sync_allowed():`): the sync rules stay quiet
    # inside them. The defaults come first; the configured names add to them.
    sync_allowed_contexts: tuple[str, ...] = ()
    # code -> {option: value}, from [tool.viewlint.rules.<CODE>]
    rule_options: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    # Directory that relative globs (per-file-ignores, exclude) are matched from.
    project_root: str = "."
    # Where the settings came from (a pyproject.toml / viewlint.toml), for messages.
    source: Optional[str] = None
    ignore_noqa: bool = False
    prefilter: bool = True

    @functools.cached_property
    def enabled_codes(self) -> frozenset[str]:
        return resolve_selection(self.select, self.extend_select, self.ignore, self.extend_ignore)

    def options_for(self, code: str) -> dict[str, Any]:
        for rule_code, values in self.rule_options:
            if rule_code == code:
                return dict(values)
        return {}

    def codes_for(self, relative_path: str) -> frozenset[str]:
        """The enabled codes for one file, after per-file-ignores."""
        codes = set(self.enabled_codes)
        posix = PurePosixPath(relative_path).as_posix()
        name = PurePosixPath(relative_path).name
        for pattern, ignored in self.per_file_ignores:
            negated = pattern.startswith("!")
            glob = pattern[1:] if negated else pattern
            matched = fnmatch.fnmatchcase(posix, glob) or fnmatch.fnmatchcase(name, glob)
            if matched != negated:
                codes = {c for c in codes if not any(c.startswith(p.upper()) for p in ignored)}
        return frozenset(codes)

    def fingerprint(self) -> str:
        """A stable digest of everything that can change a file's findings (the cache key);
        computed once per settings object (every file of a project shares one)."""
        digest = self.__dict__.get("_fingerprint")
        if digest is None:
            data = asdict(self)
            data.pop("source", None)
            digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]
            object.__setattr__(self, "_fingerprint", digest)  # frozen: not a field, so not compared or hashed
        return digest
