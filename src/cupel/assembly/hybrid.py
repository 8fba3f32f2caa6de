"""Hybrid retrieval: semantic and lexical search fused by reciprocal rank (CFS-021 §11, Parallelism)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from cupel.assembly._validate import require_float, require_int
from cupel.assembly.fusion import DEFAULT_RRF_K, reciprocal_rank_fusion
from cupel.assembly.ordering import ordering_key
from cupel.assembly.types import Chunk, Document, RetrievalResult
from cupel.errors import CupelTypeError, InvalidConfigurationError

__all__ = [
    "CANDIDATE_TOKENS",
    "HybridRetriever",
    "SearchParams",
    "SearchableSnapshot",
    "Substrate",
    "hybrid_search",
]

Hit = tuple[Chunk, Document, float]

CANDIDATE_TOKENS = 16
"""The chunk size, in tokens, :meth:`SearchParams.for_budget` plans for: small chunks, so that the
candidates cover the budget even when chunks are short (a chat turn, a sentence)."""


@dataclass(frozen=True, slots=True)
class SearchParams:
    """How many candidates each channel contributes and how many fused results to keep (CFS-021 §11).

    ``rrf_k`` is the reciprocal-rank-fusion constant; the spec does not set it, so it is the customary 60.
    """

    semantic_k: int = 50
    lexical_k: int = 50
    top_k: int = 100
    rrf_k: float = DEFAULT_RRF_K

    def __post_init__(self) -> None:
        for name in ("semantic_k", "lexical_k", "top_k"):
            require_int("SearchParams", name, getattr(self, name))
        if self.top_k < 1:
            raise InvalidConfigurationError(f"SearchParams.top_k must be >= 1, got {self.top_k}")
        rrf_k = require_float("SearchParams", "rrf_k", self.rrf_k)
        if rrf_k < 0:
            raise InvalidConfigurationError(f"SearchParams.rrf_k must be >= 0, got {self.rrf_k!r}")
        object.__setattr__(self, "rrf_k", rrf_k)

    @classmethod
    def for_budget(cls, available_tokens: int) -> SearchParams:
        """Parameters whose candidates can fill ``available_tokens``: each channel returns
        ``max(50, ceil(available_tokens / CANDIDATE_TOKENS))`` and all fused results are kept.

        ``assemble_context`` and ``cupel assemble --db`` use it, so a larger budget searches deeper
        instead of stopping at a fixed 100 candidates.
        """
        require_int("SearchParams.for_budget", "available_tokens", available_tokens)
        k = max(50, -(-available_tokens // CANDIDATE_TOKENS))
        return cls(semantic_k=k, lexical_k=k, top_k=2 * k)


@runtime_checkable
class SearchableSnapshot(Protocol):
    """One pinned version of a substrate that can search itself (e.g. a ``StoreSnapshot``)."""

    def state_root(self) -> str: ...

    def semantic(self, query: str, k: int) -> Sequence[Hit]: ...

    def lexical(self, query: str, k: int) -> Sequence[Hit]: ...


@runtime_checkable
class Substrate(Protocol):
    """A versioned store that can be pinned to a state root (e.g. a ``SqliteStore``)."""

    def snapshot(self, state_root: str | None = None) -> SearchableSnapshot: ...


def _pinned(substrate: object, state_root: str | None) -> SearchableSnapshot:
    if isinstance(substrate, Substrate):
        return substrate.snapshot(state_root)
    raise CupelTypeError(
        "substrate must have a snapshot(state_root) method (e.g. a SqliteStore), "
        f"got {type(substrate).__name__}"
    )


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _search_pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="cupel-search")
        return _POOL


def _channel(hits: Sequence[Hit], k: int) -> tuple[RetrievalResult, ...]:
    # Each channel keeps exactly k results; ties at the cut are broken by the deterministic order.
    results = [RetrievalResult(chunk, document, score) for chunk, document, score in hits]
    results.sort(key=ordering_key)
    return tuple(results[:k])


def hybrid_search(
    query: str,
    substrate: Substrate | SearchableSnapshot,
    params: SearchParams | None = None,
    *,
    state_root: str | None = None,
    parallel: bool = False,
) -> tuple[RetrievalResult, ...]:
    """The ``top_k`` best chunks for ``query`` by reciprocal rank fusion of the ``semantic_k`` most similar
    and the ``lexical_k`` best BM25 matches (CFS-021 §11).

    ``substrate`` is a store (searched at ``state_root``, default its latest version) or a snapshot.
    Each result's ``score`` is the fused score, ``semantic_score`` its cosine similarity and
    ``lexical_score`` its BM25 score (``None`` where that channel did not return it). With
    ``parallel=True`` both searches run in two threads; the result is the same.
    """
    if not isinstance(query, str):
        raise CupelTypeError(f"query must be a str, got {type(query).__name__}")
    params = SearchParams() if params is None else params
    if not isinstance(params, SearchParams):
        raise CupelTypeError(f"params must be a SearchParams or None, got {type(params).__name__}")
    if isinstance(substrate, SearchableSnapshot) and state_root is None:
        snapshot = substrate
    else:
        snapshot = _pinned(substrate, state_root)
    if parallel:
        # The semantic search runs on a long-lived worker thread (which keeps its store connection) while
        # this thread runs the lexical search.
        semantic_future = _search_pool().submit(snapshot.semantic, query, params.semantic_k)
        lexical = snapshot.lexical(query, params.lexical_k)
        semantic = semantic_future.result()
    else:
        semantic = snapshot.semantic(query, params.semantic_k)
        lexical = snapshot.lexical(query, params.lexical_k)
    fused = reciprocal_rank_fusion(
        _channel(semantic, params.semantic_k), _channel(lexical, params.lexical_k), k=params.rrf_k
    )
    return fused[: params.top_k]


class HybridRetriever:
    """``hybrid_search`` over one snapshot as a :class:`~cupel.assembly.retriever.VersionedRetriever`."""

    __slots__ = ("parallel", "params", "snapshot")

    def __init__(
        self, snapshot: SearchableSnapshot, params: SearchParams | None = None, *, parallel: bool = False
    ) -> None:
        if not isinstance(snapshot, SearchableSnapshot):
            raise CupelTypeError(f"snapshot must be a SearchableSnapshot, got {type(snapshot).__name__}")
        self.snapshot = snapshot
        self.params = params
        self.parallel = parallel

    def retrieve(self, query: str) -> tuple[RetrievalResult, ...]:
        return hybrid_search(query, self.snapshot, self.params, parallel=self.parallel)

    def for_budget(self, available_tokens: int) -> HybridRetriever:
        """This retriever, searching :meth:`SearchParams.for_budget` deep unless its params were given."""
        if self.params is not None:
            return self
        return HybridRetriever(
            self.snapshot, SearchParams.for_budget(available_tokens), parallel=self.parallel
        )

    def state_root(self) -> str:
        return self.snapshot.state_root()
