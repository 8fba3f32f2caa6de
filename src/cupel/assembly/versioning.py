"""State roots: what names a version of a :class:`~cupel.assembly.store.SqliteStore` (CFS-021 §11).

A state root is a Merkle root over the sorted hashes of the chunks visible in a version, with
:func:`~cupel.assembly.hashing.raw_digest` (BLAKE3, or BLAKE2b-256 without the optional ``blake3``
package) and the algorithm as a prefix, e.g. ``"blake3:9f2c…"``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from cupel.assembly.hashing import HASH_ALGORITHM, raw_digest
from cupel.assembly.types import Chunk, Document
from cupel.errors import InvalidConfigurationError

__all__ = ["LIVE", "StoreVersion", "UnknownStateRootError", "chunk_hash", "merkle_root"]

# One encoder, built once: json.dumps with these options would build a new one per chunk.
_CANONICAL = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))

LIVE = (1 << 63) - 1
"""The ``removed`` version of a row that no version has removed yet."""


class UnknownStateRootError(InvalidConfigurationError):
    """No version of the store has the requested state root (or the prefix is ambiguous)."""


def merkle_root(leaves: Iterable[bytes]) -> str:
    """``"<algorithm>:<hex>"`` Merkle root of the sorted leaf hashes.

    Interior nodes hash ``0x01 || left || right``; an odd node is carried up unchanged; no leaves give the
    hash of ``b"cupel-state/empty"``.
    """
    level = sorted(leaves)
    if not level:
        return f"{HASH_ALGORITHM}:{raw_digest(b'cupel-state/empty').hex()}"
    while len(level) > 1:
        paired = [raw_digest(b"\x01" + level[i] + level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return f"{HASH_ALGORITHM}:{level[0].hex()}"


def chunk_hash(document: Document, chunk: Chunk) -> bytes:
    """The Merkle leaf of a chunk: ``H(0x00 ||`` canonical JSON of its document, position and text``)``."""
    modified = document.modified_at.isoformat() if document.modified_at is not None else None
    canonical = _CANONICAL.encode(
        [document.id, document.path, modified, chunk.id, chunk.sequence, chunk.byte_offset, chunk.text]
    )
    return raw_digest(b"\x00" + canonical.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class StoreVersion:
    """One committed version: its number, state root, creation time (UTC ISO 8601) and sizes."""

    version: int
    state_root: str
    created_at: str
    chunk_count: int
    term_count: int
    document_count: int
