"""Writing documents into a :class:`~cupel.assembly.store.SqliteStore` inside one versioned transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from cupel.assembly._validate import require_str
from cupel.assembly.embedding import Vector, embed_texts
from cupel.assembly.hashing import HASH_ALGORITHM, raw_digest
from cupel.assembly.lexical import lexical_terms
from cupel.assembly.semantic import pack_vector
from cupel.assembly.types import Chunk, Document
from cupel.assembly.versioning import LIVE, chunk_hash
from cupel.errors import CupelTypeError, InvalidConfigurationError

__all__ = ["StoreWriter"]

_EMBED_BATCH = 256


class StoreWriter:
    """Adds and removes documents inside one :meth:`SqliteStore.write` transaction."""

    __slots__ = ("_connection", "_dimension", "_embedder", "_pending", "_version", "changed")

    def __init__(
        self,
        connection: sqlite3.Connection,
        version: int,
        embedder: Callable[[list[str]], Sequence[Vector]],
        dimension: int,
    ) -> None:
        self._embedder = embedder
        self._dimension = dimension
        self._connection = connection
        self._version = version
        self._pending: list[tuple[int, str]] = []  # (chunk rowid, text) still to embed
        self.changed = False

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
        live = self._connection.execute(
            "SELECT row, path, content_hash, modified_at FROM documents WHERE doc_id = ? AND removed = ?",
            (document.id, LIVE),
        ).fetchone()
        if live is not None and tuple(live[1:]) == (document.path, content_hash, modified):
            return False
        if live is not None:
            self._retire(live[0])
        (row,) = self._connection.execute(
            "INSERT INTO documents (doc_id, path, content_hash, modified_at, added) VALUES (?, ?, ?, ?, ?) "
            "RETURNING row",
            (document.id, document.path, content_hash, modified, self._version),
        ).fetchone()
        zero = bytes(4 * self._dimension)
        for chunk, leaf in zip(chunk_list, hashes, strict=True):
            terms = lexical_terms(chunk.text)
            (rowid,) = self._connection.execute(
                "INSERT INTO chunks (doc_row, chunk_id, sequence, byte_offset, text, hash, term_count, "
                "vector, has_vector, added) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?) RETURNING rowid",
                (
                    row,
                    chunk.id,
                    chunk.sequence,
                    chunk.byte_offset,
                    chunk.text,
                    leaf,
                    len(terms),
                    zero,
                    self._version,
                ),
            ).fetchone()
            self._connection.execute(
                "INSERT INTO chunks_fts (rowid, terms) VALUES (?, ?)", (rowid, " ".join(terms))
            )
            self._pending.append((rowid, chunk.text))
        if len(self._pending) >= _EMBED_BATCH:
            self.flush()
        self.changed = True
        return True

    def remove(self, doc_id: str) -> bool:
        """Remove the live document ``doc_id`` from the new version on; ``False`` if there is none."""
        require_str("StoreWriter.remove", "doc_id", doc_id)
        live = self._connection.execute(
            "SELECT row FROM documents WHERE doc_id = ? AND removed = ?", (doc_id, LIVE)
        ).fetchone()
        if live is None:
            return False
        self._retire(live[0])
        self.changed = True
        return True

    def _retire(self, row: int) -> None:
        self._connection.execute("UPDATE documents SET removed = ? WHERE row = ?", (self._version, row))
        self._connection.execute(
            "UPDATE chunks SET removed = ? WHERE doc_row = ? AND removed = ?", (self._version, row, LIVE)
        )

    def flush(self) -> None:
        """Embed and store the vectors of the chunks added so far."""
        while self._pending:
            batch, self._pending = self._pending[:_EMBED_BATCH], self._pending[_EMBED_BATCH:]
            vectors = embed_texts(self._embedder, [text for _, text in batch], self._dimension)
            updates = []
            for (rowid, _), vector in zip(batch, vectors, strict=True):
                packed, nonzero = pack_vector(vector)
                updates.append((packed, int(nonzero), rowid))
            self._connection.executemany(
                "UPDATE chunks SET vector = ?, has_vector = ? WHERE rowid = ?", updates
            )
