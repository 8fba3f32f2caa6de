"""Writing documents into a :class:`~cupel.assembly.store.SqliteStore` inside one versioned transaction.

Rows are buffered and written in bulk (one ``executemany`` per table per batch); vectors, when the store
has an embedder, are computed per batch and written once. Chunk and document row ids are assigned here, so
a document's chunks have consecutive row ids and no ``RETURNING`` round trip is needed. The live FTS index
(``chunks_fts``) always holds exactly the chunks of the newest version: a replaced or removed chunk moves
to ``retired_fts``, where searches of older versions still find it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from cupel.assembly._validate import require_str
from cupel.assembly.embedding import Vector, embed_texts
from cupel.assembly.hashing import HASH_ALGORITHM, raw_digest
from cupel.assembly.lexical import chunk_lengths, fts_text
from cupel.assembly.semantic import pack_vector
from cupel.assembly.types import Chunk, Document
from cupel.assembly.versioning import LIVE, StoreVersion, chunk_hash, merkle_root
from cupel.errors import CupelTypeError, InvalidConfigurationError

__all__ = ["StoreWriter", "version_root"]

_BATCH = 2048


def version_root(connection: sqlite3.Connection, version: int) -> str:
    """The Merkle root of the chunks visible in ``version``, recomputed from the rows."""
    rows = connection.execute(
        "SELECT hash FROM chunks WHERE added <= ? AND removed > ?", (version, version)
    ).fetchall()
    return merkle_root(row[0] for row in rows)


class StoreWriter:
    """Adds and removes documents inside one :meth:`SqliteStore.write` transaction.

    :attr:`base` is the version the write started from. After the write block, :attr:`committed` is the
    version this write committed (``None`` when nothing changed): its own, whatever other writers commit
    before or after it.
    """

    __slots__ = (
        "_chunks",
        "_connection",
        "_counts",
        "_dimension",
        "_embedder",
        "_fts",
        "_next_chunk",
        "_next_row",
        "_texts",
        "_version",
        "base",
        "changed",
        "committed",
    )

    def __init__(
        self,
        connection: sqlite3.Connection,
        base: StoreVersion,
        embedder: Callable[[list[str]], Sequence[Vector]] | None,
        dimension: int,
    ) -> None:
        self._embedder = embedder
        self._dimension = dimension
        self._connection = connection
        self.base = base
        self._version = base.version + 1
        # chunks, terms and documents of the new version, kept up to date as rows come and go
        self._counts = [base.chunk_count, base.term_count, base.document_count]
        self._next_chunk = connection.execute("SELECT coalesce(max(rowid), 0) + 1 FROM chunks").fetchone()[0]
        self._next_row = connection.execute("SELECT coalesce(max(row), 0) + 1 FROM documents").fetchone()[0]
        self._chunks: list[tuple[object, ...]] = []
        self._fts: list[tuple[int, str]] = []
        self._texts: list[tuple[int, str]] = []  # (rowid, text) still to embed
        self.changed = False
        self.committed: StoreVersion | None = None

    def documents(self) -> dict[str, tuple[str, str]]:
        """``{document id: (path, content hash)}`` of the live documents, as this write sees them."""
        self.flush()
        rows = self._connection.execute(
            "SELECT doc_id, path, content_hash FROM documents WHERE removed = ? ORDER BY doc_id", (LIVE,)
        ).fetchall()
        return {doc_id: (path, content) for doc_id, path, content in rows}

    def put(self, document: Document, chunks: Sequence[Chunk], *, content_hash: str | None = None) -> bool:
        """Add ``document`` with ``chunks``, replacing a live document with the same id.

        ``content_hash`` (default: a hash of the path and chunks) decides whether anything changed: a
        document whose live copy has the same hash is left alone and ``False`` is returned.
        """
        if not isinstance(document, Document):
            raise CupelTypeError(f"document must be a Document, got {type(document).__name__}")
        chunk_list = list(chunks)
        for index, chunk in enumerate(chunk_list):
            if not isinstance(chunk, Chunk):
                raise CupelTypeError(f"chunks[{index}] must be a Chunk, got {type(chunk).__name__}")
        if len({chunk.id for chunk in chunk_list}) != len(chunk_list):
            raise InvalidConfigurationError(f"document {document.id!r} has duplicate chunk ids")
        hashes = [chunk_hash(document, chunk) for chunk in chunk_list]
        if content_hash is None:
            content_hash = HASH_ALGORITHM + ":" + raw_digest(b"".join(sorted(hashes))).hex()
        modified = document.modified_at.isoformat() if document.modified_at is not None else None
        live = self._live(document.id)
        if live is not None and tuple(live[1:4]) == (document.path, content_hash, modified):
            return False
        if live is not None:
            self._retire(live)
        row, first = self._next_row, self._next_chunk
        self._next_row += 1
        self._next_chunk += len(chunk_list)
        self._connection.execute(
            "INSERT INTO documents (row, doc_id, path, content_hash, modified_at, first_chunk, chunk_count, "
            "added) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (row, document.id, document.path, content_hash, modified, first, len(chunk_list), self._version),
        )
        for rowid, (chunk, leaf) in enumerate(zip(chunk_list, hashes, strict=True), start=first):
            self._chunks.append((rowid, row, chunk.id, chunk.sequence, chunk.byte_offset, chunk.text, leaf))
            self._fts.append((rowid, fts_text(chunk.text)))
            if self._embedder is not None:
                self._texts.append((rowid, chunk.text))
        self._counts[0] += len(chunk_list)
        self._counts[2] += 1
        if len(self._chunks) >= _BATCH:
            self.flush()
        self.changed = True
        return True

    def remove(self, doc_id: str) -> bool:
        """Remove the live document ``doc_id`` from the new version on; ``False`` if there is none."""
        require_str("StoreWriter.remove", "doc_id", doc_id)
        live = self._live(doc_id)
        if live is None:
            return False
        self._retire(live)
        self.changed = True
        return True

    def _live(self, doc_id: str) -> tuple[int, str, str, str | None, int, int, int] | None:
        row: tuple[int, str, str, str | None, int, int, int] | None = self._connection.execute(
            "SELECT row, path, content_hash, modified_at, first_chunk, chunk_count, added FROM documents "
            "WHERE doc_id = ? AND removed = ?",
            (doc_id, LIVE),
        ).fetchone()
        return row

    def _retire(self, live: tuple[int, str, str, str | None, int, int, int]) -> None:
        row, first, count, added = live[0], live[4], live[5], live[6]
        self.flush()  # the document's chunks may still be in the buffers
        last = first + count - 1
        connection = self._connection
        rows = connection.execute(
            "SELECT rowid, text FROM chunks WHERE rowid BETWEEN ? AND ?", (first, last)
        ).fetchall()
        fts = [(rowid, fts_text(text)) for rowid, text in rows]
        lengths = chunk_lengths(connection, "chunks_fts", first, last)
        # Contentless FTS5 deletes a row given the text it indexed.
        connection.executemany(
            "INSERT INTO chunks_fts (chunks_fts, rowid, terms) VALUES ('delete', ?, ?)", fts
        )
        if added < self._version:  # visible in a committed version: older searches still need it
            connection.executemany("INSERT INTO retired_fts (rowid, terms) VALUES (?, ?)", fts)
        connection.execute("UPDATE documents SET removed = ? WHERE row = ?", (self._version, row))
        connection.execute(
            "UPDATE chunks SET removed = ? WHERE rowid BETWEEN ? AND ?", (self._version, first, last)
        )
        self._counts[0] -= len(rows)
        self._counts[1] -= sum(lengths.values())
        self._counts[2] -= 1

    def flush(self) -> None:
        """Write the buffered chunks, their FTS rows and their vectors."""
        connection = self._connection
        if self._chunks:
            connection.executemany(
                "INSERT INTO chunks (rowid, doc_row, chunk_id, sequence, byte_offset, text, hash, added) "
                f"VALUES (?, ?, ?, ?, ?, ?, ?, {self._version})",
                self._chunks,
            )
            connection.executemany("INSERT INTO chunks_fts (rowid, terms) VALUES (?, ?)", self._fts)
            # The version's term count is FTS5's own count of what it indexed.
            lengths = chunk_lengths(connection, "chunks_fts", self._fts[0][0], self._fts[-1][0])
            self._counts[1] += sum(lengths.values())
            self._chunks, self._fts = [], []
        if self._texts and self._embedder is not None:
            texts, self._texts = self._texts, []
            vectors = embed_texts(self._embedder, [text for _, text in texts], self._dimension)
            rows = []
            for (rowid, _), vector in zip(texts, vectors, strict=True):
                packed, nonzero = pack_vector(vector)
                if nonzero:
                    rows.append((rowid, packed))
            connection.executemany("INSERT INTO vectors (rowid, vector) VALUES (?, ?)", rows)

    def commit(self, created_at: str) -> StoreVersion | None:
        """Flush and record the new version (when anything changed); called by ``SqliteStore.write``."""
        self.flush()
        if not self.changed:
            return None
        chunk_count, term_count, document_count = self._counts
        version = StoreVersion(
            self._version,
            version_root(self._connection, self._version),
            created_at,
            chunk_count,
            term_count,
            document_count,
        )
        self._connection.execute(
            "INSERT INTO versions VALUES (?, ?, ?, ?, ?, ?)",
            (
                version.version,
                version.state_root,
                version.created_at,
                version.chunk_count,
                version.term_count,
                version.document_count,
            ),
        )
        self.committed = version
        return version
