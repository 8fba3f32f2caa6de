"""Indexing files into a :class:`~cupel.assembly.store.SqliteStore` (what ``cupel index`` runs).

Directories are walked recursively, in sorted order, for files whose suffix
:func:`~cupel.assembly.chunking.kind_of` knows (hidden entries, ``__pycache__`` and ``node_modules`` are
skipped silently); files named explicitly are indexed whatever their suffix (as text). A document's id and
path are its path relative to the working directory (POSIX separators) when it lies inside it, else its
absolute path.

**Files as a disk has them.** Only regular files are read: FIFOs, sockets and devices are skipped (opened
without blocking and checked on the open descriptor, so a file swapped for a FIFO cannot hang the run).
Reads are bounded (``max_file_bytes``, 16 MiB by default). A symbolic link found in a directory is
followed only when its target stays inside that directory, unless ``follow_symlinks`` is set (symbolic
links to directories are walked only then). Files that are not UTF-8 are skipped. Every skipped file is
listed in the :class:`IndexReport` with the reason; a file named explicitly that cannot be indexed is an
error instead.

Re-indexing is incremental: a file whose content hash (over its bytes and the chunking options) equals
the indexed copy's is left alone, and an indexed document that is gone from a given directory (or was
the given file) is removed. The whole run is one write: one new version and state root, or none when
nothing changed.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from cupel.assembly.chunking import ChunkingOptions, chunk_document, kind_of
from cupel.assembly.hashing import content_hash
from cupel.assembly.store import SqliteStore
from cupel.assembly.types import Document
from cupel.assembly.versioning import StoreVersion
from cupel.errors import InvalidConfigurationError

__all__ = ["DEFAULT_MAX_FILE_BYTES", "IndexReport", "discover_files", "index_paths"]

DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024
_SKIPPED_DIRECTORIES = frozenset({"__pycache__", "node_modules"})


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What one indexing run did, the version it committed (or the unchanged latest), and what it skipped.

    ``skipped_files`` lists ``(path, reason)`` pairs, sorted by path.
    """

    new: int
    changed: int
    unchanged: int
    removed: int
    skipped_files: tuple[tuple[str, str], ...]
    chunks_written: int
    version: StoreVersion

    @property
    def files(self) -> int:
        """Files indexed (new, changed or unchanged)."""
        return self.new + self.changed + self.unchanged

    @property
    def skipped(self) -> int:
        """Files skipped."""
        return len(self.skipped_files)


def _display(path: Path) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return absolute.as_posix()


def _usable_name(name: str) -> bool:
    # Undecodable file names come back with lone surrogates; no document path may contain them.
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\n" not in name and "\r" not in name


Found = tuple[Path, str, bool]


def _inside(target: str, root: str) -> bool:
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def discover_files(
    paths: Iterable[str | os.PathLike[str]], *, follow_symlinks: bool = False
) -> tuple[list[Found], list[str], list[tuple[str, str]]]:
    """``([(file, kind, named explicitly)], [scopes], [(skipped path, reason)])`` for ``paths``.

    Files are sorted by id. A scope is a given file's id, or a given directory's id followed by ``/``.
    """
    found: dict[str, Found] = {}
    scopes: list[str] = []
    skipped: list[tuple[str, str]] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            scopes.append(_display(path).rstrip("/") + "/")
            root = os.path.realpath(path)
            walked: set[str] = {root}
            for directory, directories, files in os.walk(path, followlinks=follow_symlinks):
                kept = []
                for name in sorted(directories):
                    if name.startswith(".") or name in _SKIPPED_DIRECTORIES:
                        continue
                    entry = os.path.join(directory, name)
                    if os.path.islink(entry):
                        target = os.path.realpath(entry)
                        if not follow_symlinks or target in walked:
                            reason = "symbolic link to a directory" + (
                                "" if not follow_symlinks else " already walked"
                            )
                            skipped.append((_display(Path(entry)), reason))
                            continue
                        walked.add(target)
                    kept.append(name)
                directories[:] = kept
                for name in sorted(files):
                    kind = kind_of(name)
                    if name.startswith(".") or kind is None:
                        continue
                    file = Path(directory) / name
                    if not _usable_name(str(file)):
                        skipped.append((repr(str(file))[1:-1], "file name is not UTF-8"))
                        continue
                    if not follow_symlinks and os.path.islink(file):
                        target = os.path.realpath(file)
                        if not _inside(target, root):
                            skipped.append(
                                (_display(file), f"symbolic link leaving the directory (to {target})")
                            )
                            continue
                    found.setdefault(_display(file), (file, kind, False))
        elif path.exists() or path.is_symlink():
            found[_display(path)] = (path, kind_of(path) or "text", True)
            scopes.append(_display(path))
        else:
            raise InvalidConfigurationError(f"{os.fspath(given)}: no such file or directory")
    return [found[key] for key in sorted(found)], scopes, sorted(skipped)


def read_regular_file(path: Path, max_bytes: int) -> bytes | str:
    """The bytes of ``path``, or why it cannot be indexed: not a regular file, or larger than ``max_bytes``.

    Opened without blocking and checked on the descriptor, so a FIFO or device never blocks the read.
    Raises ``OSError`` when the file cannot be opened or read.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as error:
        if error.errno == errno.ENXIO:  # a socket or a FIFO without a writer
            return "not a regular file"
        raise
    with os.fdopen(descriptor, "rb") as handle:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            kinds = {stat.S_ISFIFO: "a FIFO", stat.S_ISCHR: "a device", stat.S_ISBLK: "a device"}
            kind = next((name for test, name in kinds.items() if test(mode)), "not a regular file")
            return f"not a regular file ({kind})" if kind != "not a regular file" else kind
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        return f"larger than {max_bytes} bytes"
    return data


def _in_scope(doc_id: str, scopes: list[str]) -> bool:
    return any(doc_id == scope or (scope.endswith("/") and doc_id.startswith(scope)) for scope in scopes)


def index_paths(
    store: SqliteStore,
    paths: Iterable[str | os.PathLike[str]],
    options: ChunkingOptions | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    follow_symlinks: bool = False,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> IndexReport:
    """Index the files under ``paths`` into ``store`` in one write (see the module docstring).

    ``progress(done, total)`` is called after each file. Raises
    :class:`~cupel.errors.InvalidConfigurationError` for a missing path or an explicitly named file that
    cannot be indexed (not UTF-8 text, not a regular file, too large), and ``OSError`` when a file cannot
    be read.
    """
    options = options or ChunkingOptions()
    files, scopes, skipped = discover_files(paths, follow_symlinks=follow_symlinks)
    counts = {"new": 0, "changed": 0, "unchanged": 0, "removed": 0}
    written = 0
    with store.write() as writer:
        before = writer.documents()
        seen: set[str] = set()
        for done, (path, kind, named) in enumerate(files, start=1):
            doc_id = _display(path)
            data = read_regular_file(path, max_file_bytes)
            if isinstance(data, str):
                if named:
                    raise InvalidConfigurationError(f"{doc_id}: cannot index: {data}")
                skipped.append((doc_id, data))
                continue
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError as error:
                if named:
                    raise InvalidConfigurationError(
                        f"{doc_id}: not UTF-8 text (byte {error.start})"
                    ) from None
                skipped.append((doc_id, f"not UTF-8 text (byte {error.start})"))
                continue
            seen.add(doc_id)
            digest = content_hash(f"{kind}/{options.max_chars}/{options.overlap_chars}\n".encode() + data)
            chunks = chunk_document(doc_id, text, kind, options)
            if writer.put(Document(doc_id, doc_id), chunks, content_hash=digest):
                counts["changed" if doc_id in before else "new"] += 1
                written += len(chunks)
            else:
                counts["unchanged"] += 1
            if progress is not None:
                progress(done, len(files))
        for doc_id in before:
            if doc_id not in seen and _in_scope(doc_id, scopes) and writer.remove(doc_id):
                counts["removed"] += 1
    version = writer.committed or writer.base
    return IndexReport(
        skipped_files=tuple(sorted(skipped)), chunks_written=written, version=version, **counts
    )
