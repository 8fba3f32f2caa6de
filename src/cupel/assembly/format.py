"""Context formatting with document markers (CFS-021 §9)."""

from __future__ import annotations

from cupel.assembly.types import AssembledContext, ContextChunk
from cupel.errors import CupelTypeError

__all__ = ["chunk_annotation", "format_context", "marker_line"]


def chunk_annotation(chunk_id: str, sequence: int, score: float) -> str:
    """The line printed before a chunk when metadata is included: ``[CHUNK: id seq=N score=S]``."""
    return f"[CHUNK: {chunk_id} seq={sequence} score={score:.4f}]"


def marker_line(document_path: str) -> str:
    """The line printed before a document's chunks: ``[DOC: path]`` and a newline (CFS-021 §9)."""
    return f"[DOC: {document_path}]\n"


def format_context(context: AssembledContext, *, include_metadata: bool = False) -> str:
    """Render ``context`` as text: a ``[DOC: path]`` line whenever the document changes, then each chunk's
    text followed by a newline (CFS-021 §9).

    No blank line is inserted between documents: the spec's Grouping and Determinism test vectors
    (``"[DOC: a.md]\\nChunk 1\\nChunk 2\\n[DOC: b.md]\\n…"``) show none, and the blank lines of its format
    example come from chunk texts that end in a newline. Chunk text is copied verbatim. With
    ``include_metadata``, a :func:`chunk_annotation` line precedes each chunk.
    """
    if not isinstance(context, AssembledContext):
        raise CupelTypeError(f"context must be an AssembledContext, got {type(context).__name__}")
    parts: list[str] = []
    current_path: str | None = None
    for chunk in context.chunks:
        if chunk.document_path != current_path:
            parts.append(marker_line(chunk.document_path))
            current_path = chunk.document_path
        if include_metadata:
            parts.append(annotation_for(chunk) + "\n")
        parts.append(chunk.text)
        parts.append("\n")
    return "".join(parts)


def annotation_for(chunk: ContextChunk) -> str:
    return chunk_annotation(chunk.chunk_id, chunk.sequence, chunk.score)
