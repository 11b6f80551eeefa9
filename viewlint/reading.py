"""Reading input bytes without ever hanging or exhausting memory.

Every file viewlint reads (sources, cache entries, stdin) goes through here: a named pipe
or a device is refused instead of read (opening a FIFO with no writer blocks forever,
`/dev/zero` never ends), and no read takes more than a fixed number of bytes.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Union

__all__ = ["FileTooLargeError", "NotRegularFileError", "describe_special", "read_capped", "read_regular_file"]


class NotRegularFileError(OSError):
    """The path is a named pipe, a device or a socket: reading it could block or never end."""

    def __init__(self, path: Union[str, Path], kind: str) -> None:
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", str(path))
        self.kind = kind


class FileTooLargeError(OSError):
    """The input holds more than the limit; ``size`` is its size when known (else None)."""

    def __init__(self, path: Union[str, Path], limit: int, size: Union[int, None] = None) -> None:
        super().__init__(errno.EFBIG, "file too large", str(path))
        self.limit, self.size = limit, size


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def describe_special(mode: int) -> str:
    """``not a regular file (a named pipe)``, for a file type that is never read."""
    return f"not a regular file ({_kind(mode)})"


# O_NONBLOCK: opening a FIFO without a writer (or a modem line) returns at once instead of
# blocking; the type is then checked on the open descriptor, so a swap after a stat cannot fool it.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) \
    | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def read_regular_file(path: Union[str, Path], limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    Raises NotRegularFileError for pipes, devices and sockets, FileTooLargeError above the
    limit (also for a file that grows while it is read), and OSError when it cannot be opened.
    """
    descriptor = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(descriptor)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(path, _kind(info.st_mode))
        if info.st_size > limit:
            raise FileTooLargeError(path, limit, info.st_size)
        with open(descriptor, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    finally:
        os.close(descriptor)
    if len(data) > limit:
        raise FileTooLargeError(path, limit)
    return data


def read_capped(stream: BinaryIO, limit: int) -> bytes:
    """Up to ``limit`` bytes of a stream (stdin); FileTooLargeError when there are more."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise FileTooLargeError("<stdin>", limit)
    return data
