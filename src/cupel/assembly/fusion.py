"""Reciprocal rank fusion of semantic and lexical results (CFS-021 §2, Parallel Processing)."""

from __future__ import annotations

from collections.abc import Iterable

from cupel.assembly._validate import require_float
from cupel.assembly.ordering import sort_results
from cupel.assembly.types import RetrievalResult
from cupel.errors import InvalidConfigurationError

__all__ = ["DEFAULT_RRF_K", "reciprocal_rank_fusion"]

DEFAULT_RRF_K = 60
"""The smoothing constant of Cormack, Clarke and Büttcher (SIGIR 2009), the customary default."""


def reciprocal_rank_fusion(
    semantic: Iterable[RetrievalResult],
    lexical: Iterable[RetrievalResult],
    *,
    k: float = DEFAULT_RRF_K,
) -> tuple[RetrievalResult, ...]:
    """Merge two ranked lists: ``score = Σ 1 / (k + rank)`` over the lists that contain the chunk.

    Each list is ranked by its own results' ``score`` (ties by the deterministic order), rank 1 first, so the
    fused result does not depend on the order the lists arrive in. A chunk is identified by (document id,
    chunk id); within one list only its best rank counts. Each fused result carries the semantic list's
    score as ``semantic_score`` and the lexical list's as ``lexical_score`` (``None`` where that list did not
    contain it), and takes its chunk and document from the semantic list when both have it. The output is
    sorted by the fused score.
    """
    smoothing = require_float("reciprocal_rank_fusion", "k", k)
    if smoothing < 0:
        raise InvalidConfigurationError(f"reciprocal_rank_fusion.k must be >= 0, got {k!r}")
    fused: dict[tuple[str, str], list[float]] = {}
    channel_scores: dict[tuple[str, str], list[float | None]] = {}
    carriers: dict[tuple[str, str], RetrievalResult] = {}
    for channel, results in enumerate((semantic, lexical)):
        seen: set[tuple[str, str]] = set()
        for rank, result in enumerate(sort_results(results), start=1):
            key = (result.document.id, result.chunk.id)
            if key in seen:
                continue
            seen.add(key)
            carriers.setdefault(key, result)
            fused.setdefault(key, []).append(1.0 / (smoothing + rank))
            channel_scores.setdefault(key, [None, None])[channel] = result.score
    return sort_results(
        RetrievalResult(
            chunk=carriers[key].chunk,
            document=carriers[key].document,
            # Summed in channel order (semantic, then lexical), so the float result is reproducible.
            score=sum(contributions),
            semantic_score=channel_scores[key][0],
            lexical_score=channel_scores[key][1],
        )
        for key, contributions in fused.items()
    )
