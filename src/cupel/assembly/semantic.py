"""Vector search over a store version: exact cosine top-k (CFS-021 §2 ``semantic_score``).

Vectors are stored beside their chunks (table ``vectors``, only for stores built with an embedder) as
little-endian float32, L2-normalised at write time, so cosine similarity is a dot product. Two backends
compute the same exact (not approximate) top-k:

* ``"numpy"`` (default): the version's vectors are read once into a matrix (cached per version) and
  multiplied by the query vector. Needs numpy (``pip install "pycupel[rag]"``), imported on first use.
* ``"sqlite-vec"``: the ``sqlite-vec`` extension's ``vec_distance_cosine`` runs inside SQLite, so no
  matrix is held in Python memory (``pip install "pycupel[sqlite-vec]"``). It needs a Python whose
  ``sqlite3`` module can load extensions (``enable_load_extension``); some builds (e.g. pyenv's defaults
  on some systems) cannot, and then the backend raises an error saying so.

Both keep every chunk tied with the k-th score so that ties are broken by the caller's deterministic
order, never by storage order. Scores may differ between the backends in the last bits (float32
arithmetic in different orders); within one backend they are reproducible. Chunks whose text yields the
zero vector, and queries that do, take no part in semantic search.
"""

from __future__ import annotations

import math
import sqlite3
import sys
import threading
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from cupel.errors import InvalidConfigurationError
from cupel.tokens._optional import OptionalDependencyError, import_optional

__all__ = [
    "VECTOR_BACKENDS",
    "MatrixCache",
    "load_sqlite_vec",
    "pack_vector",
    "rank_semantic",
    "sqlite_vec_unavailable",
]

VECTOR_BACKENDS = ("numpy", "sqlite-vec")


def numpy_module() -> Any:
    return import_optional("numpy", package="numpy", extra="rag", feature="semantic search (numpy backend)")


def pack_vector(vector: Sequence[float]) -> tuple[bytes, bool]:
    """``vector`` L2-normalised as little-endian float32 bytes, and whether it is non-zero."""
    norm = math.hypot(*vector)
    packed = array("f", vector if norm == 0.0 else (value / norm for value in vector))
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes(), norm != 0.0


def load_sqlite_vec(connection: sqlite3.Connection) -> None:
    """Load the sqlite-vec extension into ``connection``, or raise an error that says what is missing."""
    sqlite_vec = import_optional(
        "sqlite_vec", package="sqlite-vec", extra="sqlite-vec", feature='vector_backend="sqlite-vec"'
    )
    if not hasattr(connection, "enable_load_extension"):
        raise OptionalDependencyError(
            'vector_backend="sqlite-vec": this Python\'s sqlite3 module was built without extension '
            'loading (no enable_load_extension); use vector_backend="numpy" or a Python built with it'
        )
    connection.enable_load_extension(True)
    try:
        sqlite_vec.load(connection)
    finally:
        connection.enable_load_extension(False)


def sqlite_vec_unavailable() -> str | None:
    """Why the sqlite-vec backend cannot run in this Python (the message of its error), or ``None``."""
    connection = sqlite3.connect(":memory:")
    try:
        load_sqlite_vec(connection)
    except OptionalDependencyError as error:
        return str(error)
    finally:
        connection.close()
    return None


class MatrixCache:
    """The vectors of the most recently searched versions, as (rowids, matrix) pairs."""

    __slots__ = ("_entries", "_lock", "size")

    def __init__(self, size: int = 2) -> None:
        self.size = size
        self._entries: OrderedDict[int, tuple[Any, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, connection: sqlite3.Connection, version: int, dimension: int) -> tuple[Any, Any]:
        with self._lock:
            found = self._entries.get(version)
            if found is not None:
                self._entries.move_to_end(version)
                return found
        np = numpy_module()
        rows = connection.execute(
            "SELECT c.rowid, v.vector FROM chunks AS c JOIN vectors AS v ON v.rowid = c.rowid "
            "WHERE c.added <= ? AND c.removed > ? ORDER BY c.rowid",
            (version, version),
        ).fetchall()
        rowids = np.array([row[0] for row in rows], dtype=np.int64)
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype="<f4").reshape(len(rows), dimension)
        with self._lock:
            self._entries[version] = (rowids, matrix)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return rowids, matrix


def rank_semantic(
    connection: sqlite3.Connection,
    version: int,
    query_vector: Sequence[float],
    k: int,
    backend: str,
    cache: MatrixCache,
) -> list[tuple[int, float]]:
    """The ``k`` most similar ``(chunk rowid, cosine)`` pairs of ``version``, best first, ties kept."""
    packed, nonzero = pack_vector(query_vector)
    if not nonzero or k <= 0:
        return []
    if backend == "sqlite-vec":
        return _rank_sqlite_vec(connection, version, packed, k)
    if backend != "numpy":
        raise InvalidConfigurationError(f"vector_backend must be one of {VECTOR_BACKENDS}, got {backend!r}")
    np = numpy_module()
    rowids, matrix = cache.get(connection, version, len(query_vector))
    if not len(rowids):
        return []
    scores = matrix @ np.frombuffer(packed, dtype="<f4")
    if k < len(scores):
        cut = np.partition(scores, len(scores) - k)[len(scores) - k]
        chosen = np.flatnonzero(scores >= cut)
    else:
        chosen = np.arange(len(scores))
    order = chosen[np.argsort(-scores[chosen], kind="stable")]
    return [(int(rowids[index]), float(scores[index])) for index in order]


def _rank_sqlite_vec(
    connection: sqlite3.Connection, version: int, packed: bytes, k: int
) -> list[tuple[int, float]]:
    query = (
        "SELECT c.rowid, vec_distance_cosine(v.vector, ?) AS distance FROM chunks AS c "
        "JOIN vectors AS v ON v.rowid = c.rowid "
        "WHERE c.added <= ? AND c.removed > ? {extra} ORDER BY distance, c.rowid {limit}"
    )
    rows = connection.execute(
        query.format(extra="", limit="LIMIT ?"), (packed, version, version, k + 1)
    ).fetchall()
    if len(rows) > k and rows[k][1] == rows[k - 1][1]:
        # The k-th distance is shared beyond the limit: take every chunk at that distance.
        rows = (
            rows[:k]
            + connection.execute(
                query.format(extra="AND vec_distance_cosine(v.vector, ?) = ?", limit=""),
                (packed, version, version, packed, rows[k - 1][1]),
            ).fetchall()
        )
        rows = list(dict.fromkeys(rows))
    else:
        rows = rows[:k]
    return [(rowid, 1.0 - distance) for rowid, distance in rows]
