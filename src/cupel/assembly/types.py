"""Retrieval inputs and assembled outputs (CFS-021 §2, §7, §11).

Every type is a frozen, slotted dataclass validated at construction: a bad value raises
:class:`~cupel.errors.InvalidConfigurationError` (a ``ValueError``) or :class:`~cupel.errors.CupelTypeError`
(a ``TypeError``) whose message names the field and the value.

Scores are Python floats (IEEE 754 binary64). The spec declares them ``f32``; that is a storage choice of
its reference implementation, not part of the algorithm, so scores are neither rounded to single precision
nor compared as such. Two scores that would be equal in ``f32`` but differ in ``f64`` are ordered by their
``f64`` values.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from cupel.assembly._validate import (
    require_aware_datetime,
    require_bool,
    require_float,
    require_int,
    require_str,
)
from cupel.errors import CupelTypeError

__all__ = [
    "AssembledContext",
    "Chunk",
    "ContextChunk",
    "ContextMetadata",
    "Document",
    "RetrievalResult",
]


@dataclass(frozen=True, slots=True)
class Document:
    """A source document (CFS-021 §2).

    ``id`` identifies the document (grouping, per-document limits); ``path`` is what the ``[DOC: path]``
    marker shows and the second ordering key. ``modified_at`` (timezone-aware) feeds
    ``AssemblyConfig.prefer_recent``.
    """

    id: str
    path: str
    modified_at: datetime | None = None

    def __post_init__(self) -> None:
        require_str("Document", "id", self.id)
        require_str("Document", "path", self.path, single_line=True)
        if self.modified_at is not None:
            require_aware_datetime("Document", "modified_at", self.modified_at)


@dataclass(frozen=True, slots=True)
class Chunk:
    """A retrievable span of a document (CFS-021 §2).

    ``sequence`` is the chunk's position within its document (reading order) and ``byte_offset`` its start in
    the document's bytes; both are ordering keys (§5).
    """

    id: str
    text: str
    sequence: int
    byte_offset: int = 0

    def __post_init__(self) -> None:
        require_str("Chunk", "id", self.id, single_line=True)
        require_str("Chunk", "text", self.text)
        require_int("Chunk", "sequence", self.sequence)
        require_int("Chunk", "byte_offset", self.byte_offset)


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    """One retrieved chunk with its scores (CFS-021 §2).

    ``score`` is the combined score used for ranking (e.g. a reciprocal-rank-fusion score). The per-channel
    ``semantic_score`` and ``lexical_score`` are informational and ``None`` when that channel did not
    retrieve the chunk.
    """

    chunk: Chunk
    document: Document
    score: float
    semantic_score: float | None = None
    lexical_score: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.chunk, Chunk):
            raise CupelTypeError(f"RetrievalResult.chunk must be a Chunk, got {type(self.chunk).__name__}")
        if not isinstance(self.document, Document):
            raise CupelTypeError(
                f"RetrievalResult.document must be a Document, got {type(self.document).__name__}"
            )
        setter = object.__setattr__
        setter(self, "score", require_float("RetrievalResult", "score", self.score))
        for name in ("semantic_score", "lexical_score"):
            value = getattr(self, name)
            if value is not None:
                setter(self, name, require_float("RetrievalResult", name, value))


@dataclass(frozen=True, slots=True)
class ContextChunk:
    """A chunk placed in the assembled context (CFS-021 §7).

    ``text`` is what the formatter prints: the chunk's text, or a shortened fragment when ``truncated``.
    ``tokens`` is the tokenizer's count for ``text`` (``None`` for chunks built by hand). ``score`` is the
    score the chunk was ranked by.
    """

    chunk_id: str
    document_path: str
    text: str
    score: float
    sequence: int
    byte_offset: int = 0
    document_id: str | None = None
    tokens: int | None = None
    truncated: bool = False

    def __post_init__(self) -> None:
        require_str("ContextChunk", "chunk_id", self.chunk_id, single_line=True)
        require_str("ContextChunk", "document_path", self.document_path, single_line=True)
        require_str("ContextChunk", "text", self.text)
        object.__setattr__(self, "score", require_float("ContextChunk", "score", self.score))
        require_int("ContextChunk", "sequence", self.sequence)
        require_int("ContextChunk", "byte_offset", self.byte_offset)
        if self.document_id is not None:
            require_str("ContextChunk", "document_id", self.document_id)
        if self.tokens is not None:
            require_int("ContextChunk", "tokens", self.tokens)
        require_bool("ContextChunk", "truncated", self.truncated)


@dataclass(frozen=True, slots=True)
class ContextMetadata:
    """Provenance of an assembled context (CFS-021 §11).

    ``query_hash`` is :func:`~cupel.assembly.hashing.content_hash` of the UTF-8 query (algorithm-prefixed,
    e.g. ``"blake3:…"``); ``state_root`` identifies the retriever's data version, ``None`` when the
    retriever does not report one; ``timestamp`` is when the context was assembled.
    """

    query_hash: str
    timestamp: datetime
    state_root: str | None = None

    def __post_init__(self) -> None:
        require_str("ContextMetadata", "query_hash", self.query_hash)
        require_aware_datetime("ContextMetadata", "timestamp", self.timestamp)
        if self.state_root is not None:
            require_str("ContextMetadata", "state_root", self.state_root)


@dataclass(frozen=True, slots=True)
class AssembledContext:
    """The packed context (CFS-021 §7).

    ``total_tokens`` counts chunk tokens plus every overhead charged (document markers, chunk annotations)
    and never exceeds the budget's ``available``. ``truncated`` is true when a chunk's text was cut to fit;
    chunks left out whole do not set it. ``metadata`` is filled in by ``assemble_context``.
    """

    chunks: tuple[ContextChunk, ...]
    total_tokens: int
    truncated: bool
    metadata: ContextMetadata | None = None

    def __post_init__(self) -> None:
        if isinstance(self.chunks, str | bytes) or not hasattr(self.chunks, "__iter__"):
            raise CupelTypeError(
                "AssembledContext.chunks must be a sequence of ContextChunk, "
                f"got {type(self.chunks).__name__}"
            )
        chunks = tuple(self.chunks)
        for index, chunk in enumerate(chunks):
            if not isinstance(chunk, ContextChunk):
                raise CupelTypeError(
                    f"AssembledContext.chunks[{index}] must be a ContextChunk, got {type(chunk).__name__}"
                )
        object.__setattr__(self, "chunks", chunks)
        require_int("AssembledContext", "total_tokens", self.total_tokens)
        require_bool("AssembledContext", "truncated", self.truncated)
        if self.metadata is not None and not isinstance(self.metadata, ContextMetadata):
            raise CupelTypeError(
                "AssembledContext.metadata must be a ContextMetadata or None, "
                f"got {type(self.metadata).__name__}"
            )

    @property
    def chunk_ids(self) -> tuple[str, ...]:
        """The packed chunks' ids, in output order."""
        return tuple(chunk.chunk_id for chunk in self.chunks)
