"""Writing files safely: atomic replace, permissions kept, never over a file that changed since it was read."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Optional


class FileChangedError(Exception):
    pass


def write_atomically(path: Path, data: bytes, expected: Optional[bytes] = None) -> None:
    """Replace `path` with `data` through a temporary file and a rename.

    With `expected`, refuse (FileChangedError) when the file on disk no longer holds those bytes.
    """
    if expected is not None and path.read_bytes() != expected:
        raise FileChangedError(f"{path}: changed on disk since it was read; not overwritten")
    mode = path.stat().st_mode & 0o7777
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".viewlint")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
