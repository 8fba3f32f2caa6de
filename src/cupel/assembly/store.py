"""A versioned, embedded retrieval substrate on SQLite (CFS-021 §11 ``GraphStore``).

:class:`SqliteStore` keeps documents and their chunks (ids, paths, sequence numbers, byte offsets, text,
vectors) in one SQLite file (or ``":memory:"``), with an FTS5 index for lexical search and the vectors for
semantic search.

**Versions.** Every write (one :meth:`SqliteStore.write` block, committed as one transaction) creates a
new version with a new **state root**: a Merkle root over the sorted hashes of the chunks visible in that
version (BLAKE3, or BLAKE2b-256 without the optional ``blake3`` package; see
:mod:`cupel.assembly.hashing`). Committed rows are never deleted and their content never changes:
replacing or removing a document only records the version that removed it, so every earlier version stays
readable and :meth:`SqliteStore.snapshot` can pin any state root. A search pinned to a root reads only
that version's rows and statistics, so the same query on the same root gives the same results after any
later write.

**Concurrency and crashes.** File stores use SQLite's write-ahead log: any number of readers (threads or
processes) run alongside one writer, and a writer killed mid-write leaves only its uncommitted transaction
behind, which SQLite discards; every committed version stays readable. Each thread uses its own
connection. ``":memory:"`` stores live in one process (a shared-cache in-memory database).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime

from cupel.assembly._validate import require_str
from cupel.assembly.embedding import Vector, as_embedder, embed_texts, embedder_name
from cupel.assembly.hashing import HASH_ALGORITHM
from cupel.assembly.hybrid import HybridRetriever
from cupel.assembly.lexical import rank_lexical
from cupel.assembly.semantic import VECTOR_BACKENDS, MatrixCache, load_sqlite_vec, rank_semantic
from cupel.assembly.types import Chunk, Document
from cupel.assembly.versioning import LIVE, StoreVersion, UnknownStateRootError, merkle_root
from cupel.assembly.writer import StoreWriter
from cupel.errors import InvalidConfigurationError

__all__ = ["SCHEMA_VERSION", "SqliteStore", "StoreSnapshot"]

SCHEMA_VERSION = "1"

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS versions (
    version INTEGER PRIMARY KEY, state_root TEXT NOT NULL, created_at TEXT NOT NULL,
    chunk_count INTEGER NOT NULL, term_count INTEGER NOT NULL, document_count INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS versions_root ON versions (state_root);
CREATE TABLE IF NOT EXISTS documents (
    row INTEGER PRIMARY KEY, doc_id TEXT NOT NULL, path TEXT NOT NULL, content_hash TEXT NOT NULL,
    modified_at TEXT, added INTEGER NOT NULL, removed INTEGER NOT NULL DEFAULT {LIVE});
CREATE INDEX IF NOT EXISTS documents_id ON documents (doc_id, removed);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY, doc_row INTEGER NOT NULL REFERENCES documents (row),
    chunk_id TEXT NOT NULL, sequence INTEGER NOT NULL, byte_offset INTEGER NOT NULL, text TEXT NOT NULL,
    hash BLOB NOT NULL, term_count INTEGER NOT NULL, vector BLOB NOT NULL, has_vector INTEGER NOT NULL,
    added INTEGER NOT NULL, removed INTEGER NOT NULL DEFAULT {LIVE});
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc_row);
CREATE INDEX IF NOT EXISTS chunks_removed ON chunks (removed);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5 (terms, content='', tokenize='ascii');
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab (chunks_fts, 'instance');
"""


class SqliteStore:
    """The embedded substrate: ``SqliteStore("kb.db")`` or ``SqliteStore()`` for ``":memory:"``.

    ``embedder`` turns texts into vectors (default :class:`~cupel.assembly.embedding.HashingEmbedder`); the
    store records its name and dimension and refuses another one later, since vectors from different
    embedders are not comparable. ``vector_backend`` is ``"numpy"`` or ``"sqlite-vec"`` (see
    :mod:`cupel.assembly.semantic`). Use as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        embedder: object = None,
        vector_backend: str = "numpy",
    ) -> None:
        path = os.fspath(path)
        if vector_backend not in VECTOR_BACKENDS:
            raise InvalidConfigurationError(
                f"SqliteStore.vector_backend must be one of {', '.join(VECTOR_BACKENDS)}, "
                f"got {vector_backend!r}"
            )
        self.path = path
        self.vector_backend = vector_backend
        self.embedder: Callable[[list[str]], Sequence[Vector]] = as_embedder(embedder)
        self._memory = path == ":memory:"
        self._target = f"file:cupel-{uuid.uuid4().hex}?mode=memory&cache=shared" if self._memory else path
        self._local = threading.local()
        # Per-thread connections, by thread; those of finished threads are closed as new ones open.
        self._connections: dict[threading.Thread, sqlite3.Connection] = {}
        self._keeper: sqlite3.Connection | None = None  # keeps a shared in-memory database alive
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._matrices = MatrixCache()
        self._closed = False
        try:
            connection = self._connection()
            with self._transaction(connection):
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        connection.execute(statement)
                self._init_meta(connection)
        except sqlite3.DatabaseError as error:
            self.close()
            raise InvalidConfigurationError(f"cannot open store {path!r}: {error}") from None
        except BaseException:
            self.close()
            raise

    # -- connections ---------------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise InvalidConfigurationError(f"SqliteStore {self.path!r} is closed")
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is not None:
            return connection
        try:
            connection = sqlite3.connect(
                self._target, uri=self._memory, timeout=30.0, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as error:
            raise InvalidConfigurationError(f"cannot open store {self.path!r}: {error}") from None
        if not self._memory:
            connection.execute("PRAGMA journal_mode=WAL")
            # FULL: a committed version survives power loss, not just a killed process.
            connection.execute("PRAGMA synchronous=FULL")
        if self.vector_backend == "sqlite-vec":
            try:
                load_sqlite_vec(connection)
            except BaseException:
                connection.close()
                raise
        self._local.connection = connection
        with self._lock:
            for thread in [thread for thread in self._connections if not thread.is_alive()]:
                finished = self._connections.pop(thread)
                if finished is not self._keeper:
                    finished.close()
            self._connections[threading.current_thread()] = connection
            if self._keeper is None:
                self._keeper = connection
        return connection

    @contextmanager
    def _transaction(self, connection: sqlite3.Connection) -> Iterator[None]:
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    def close(self) -> None:
        """Close every connection this store opened; further use raises an error."""
        with self._lock:
            self._closed = True
            for connection in {*self._connections.values(), self._keeper}:
                if connection is not None:
                    connection.close()
            self._connections.clear()
            self._keeper = None

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _init_meta(self, connection: sqlite3.Connection) -> None:
        meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
        name = embedder_name(self.embedder)
        if not meta:
            probe = embed_texts(self.embedder, ["cupel"], None)[0]
            connection.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [
                    ("schema", SCHEMA_VERSION),
                    ("hash_algorithm", HASH_ALGORITHM),
                    ("embedder", name),
                    ("dimension", str(len(probe))),
                ],
            )
            connection.execute(
                "INSERT INTO versions VALUES (0, ?, ?, 0, 0, 0)", (merkle_root([]), _utc_now())
            )
            meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("schema") != SCHEMA_VERSION:
            raise InvalidConfigurationError(
                f"store {self.path!r} has schema {meta.get('schema')!r}, this cupel reads {SCHEMA_VERSION!r}"
            )
        if meta["embedder"] != name:
            raise InvalidConfigurationError(
                f"store {self.path!r} was built with embedder {meta['embedder']!r}, got {name!r}; "
                "vectors from different embedders are not comparable"
            )
        self.dimension = int(meta["dimension"])
        self.hash_algorithm = meta["hash_algorithm"]

    # -- versions ------------------------------------------------------------------------------------

    def versions(self) -> tuple[StoreVersion, ...]:
        """Every committed version, oldest first (version 0 is the empty store)."""
        rows = self._connection().execute("SELECT * FROM versions ORDER BY version").fetchall()
        return tuple(StoreVersion(*row) for row in rows)

    def latest(self) -> StoreVersion:
        """The newest committed version."""
        row = self._connection().execute("SELECT * FROM versions ORDER BY version DESC LIMIT 1").fetchone()
        return StoreVersion(*row)

    def get_latest_state_root(self) -> str:
        """The state root of the newest version (CFS-021 §11)."""
        return self.latest().state_root

    def resolve(self, state_root: str | None) -> StoreVersion:
        """The version with ``state_root`` (full ``"alg:hex"``, bare hex, or a unique hex prefix of 8+)."""
        if state_root is None:
            return self.latest()
        require_str("SqliteStore", "state_root", state_root)
        digits = state_root.split(":", 1)[1] if ":" in state_root else state_root
        if ":" in state_root and not state_root.startswith(self.hash_algorithm + ":"):
            raise UnknownStateRootError(
                f"state root {state_root!r} is not a {self.hash_algorithm} root, which this store uses"
            )
        if len(digits) < 8 or any(char not in "0123456789abcdef" for char in digits.lower()):
            raise UnknownStateRootError(
                f"state root must be hex digits (at least 8, optionally prefixed with "
                f"'{self.hash_algorithm}:'), got {state_root!r}"
            )
        pattern = f"{self.hash_algorithm}:{digits.lower()}%"
        rows = (
            self._connection()
            .execute("SELECT * FROM versions WHERE state_root LIKE ? ORDER BY version", (pattern,))
            .fetchall()
        )
        roots = {row[1] for row in rows}
        if not rows:
            raise UnknownStateRootError(f"no version of {self.path!r} has state root {state_root!r}")
        if len(roots) > 1:
            raise UnknownStateRootError(f"state root prefix {state_root!r} is ambiguous ({len(roots)} roots)")
        # Equal roots mean equal content; the first version with it is as good as any.
        return StoreVersion(*rows[0])

    def snapshot(self, state_root: str | None = None) -> StoreSnapshot:
        """A read view pinned to ``state_root`` (default: the latest version)."""
        return StoreSnapshot(self, self.resolve(state_root))

    def pin(self) -> HybridRetriever:
        """A retriever pinned to the latest version: ``hybrid_search`` with default parameters."""
        return HybridRetriever(self.snapshot())

    def verify(self, state_root: str | None = None) -> bool:
        """Recompute a version's Merkle root from its rows and compare it with the recorded one."""
        version = self.resolve(state_root)
        return self._root_of(self._connection(), version.version) == version.state_root

    # -- documents -----------------------------------------------------------------------------------

    def documents(self, state_root: str | None = None) -> dict[str, tuple[str, str]]:
        """``{document id: (path, content hash)}`` of a version (default: the latest)."""
        version = self.resolve(state_root).version
        rows = (
            self._connection()
            .execute(
                "SELECT doc_id, path, content_hash FROM documents WHERE added <= ? AND removed > ? "
                "ORDER BY doc_id",
                (version, version),
            )
            .fetchall()
        )
        return {doc_id: (path, content) for doc_id, path, content in rows}

    @contextmanager
    def write(self) -> Iterator[StoreWriter]:
        """One atomic write: ``with store.write() as w: w.put(...); w.remove(...)``.

        On success a new version is committed (unless nothing changed); on an exception nothing is.
        """
        with self._write_lock:
            connection = self._connection()
            with self._transaction(connection):
                latest = self.latest()
                if self.hash_algorithm != HASH_ALGORITHM:
                    raise InvalidConfigurationError(
                        f"store {self.path!r} hashes with {self.hash_algorithm} but this installation uses "
                        f"{HASH_ALGORITHM}; install or remove the blake3 package to match"
                    )
                writer = StoreWriter(connection, latest.version + 1, self.embedder, self.dimension)
                yield writer
                writer.flush()
                if writer.changed:
                    self._commit_version(connection, latest.version + 1)

    def _commit_version(self, connection: sqlite3.Connection, version: int) -> None:
        chunk_count, term_count = connection.execute(
            "SELECT count(*), coalesce(sum(term_count), 0) FROM chunks WHERE added <= ? AND removed > ?",
            (version, version),
        ).fetchone()
        (document_count,) = connection.execute(
            "SELECT count(*) FROM documents WHERE added <= ? AND removed > ?", (version, version)
        ).fetchone()
        connection.execute(
            "INSERT INTO versions VALUES (?, ?, ?, ?, ?, ?)",
            (
                version,
                self._root_of(connection, version),
                _utc_now(),
                chunk_count,
                term_count,
                document_count,
            ),
        )

    @staticmethod
    def _root_of(connection: sqlite3.Connection, version: int) -> str:
        rows = connection.execute(
            "SELECT hash FROM chunks WHERE added <= ? AND removed > ?", (version, version)
        ).fetchall()
        return merkle_root(row[0] for row in rows)

    # -- reading -------------------------------------------------------------------------------------

    def results(self, scored: Sequence[tuple[int, float]]) -> list[tuple[Chunk, Document, float]]:
        """``(chunk, document, score)`` for ``(rowid, score)`` pairs, in the same order."""
        if not scored:
            return []
        connection = self._connection()
        rowids = [rowid for rowid, _ in scored]
        found: dict[int, tuple[Chunk, Document]] = {}
        for start in range(0, len(rowids), 500):
            batch = rowids[start : start + 500]
            rows = connection.execute(
                "SELECT c.rowid, c.chunk_id, c.text, c.sequence, c.byte_offset, d.doc_id, d.path, "
                "d.modified_at FROM chunks AS c JOIN documents AS d ON d.row = c.doc_row "
                f"WHERE c.rowid IN ({','.join('?' * len(batch))})",
                batch,
            ).fetchall()
            for rowid, chunk_id, text, sequence, offset, doc_id, path, modified in rows:
                moment = datetime.fromisoformat(modified) if modified is not None else None
                found[rowid] = (Chunk(chunk_id, text, sequence, offset), Document(doc_id, path, moment))
        return [(*found[rowid], score) for rowid, score in scored]

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r}, vector_backend={self.vector_backend!r})"


class StoreSnapshot:
    """A store pinned to one version; what :func:`~cupel.assembly.hybrid.hybrid_search` searches."""

    __slots__ = ("store", "version")

    def __init__(self, store: SqliteStore, version: StoreVersion) -> None:
        self.store = store
        self.version = version

    def state_root(self) -> str:
        return self.version.state_root

    def snapshot(self, state_root: str | None = None) -> StoreSnapshot:
        """This snapshot, or another version of its store when ``state_root`` names one."""
        return self if state_root is None else self.store.snapshot(state_root)

    def pin(self) -> HybridRetriever:
        return HybridRetriever(self)

    def lexical(self, query: str, k: int) -> list[tuple[Chunk, Document, float]]:
        """The ``k`` best chunks by BM25 (ties at the k-th score included), best first."""
        version = self.version
        scored = rank_lexical(
            self.store._connection(), version.version, version.chunk_count, version.term_count, query, k
        )
        return self.store.results(scored)

    def semantic(self, query: str, k: int) -> list[tuple[Chunk, Document, float]]:
        """The ``k`` most similar chunks by cosine (ties at the k-th score included), best first."""
        if self.version.chunk_count == 0 or k <= 0:
            return []
        (vector,) = embed_texts(self.store.embedder, [query], self.store.dimension)
        scored = rank_semantic(
            self.store._connection(),
            self.version.version,
            vector,
            k,
            self.store.vector_backend,
            self.store._matrices,
        )
        return self.store.results(scored)

    def __repr__(self) -> str:
        version = self.version
        return f"StoreSnapshot({self.store!r}, version={version.version}, state_root={version.state_root!r})"


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")
