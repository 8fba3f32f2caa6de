"""A versioned, embedded retrieval substrate on SQLite (CFS-021 §11 ``GraphStore``).

:class:`SqliteStore` keeps documents and their chunks (ids, paths, sequence numbers, byte offsets, text,
and vectors when an embedder is configured) in one SQLite file (or ``":memory:"``), with an FTS5 index for
lexical search.

**Versions.** Every write (one :meth:`SqliteStore.write` block, committed as one transaction) creates a
new version with a new **state root**: a Merkle root over the sorted hashes of the chunks visible in that
version (BLAKE3, or BLAKE2b-256 without the optional ``blake3`` package; see
:mod:`cupel.assembly.hashing`). Committed rows are never deleted and their content never changes:
replacing or removing a document only records the version that removed it, so every earlier version stays
readable and :meth:`SqliteStore.snapshot` can pin any state root. A search pinned to a root gives the same
results after any later write (see :mod:`cupel.assembly.lexical` for how).

**Readers and writers.** File stores use SQLite's write-ahead log. ``SqliteStore(path, read_only=True)``
opens the file read-only (SQLite ``mode=ro``): it never takes the write lock, never waits for a writer,
never changes the file's bytes, and refuses a file that is not a cupel store (empty, another
application's database, a store format it does not read). A reader pins the latest committed version when
it takes a snapshot, so a reader started during a write answers from the version committed before it.
Writers are serialised (``BEGIN IMMEDIATE``, waiting up to five minutes for another writer), and each
knows the version it committed (:attr:`StoreWriter.committed`). A writer killed mid-write leaves only its
uncommitted transaction, which SQLite discards. Damage (a corrupt page, a truncated file) raises
:class:`StoreError` naming the file and the way out; :meth:`SqliteStore.check` lists what is wrong.
``":memory:"`` stores live in one process (a shared-cache in-memory database).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import urllib.parse
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime

from cupel.assembly._validate import require_str
from cupel.assembly.embedding import HashingEmbedder, Vector, as_embedder, embed_texts, embedder_name
from cupel.assembly.hashing import HASH_ALGORITHM
from cupel.assembly.hybrid import HybridRetriever
from cupel.assembly.lexical import STEMMED, UNSTEMMED
from cupel.assembly.semantic import VECTOR_BACKENDS, MatrixCache, load_sqlite_vec
from cupel.assembly.snapshot import StoreSnapshot
from cupel.assembly.store_format import (
    NO_EMBEDDER,
    SCHEMA_VERSION,
    StoreError,
    check_store_file,
    read_meta,
    schema,
    store_problem,
)
from cupel.assembly.versioning import StoreVersion, UnknownStateRootError, merkle_root
from cupel.assembly.writer import StoreWriter, version_root
from cupel.errors import InvalidConfigurationError

__all__ = ["NO_EMBEDDER", "SCHEMA_VERSION", "SqliteStore", "StoreError", "StoreSnapshot"]


_HASHING_PREFIX = "cupel-hashing-ngrams-v1/"
_WRITE_TIMEOUT = 300.0  # seconds a writer waits for another writer's transaction
_READ_TIMEOUT = 30.0  # only WAL recovery after a crash can make a reader wait


class SqliteStore:
    """The embedded substrate: ``SqliteStore("kb.db")`` or ``SqliteStore()`` for ``":memory:"``.

    ``read_only=True`` opens an existing store without ever writing or waiting (see the module docstring).
    ``embedder`` turns texts into vectors for semantic search. A new store has none by default (lexical
    search only; the built-in :class:`~cupel.assembly.embedding.HashingEmbedder` loses to lexical search
    on its own, see docs/rag.md); an existing one reopens with the embedder it was built with when that is
    none or the HashingEmbedder, and otherwise needs it passed again. The store refuses vectors from a
    different embedder. ``stemming`` (default ``True`` for a new store) picks FTS5's ``porter`` stemmer;
    an existing store keeps its own. ``vector_backend`` is ``"numpy"`` or ``"sqlite-vec"`` (see
    :mod:`cupel.assembly.semantic`). Use as a context manager or call :meth:`close`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        embedder: object = None,
        vector_backend: str = "numpy",
        read_only: bool = False,
        stemming: bool | None = None,
    ) -> None:
        path = os.fspath(path)
        if vector_backend not in VECTOR_BACKENDS:
            raise InvalidConfigurationError(
                f"SqliteStore.vector_backend must be one of {', '.join(VECTOR_BACKENDS)}, "
                f"got {vector_backend!r}"
            )
        if not isinstance(read_only, bool):
            raise InvalidConfigurationError(f"SqliteStore.read_only must be a bool, got {read_only!r}")
        if stemming is not None and not isinstance(stemming, bool):
            raise InvalidConfigurationError(f"SqliteStore.stemming must be a bool or None, got {stemming!r}")
        self.path = path
        self.vector_backend = vector_backend
        self.read_only = read_only
        self._memory = path == ":memory:"
        if self._memory and read_only:
            raise InvalidConfigurationError("SqliteStore(':memory:') cannot be read_only: it starts empty")
        if self._memory:
            self._target = f"file:cupel-{uuid.uuid4().hex}?mode=memory&cache=shared"
        else:
            mode = "ro" if read_only else "rwc"
            self._target = f"file:{urllib.parse.quote(os.path.abspath(path))}?mode={mode}"
        self._local = threading.local()
        # Per-thread connections, by thread; those of finished threads are closed as new ones open.
        self._connections: dict[threading.Thread, sqlite3.Connection] = {}
        self._keeper: sqlite3.Connection | None = None  # keeps a shared in-memory database alive
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self.matrices = MatrixCache()  # the vectors of recently searched versions
        self._closed = False
        self.embedder: Callable[[list[str]], Sequence[Vector]] | None = None
        self.dimension = 0
        try:
            if not self._memory:
                check_store_file(self.path, self.read_only)
            self._open(embedder, stemming)
        except sqlite3.Error as error:
            self.close()
            raise store_problem(self.path, error) from None
        except BaseException:
            self.close()
            raise

    # -- opening -------------------------------------------------------------------------------------

    def _open(self, embedder: object, stemming: bool | None) -> None:
        connection = self._connection()
        meta = read_meta(connection, self.path, self.read_only)
        if meta is None:  # a new store: only a writer gets here
            if not self._memory:
                connection.execute("PRAGMA journal_mode=WAL")  # persistent: set once, by the creator
            with self._transaction(connection):
                # Another writer may have created it meanwhile.
                meta = read_meta(connection, self.path, self.read_only)
                if meta is None:
                    meta = self._create(connection, embedder, stemming)
        self._adopt(meta, embedder, stemming)

    def _create(
        self, connection: sqlite3.Connection, embedder: object, stemming: bool | None
    ) -> dict[str, str]:
        tokenize = STEMMED if stemming is not False else UNSTEMMED
        for statement in schema(tokenize):
            connection.execute(statement)
        function = as_embedder(embedder) if embedder is not None else None
        dimension = len(embed_texts(function, ["cupel"], None)[0]) if function is not None else 0
        meta = {
            "schema": SCHEMA_VERSION,
            "hash_algorithm": HASH_ALGORITHM,
            "embedder": embedder_name(function) if function is not None else NO_EMBEDDER,
            "dimension": str(dimension),
            "tokenize": tokenize,
        }
        connection.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", sorted(meta.items()))
        connection.execute("INSERT INTO versions VALUES (0, ?, ?, 0, 0, 0)", (merkle_root([]), _utc_now()))
        return meta

    def _adopt(self, meta: dict[str, str], embedder: object, stemming: bool | None) -> None:
        self.hash_algorithm = meta["hash_algorithm"]
        self.tokenize = meta["tokenize"]
        self.stemming = self.tokenize == STEMMED
        if stemming is not None and stemming != self.stemming:
            raise StoreError(
                f"{self.path}: the store was built {'with' if self.stemming else 'without'} stemming; "
                "rebuild it to change that"
            )
        recorded = meta["embedder"]
        self.dimension = int(meta["dimension"])
        if embedder is None:
            if recorded == NO_EMBEDDER:
                return
            if recorded.startswith(_HASHING_PREFIX):
                self.embedder = HashingEmbedder(int(recorded[len(_HASHING_PREFIX) :]))
                return
            raise StoreError(
                f"{self.path}: the store was built with embedder {recorded!r}; pass the same embedder "
                "(SqliteStore(path, embedder=...)) to search it"
            )
        function = as_embedder(embedder)
        name = embedder_name(function)
        if recorded != name:
            built = "without vectors" if recorded == NO_EMBEDDER else f"with embedder {recorded!r}"
            raise StoreError(
                f"{self.path}: the store was built {built}, got {name!r}; vectors from different embedders "
                "are not comparable"
            )
        self.embedder = function

    # -- connections ---------------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise InvalidConfigurationError(f"SqliteStore {self.path!r} is closed")
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is not None:
            return connection
        try:
            connection = sqlite3.connect(
                self._target,
                uri=True,
                timeout=_READ_TIMEOUT if self.read_only else _WRITE_TIMEOUT,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: cannot open the store ({error})") from None
        if not self._memory and not self.read_only:
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

    @contextmanager
    def reading(self, *, transaction: bool = True) -> Iterator[sqlite3.Connection]:
        """This thread's connection, inside one read transaction unless ``transaction=False`` (then each
        statement sees its own committed state). SQLite errors become a :class:`StoreError` naming the
        file and the way out.
        """
        connection = self._connection()
        nested = connection.in_transaction or not transaction
        try:
            if not nested:
                connection.execute("BEGIN")
            try:
                yield connection
            finally:
                if not nested:
                    connection.execute("COMMIT")
        except sqlite3.Error as error:
            raise store_problem(self.path, error) from None

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

    # -- versions ------------------------------------------------------------------------------------

    def versions(self) -> tuple[StoreVersion, ...]:
        """Every committed version, oldest first (version 0 is the empty store)."""
        with self.reading() as connection:
            rows = connection.execute("SELECT * FROM versions ORDER BY version").fetchall()
        return tuple(StoreVersion(*row) for row in rows)

    def latest(self) -> StoreVersion:
        """The newest committed version."""
        with self.reading(transaction=False) as connection:
            return _latest(connection)

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
        with self.reading() as connection:
            rows = connection.execute(
                "SELECT * FROM versions WHERE state_root LIKE ? ORDER BY version", (pattern,)
            ).fetchall()
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
        with self.reading() as connection:
            return version_root(connection, version.version) == version.state_root

    def check(self) -> tuple[list[str], StoreVersion | None]:
        """``(problems, last good version)``: SQLite's integrity check, then every version's Merkle root
        recomputed from its rows. The last good version is the newest whose root verifies."""
        problems: list[str] = []
        good: StoreVersion | None = None
        connection = self._connection()
        try:
            rows = connection.execute("PRAGMA integrity_check(20)").fetchall()
            report = [line for row in rows for line in str(row[0]).splitlines() if line.strip()]
        except sqlite3.Error as error:
            report = [f"cannot run ({error})"]
        if report != ["ok"]:
            problems.extend(f"integrity check: {line}" for line in report if not line.startswith("***"))
        try:
            rows = connection.execute("SELECT * FROM versions ORDER BY version").fetchall()
        except sqlite3.Error as error:
            problems.append(f"the version table is unreadable ({error})")
            return problems, None
        for version in (StoreVersion(*row) for row in rows):
            try:
                root = version_root(connection, version.version)
            except sqlite3.Error as error:
                problems.append(f"version {version.version}: unreadable ({error})")
                continue
            if root != version.state_root:
                problems.append(
                    f"version {version.version}: recorded state root {version.state_root}, "
                    f"its rows give {root}"
                )
            else:
                good = version
        return problems, good

    # -- documents -----------------------------------------------------------------------------------

    def documents(self, state_root: str | None = None) -> dict[str, tuple[str, str]]:
        """``{document id: (path, content hash)}`` of a version (default: the latest)."""
        version = self.resolve(state_root).version
        with self.reading() as connection:
            return _documents(connection, version)

    @contextmanager
    def write(self) -> Iterator[StoreWriter]:
        """One atomic write: ``with store.write() as w: w.put(...); w.remove(...)``.

        On success a new version is committed (unless nothing changed) and ``w.committed`` is it; on an
        exception nothing is. Writers are serialised, across threads and processes.
        """
        if self.read_only:
            raise StoreError(f"{self.path}: opened read_only, cannot write")
        with self._write_lock:
            connection = self._connection()
            try:
                with self._transaction(connection):
                    latest = _latest(connection)
                    if self.hash_algorithm != HASH_ALGORITHM:
                        raise InvalidConfigurationError(
                            f"store {self.path!r} hashes with {self.hash_algorithm} but this installation "
                            f"uses {HASH_ALGORITHM}; install or remove the blake3 package to match"
                        )
                    writer = StoreWriter(connection, latest, self.embedder, self.dimension)
                    yield writer
                    writer.commit(_utc_now())
            except sqlite3.Error as error:
                raise store_problem(self.path, error) from None

    # -- reading -------------------------------------------------------------------------------------

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r}, vector_backend={self.vector_backend!r})"


def _latest(connection: sqlite3.Connection) -> StoreVersion:
    return StoreVersion(
        *connection.execute("SELECT * FROM versions ORDER BY version DESC LIMIT 1").fetchone()
    )


def _documents(connection: sqlite3.Connection, version: int) -> dict[str, tuple[str, str]]:
    rows = connection.execute(
        "SELECT doc_id, path, content_hash FROM documents WHERE added <= ? AND removed > ? ORDER BY doc_id",
        (version, version),
    ).fetchall()
    return {doc_id: (path, content) for doc_id, path, content in rows}


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")
