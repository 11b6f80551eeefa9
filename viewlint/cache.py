"""A content-keyed result cache: `.viewlint_cache/`, safe against corruption and concurrent writers.

The key is the file's bytes, the resolved settings and viewlint's own code, so a cache
entry can never be stale. Writes go to a temporary file and are renamed into place;
an entry that fails to load is treated as a miss.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Optional

import viewlint
from viewlint.diagnostics import Diagnostic
from viewlint.reading import read_regular_file

# An entry holds one file's diagnostics; anything bigger is not ours.
MAX_ENTRY_BYTES = 64 * 1024 * 1024

CACHEDIR_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by viewlint.\n"


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """viewlint's version plus the size and mtime of its own modules and rules (catches development edits)."""
    import viewlint.rules as rules_package

    digest = hashlib.sha256(viewlint.__version__.encode())
    for directory in [Path(viewlint.__file__).parent, *map(Path, rules_package.__path__)]:
        for path in sorted(directory.rglob("*.py")):
            stat = path.stat()
            digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


class Cache:
    """Stores each file's diagnostics under a key derived from everything that can change them."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._ready = False

    def _prepare(self) -> None:
        if self._ready:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        tag = self.directory / "CACHEDIR.TAG"
        if not tag.exists():
            tag.write_text(CACHEDIR_TAG)
        ignore = self.directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Automatically created by viewlint.\n*\n")
        self._ready = True

    def problem(self) -> Optional[str]:
        """Why this folder cannot hold the cache (``cache/: Permission denied``), or None when it can."""
        try:
            self._prepare()
            os.listdir(self.directory)
        except OSError as error:
            return f"{error.filename or self.directory}: {error.strerror or error}"
        return None

    @staticmethod
    def key(data: bytes, settings_fingerprint: str, display: str) -> str:
        digest = hashlib.sha256(data)
        digest.update(settings_fingerprint.encode())
        digest.update(code_fingerprint().encode())
        digest.update(display.encode())  # diagnostics carry the displayed path
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / "entries" / key[:2] / f"{key}.json"

    def get(self, key: str) -> Optional[list[Diagnostic]]:
        """The stored diagnostics, or None on a miss, an unreadable entry, or an entry that used facts
        from another module of the project (an imported class) whose content has changed since."""
        try:
            # Never open a named pipe put where an entry should be (it would block), nor read without end.
            data = json.loads(read_regular_file(self._path(key), MAX_ENTRY_BYTES).decode("utf-8"))
            dependencies = data.get("dependencies") or {}
            if dependencies:
                from viewlint.analysis.project import dependencies_unchanged

                if not dependencies_unchanged({str(p): str(d) for p, d in dependencies.items()}):
                    return None
            return [Diagnostic.from_cache(item) for item in data["diagnostics"]]
        except Exception:  # noqa: BLE001 - any entry that does not read back (too deeply nested JSON
            return None    # raises RecursionError) is a miss, and the run that misses writes it anew

    def put(self, key: str, diagnostics: list[Diagnostic], dependencies: Optional[dict[str, str]] = None) -> None:
        """Store atomically; a failure to write is never fatal. `dependencies`: the other modules (path ->
        content digest) whose facts the diagnostics rely on."""
        try:
            self._prepare()
            path = self._path(key)
            path.parent.mkdir(parents=True, exist_ok=True)
            payload = json.dumps({"diagnostics": [d.to_cache() for d in diagnostics], "dependencies": dependencies or {}})
            fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(payload)
                os.replace(temporary, path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass
