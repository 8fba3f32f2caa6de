"""Indexing files into a :class:`~cupel.assembly.store.SqliteStore` (what ``cupel index`` runs).

Directories are walked recursively, in sorted order, for files whose suffix
:func:`~cupel.assembly.chunking.kind_of` knows (hidden entries, ``__pycache__`` and ``node_modules`` are
skipped, and so are files that are not UTF-8); files named explicitly are indexed whatever their suffix
(as text) and must be UTF-8. A document's id and path are its path relative to the working directory
(POSIX separators) when it lies inside it, else its absolute path.

Re-indexing is incremental: a file whose content hash (over its bytes and the chunking options) equals
the indexed copy's is left alone, and an indexed document that is gone from a given directory (or was
the given file) is removed. The whole run is one write: one new version and state root, or none when
nothing changed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from cupel.assembly.chunking import ChunkingOptions, chunk_document, kind_of
from cupel.assembly.hashing import content_hash
from cupel.assembly.store import SqliteStore
from cupel.assembly.types import Document
from cupel.assembly.versioning import StoreVersion
from cupel.errors import InvalidConfigurationError

__all__ = ["IndexReport", "discover_files", "index_paths"]

_SKIPPED_DIRECTORIES = frozenset({"__pycache__", "node_modules"})


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What one indexing run did, and the version it left the store at."""

    new: int
    changed: int
    unchanged: int
    removed: int
    skipped: int
    chunks_written: int
    version: StoreVersion

    @property
    def files(self) -> int:
        """Files indexed (new, changed or unchanged)."""
        return self.new + self.changed + self.unchanged


def _display(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def _usable_name(name: str) -> bool:
    # Undecodable file names come back with lone surrogates; no document path may contain them.
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\n" not in name and "\r" not in name


Found = tuple[Path, str, bool]


def discover_files(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Found], list[str], int]:
    """``([(file, kind, named explicitly)], [scopes], skipped)`` for ``paths``, files sorted by id.

    A scope is a given file's id, or a given directory's id followed by ``/``.
    """
    found: dict[str, Found] = {}
    scopes: list[str] = []
    skipped = 0
    for given in paths:
        path = Path(given)
        if path.is_file():
            found[_display(path)] = (path, kind_of(path) or "text", True)
            scopes.append(_display(path))
        elif path.is_dir():
            scopes.append(_display(path).rstrip("/") + "/")
            for root, directories, files in os.walk(path):
                directories[:] = sorted(
                    name
                    for name in directories
                    if not name.startswith(".") and name not in _SKIPPED_DIRECTORIES
                )
                for name in sorted(files):
                    kind = kind_of(name)
                    if name.startswith(".") or kind is None:
                        continue
                    if not _usable_name(os.path.join(root, name)):
                        skipped += 1
                        continue
                    file = Path(root) / name
                    found.setdefault(_display(file), (file, kind, False))
        else:
            raise InvalidConfigurationError(f"{os.fspath(given)}: no such file or directory")
    return [found[key] for key in sorted(found)], scopes, skipped


def _in_scope(doc_id: str, scopes: list[str]) -> bool:
    return any(doc_id == scope or (scope.endswith("/") and doc_id.startswith(scope)) for scope in scopes)


def index_paths(
    store: SqliteStore,
    paths: Iterable[str | os.PathLike[str]],
    options: ChunkingOptions | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> IndexReport:
    """Index the files under ``paths`` into ``store`` in one write (see the module docstring).

    ``progress(done, total)`` is called after each file. Raises
    :class:`~cupel.errors.InvalidConfigurationError` for a missing path or an explicitly named file that
    is not UTF-8 text, and ``OSError`` when a file cannot be read.
    """
    options = options or ChunkingOptions()
    files, scopes, skipped = discover_files(paths)
    counts = {"new": 0, "changed": 0, "unchanged": 0, "removed": 0}
    written = 0
    before = store.documents()
    with store.write() as writer:
        seen: set[str] = set()
        for done, (path, kind, named) in enumerate(files, start=1):
            doc_id = _display(path)
            seen.add(doc_id)
            data = path.read_bytes()
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError as error:
                if named:
                    raise InvalidConfigurationError(
                        f"{doc_id}: not UTF-8 text (byte {error.start})"
                    ) from None
                skipped += 1
                continue
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
    return IndexReport(skipped=skipped, chunks_written=written, version=store.latest(), **counts)
