"""A :class:`~cupel.assembly.store.SqliteStore` pinned to one version: what ``hybrid_search`` searches."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

from cupel._trusted import trusted_constructor
from cupel.assembly.embedding import Vector, embed_texts
from cupel.assembly.hybrid import HybridRetriever
from cupel.assembly.lexical import query_terms, rank_exact, rank_fts
from cupel.assembly.semantic import MatrixCache, rank_semantic
from cupel.assembly.types import Chunk, Document
from cupel.assembly.versioning import StoreVersion


class PinnedStore(Protocol):
    """What a snapshot reads of its store (a :class:`~cupel.assembly.store.SqliteStore`)."""

    embedder: Callable[[list[str]], Sequence[Vector]] | None
    dimension: int
    vector_backend: str
    matrices: MatrixCache
    tokenize: str

    def reading(self, *, transaction: bool = True) -> AbstractContextManager[sqlite3.Connection]: ...

    def snapshot(self, state_root: str | None = None) -> StoreSnapshot: ...


__all__ = ["PinnedStore", "StoreSnapshot", "fetch_results", "latest_number"]

_RESULT_COLUMNS = "c.chunk_id, c.text, c.sequence, c.byte_offset, c.doc_row, d.doc_id, d.path, d.modified_at"
_chunk = trusted_constructor(Chunk)
_document = trusted_constructor(Document)


class StoreSnapshot:
    """A store pinned to one version; what :func:`~cupel.assembly.hybrid.hybrid_search` searches."""

    __slots__ = ("store", "version")

    def __init__(self, store: PinnedStore, version: StoreVersion) -> None:
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
        if version.chunk_count == 0 or k <= 0:
            return []
        with self.store.reading(transaction=False) as connection:
            terms = query_terms(connection, query)
            if not terms:
                return []
            # While this version is the newest, the live FTS index holds exactly its chunks: FTS5 ranks and
            # limits, and the same statement reads which version is newest.
            rows, latest = rank_fts(connection, terms, k, _RESULT_COLUMNS)
            if latest is None:
                latest = latest_number(connection)
            if latest == version.version:
                return _hits(rows)
            scored = rank_exact(connection, version, terms, self.store.tokenize, k)
            # Committed rows never change, so the texts can be read in a statement of their own.
            return fetch_results(connection, scored)

    def semantic(self, query: str, k: int) -> list[tuple[Chunk, Document, float]]:
        """The ``k`` most similar chunks by cosine (ties at the k-th score included), best first.

        Empty when the store has no embedder (lexical search only).
        """
        store = self.store
        if store.embedder is None or self.version.chunk_count == 0 or k <= 0:
            return []
        (vector,) = embed_texts(store.embedder, [query], store.dimension)
        # The version's vectors and texts are committed rows, which never change: no transaction needed.
        with store.reading(transaction=False) as connection:
            scored = rank_semantic(
                connection, self.version.version, vector, k, store.vector_backend, store.matrices
            )
            return fetch_results(connection, scored)

    def __repr__(self) -> str:
        version = self.version
        return f"StoreSnapshot({self.store!r}, version={version.version}, state_root={version.state_root!r})"


def _hits(rows: Sequence[tuple[Any, ...]]) -> list[tuple[Chunk, Document, float]]:
    """``(chunk, document, score)`` of rows ``(rowid, score, *_RESULT_COLUMNS)``, in order.

    Rows were validated when written, so the records are built without validating them again.
    """
    documents: dict[int, Document] = {}
    hits = []
    for _, score, chunk_id, text, sequence, offset, doc_row, doc_id, path, modified in rows:
        document = documents.get(doc_row)
        if document is None:
            moment = datetime.fromisoformat(modified) if modified is not None else None
            document = documents[doc_row] = _document(doc_id, path, moment)
        hits.append((_chunk(chunk_id, text, sequence, offset), document, score))
    return hits


def fetch_results(
    connection: sqlite3.Connection, scored: Sequence[tuple[int, float]]
) -> list[tuple[Chunk, Document, float]]:
    """``(chunk, document, score)`` for ``(rowid, score)`` pairs, in the same order."""
    if not scored:
        return []
    rowids = [rowid for rowid, _ in scored]
    found: dict[int, tuple[Any, ...]] = {}
    for start in range(0, len(rowids), 500):
        batch = rowids[start : start + 500]
        rows = connection.execute(
            f"SELECT c.rowid, {_RESULT_COLUMNS} FROM chunks AS c "
            f"JOIN documents AS d ON d.row = c.doc_row WHERE c.rowid IN ({','.join('?' * len(batch))})",
            batch,
        ).fetchall()
        found.update((row[0], row[1:]) for row in rows)
    return _hits([(rowid, score, *found[rowid]) for rowid, score in scored])


def latest_number(connection: sqlite3.Connection) -> int:
    """The number of the newest committed version."""
    number: int = connection.execute("SELECT max(version) FROM versions").fetchone()[0]
    return number
