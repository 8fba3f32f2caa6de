"""Atomic file writes: every file cupel writes goes through :func:`write_atomic`.

The data is written to a temporary file in the target's directory, flushed and ``fsync``-ed, then
renamed over the target with :func:`os.replace`. A failure at any point (an unencodable character, a
full disk, an interrupt) leaves the previous file untouched and removes the temporary file.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, encoding: str = "utf-8") -> None:
    """Replace ``path`` with ``data`` (text is encoded strictly with ``encoding``) in one step.

    Encoding happens before anything touches the disk, so text that cannot be encoded (a lone surrogate)
    raises ``UnicodeEncodeError`` with the old file intact. Permissions of an existing file are kept.
    """
    payload = data.encode(encoding) if isinstance(data, str) else bytes(data)
    target = Path(os.path.realpath(path))  # like open(): write through a symbolic link, not over it
    directory = target.parent
    import tempfile  # with shutil, random and the compressors: needed only when a file is written

    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        _copy_mode(target, temporary)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_directory(directory)


def _copy_mode(target: Path, temporary: str) -> None:
    # mkstemp creates 0600 files; keep an existing file's mode, else use the umask's default like open().
    try:
        mode = target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(temporary, mode)


def _sync_directory(directory: Path) -> None:
    # The rename is durable only once the directory entry is on disk; not every platform allows this.
    with contextlib.suppress(OSError):
        handle = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)
