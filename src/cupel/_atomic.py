"""Atomic file writes: every file cupel writes goes through :func:`write_atomic` or :func:`atomic_path`.

The data is written to a temporary file in the target's directory, flushed and ``fsync``-ed, then
renamed over the target with :func:`os.replace`. A failure at any point (an unencodable character, a
full disk, an interrupt) leaves the previous file untouched and removes the temporary file.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

TYPE_CHECKING = False  # not typing's: it is not loaded on the way to writing a file
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["atomic_path", "write_atomic"]


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, encoding: str = "utf-8") -> None:
    """Replace ``path`` with ``data`` (text is encoded strictly with ``encoding``) in one step.

    Encoding happens before anything touches the disk, so text that cannot be encoded (a lone surrogate)
    raises ``UnicodeEncodeError`` with the old file intact. Permissions of an existing file are kept.
    """
    payload = data.encode(encoding) if isinstance(data, str) else bytes(data)
    with atomic_path(path) as temporary, open(temporary, "wb") as handle:
        handle.write(payload)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary path beside ``path``; on a clean exit it replaces ``path`` in one step.

    For writers that stream (JSONL, Parquet) rather than hold the whole file in memory. The caller
    writes and closes the temporary file inside the block; it is then ``fsync``-ed, given the mode of
    the file it replaces and renamed over it. Any exception removes it and leaves ``path`` untouched.
    """
    from pathlib import Path  # with tempfile below: only when a file is written

    target = Path(os.path.realpath(path))  # like open(): write through a symbolic link, not over it
    directory = target.parent
    import tempfile  # with shutil, random and the compressors: needed only when a file is written

    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    os.close(descriptor)
    try:
        yield temporary
        _sync_file(temporary)
        _copy_mode(target, temporary)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_directory(directory)


def _sync_file(temporary: str) -> None:
    handle = os.open(temporary, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


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
