"""Deterministic ordering and document grouping (CFS-021 §5, §6)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cupel.assembly.tokenizer import TokenizerLike, as_tokenizer, checked_count
from cupel.assembly.types import Document, RetrievalResult
from cupel.errors import CupelTypeError, InvalidConfigurationError

__all__ = [
    "DocumentGroup",
    "check_documents",
    "group_by_document",
    "ordering_key",
    "reading_key",
    "sort_results",
]

OrderingKey = tuple[float, str, int, int, str, str, str]


def ordering_key(result: RetrievalResult) -> OrderingKey:
    """The sort key of CFS-021 §5, extended to a total order.

    Score descending, document path ascending, chunk sequence ascending, byte offset ascending, as the spec
    says; then document id, chunk id and text, so that results tied on all four spec keys still have one
    order whatever order they arrived in.
    """
    chunk = result.chunk
    return (
        -result.score,
        result.document.path,
        chunk.sequence,
        chunk.byte_offset,
        result.document.id,
        chunk.id,
        chunk.text,
    )


def reading_key(result: RetrievalResult) -> tuple[int, int, str, str]:
    """Reading order inside one document: sequence, then byte offset (CFS-021 §7), then id and text."""
    chunk = result.chunk
    return (chunk.sequence, chunk.byte_offset, chunk.id, chunk.text)


def result_list(results: Iterable[RetrievalResult]) -> list[RetrievalResult]:
    if isinstance(results, str | bytes):
        raise CupelTypeError(f"results must be an iterable of RetrievalResult, got {type(results).__name__}")
    items = list(results)
    for index, result in enumerate(items):
        if not isinstance(result, RetrievalResult):
            raise CupelTypeError(f"results[{index}] must be a RetrievalResult, got {type(result).__name__}")
    return items


def sort_results(results: Iterable[RetrievalResult]) -> tuple[RetrievalResult, ...]:
    """``results`` in the deterministic order of :func:`ordering_key`; the input is not modified."""
    return tuple(sorted(result_list(results), key=ordering_key))


def check_documents(results: Iterable[RetrievalResult]) -> None:
    """Require results that share a document id to carry the same document.

    Grouping is by id while markers and ordering use the path, so one id with two paths would make the
    output depend on which result came first.
    """
    seen: dict[str, Document] = {}
    for result in results:
        document = result.document
        first = seen.setdefault(document.id, document)
        if first != document:
            raise InvalidConfigurationError(
                f"document id {document.id!r} appears with different documents: {first!r} and {document!r}"
            )


@dataclass(frozen=True, slots=True)
class DocumentGroup:
    """The retrieved chunks of one document (CFS-021 §6).

    ``chunks`` are in reading order (sequence, then byte offset); ``total_tokens`` is the sum of their
    token counts; ``max_score`` is the best chunk's score.
    """

    document: Document
    chunks: tuple[RetrievalResult, ...]
    total_tokens: int
    max_score: float


def group_positions(ordered: Sequence[RetrievalResult]) -> list[list[int]]:
    """Positions in ``ordered`` (already sorted by :func:`ordering_key`) grouped by document id.

    Groups come in order of their best chunk, which is max score descending, then document path, then the
    remaining keys; each group's positions are in rank order. Built in one pass over the sorted input, so
    no dict or hash order leaks into the result.
    """
    groups: dict[str, list[int]] = {}
    for position, result in enumerate(ordered):
        groups.setdefault(result.document.id, []).append(position)
    return list(groups.values())


def group_by_document(
    results: Iterable[RetrievalResult], tokenizer: TokenizerLike = None
) -> tuple[DocumentGroup, ...]:
    """Group results by document, groups ordered by max score descending, ties by document path (§6).

    Unlike the spec's sketch, a group's ``max_score`` is the true maximum even for negative scores, and the
    group order never depends on hash-map iteration order.
    """
    counter = as_tokenizer(tokenizer)
    ordered = sort_results(results)
    check_documents(ordered)
    groups = []
    for positions in group_positions(ordered):
        members = [ordered[position] for position in positions]
        groups.append(
            DocumentGroup(
                document=members[0].document,
                chunks=tuple(sorted(members, key=reading_key)),
                total_tokens=sum(
                    checked_count(counter.count_tokens, member.chunk.text) for member in members
                ),
                max_score=members[0].score,
            )
        )
    return tuple(groups)
