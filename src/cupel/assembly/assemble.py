"""The complete assembly pipeline and its determinism check (CFS-021 §11, §12)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from cupel.assembly._validate import require_str
from cupel.assembly.budget import TokenBudget
from cupel.assembly.config import RECENCY_BOOST, AssemblyConfig
from cupel.assembly.dedup import deduplicate_results
from cupel.assembly.format import format_context
from cupel.assembly.hashing import content_hash
from cupel.assembly.hybrid import HybridRetriever
from cupel.assembly.ordering import check_documents, sort_results
from cupel.assembly.packing import pack_sorted
from cupel.assembly.retriever import PinnableRetriever, Retriever, pin, retrieve, state_root_of
from cupel.assembly.tokenizer import Tokenizer, TokenizerLike, as_tokenizer
from cupel.assembly.types import AssembledContext, ContextMetadata, RetrievalResult
from cupel.diagnostics.hooks import active_sink, current_attributes, start_operation
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import epoch_microseconds

__all__ = ["apply_recency", "assemble_context", "limit_per_document", "verify_determinism"]

RetrieverLike = Retriever | PinnableRetriever | Callable[[str], Iterable[RetrievalResult]]


def apply_recency(results: Sequence[RetrievalResult]) -> list[RetrievalResult]:
    """Results re-scored for ``prefer_recent`` (see :class:`AssemblyConfig`); inputs are not modified.

    ``score + |score| * RECENCY_BOOST * r``, where ``r`` in [0, 1] is the position of the document's
    ``modified_at`` between the oldest and newest in ``results``; undated documents get ``r = 0``.
    """
    moments = {
        result.document.id: epoch_microseconds(result.document.modified_at)
        for result in results
        if result.document.modified_at is not None
    }
    if len(set(moments.values())) < 2:
        return list(results)
    oldest, newest = min(moments.values()), max(moments.values())
    span = newest - oldest
    boosted = []
    for result in results:
        moment = moments.get(result.document.id)
        if moment is None or moment == oldest:
            boosted.append(result)
            continue
        recency = (moment - oldest) / span
        boosted.append(replace(result, score=result.score + abs(result.score) * RECENCY_BOOST * recency))
    return boosted


def limit_per_document(ordered: Iterable[RetrievalResult], limit: int | None) -> list[RetrievalResult]:
    """Keep each document's first ``limit`` results of ``ordered`` (its best-ranked when sorted)."""
    if limit is None:
        return list(ordered)
    taken: dict[str, int] = {}
    kept = []
    for result in ordered:
        count = taken.get(result.document.id, 0)
        if count < limit:
            taken[result.document.id] = count + 1
            kept.append(result)
    return kept


def assemble_context(
    query: str,
    retriever: RetrieverLike,
    budget: TokenBudget,
    tokenizer: TokenizerLike = None,
    config: AssemblyConfig | None = None,
    *,
    clock: Callable[[], datetime] | None = None,
) -> AssembledContext:
    """Retrieve, rank, deduplicate, limit, group and pack a context for ``query`` (CFS-021 §11).

    Steps: retrieve; optionally boost recent documents; sort by the deterministic key; drop exact and near
    duplicates, keeping the best-ranked copy (the spec deduplicates before sorting, which would let input
    order pick the survivor); keep at most ``max_chunks_per_doc`` per document; pack with the configured
    strategy; attach :class:`ContextMetadata`. A :class:`~cupel.assembly.retriever.PinnableRetriever` such
    as a ``SqliteStore`` is pinned to its latest version first, so results and state root agree, and searched
    deep enough for the budget (:meth:`~cupel.assembly.hybrid.SearchParams.for_budget`). A budget whose
    reserves leave no tokens is an :class:`~cupel.errors.InvalidConfigurationError`.
    ``tokenizer`` defaults to :class:`SimpleTokenizer` and may be
    a bare ``text -> int`` counter; ``clock`` (default: the current UTC time) stamps the metadata.
    """
    require_str("assemble_context", "query", query, non_empty=False)
    if not isinstance(budget, TokenBudget):
        raise CupelTypeError(f"budget must be a TokenBudget, got {type(budget).__name__}")
    if config is None:
        config = AssemblyConfig()
    elif not isinstance(config, AssemblyConfig):
        raise CupelTypeError(f"config must be an AssemblyConfig or None, got {type(config).__name__}")
    if budget.available == 0:
        raise InvalidConfigurationError(
            f"the reserves take the whole budget: TokenBudget.total_tokens {budget.total_tokens} = "
            f"reserved_system {budget.reserved_system} + reserved_query {budget.reserved_query} + "
            f"reserved_response {budget.reserved_response}, which leaves 0 tokens for the context"
        )
    counter = as_tokenizer(tokenizer)
    sink = active_sink()
    if sink is None:
        return _assemble(query, retriever, budget, counter, config, clock, {})
    # A tracing hook is installed (cupel.otel.tracing): report the assembly as one operation.
    attributes: dict[str, object] = {
        "cupel.budget.max_tokens": budget.total_tokens,
        "cupel.budget.target_tokens": budget.available,
        "cupel.assembly.packing_strategy": str(config.packing_strategy.value),
        **current_attributes(),
    }
    operation = start_operation(sink, "cupel.assembly", attributes)
    stats: dict[str, int] = {}
    try:
        context = _assemble(query, retriever, budget, counter, config, clock, stats)
    except BaseException as error:
        operation.finish(stats, [], error)
        raise
    outcome: dict[str, object] = {**stats}
    outcome["cupel.result.tokens"] = context.total_tokens
    outcome["cupel.result.included_count"] = len(context.chunks)
    outcome["cupel.result.excluded_count"] = stats["cupel.assembly.retrieved_count"] - len(context.chunks)
    outcome["cupel.assembly.truncated"] = context.truncated
    operation.finish(outcome, [], None)
    return context


def _assemble(
    query: str,
    retriever: RetrieverLike,
    budget: TokenBudget,
    counter: Tokenizer,
    config: AssemblyConfig,
    clock: Callable[[], datetime] | None,
    stats: dict[str, int],
) -> AssembledContext:
    source = pin(retriever)
    if isinstance(source, HybridRetriever):
        source = source.for_budget(budget.available)  # candidates enough for the budget
    state_root = state_root_of(source)

    results = retrieve(source, query)  # type: ignore[arg-type]
    check_documents(results)
    stats["cupel.assembly.retrieved_count"] = len(results)
    if config.prefer_recent:
        results = apply_recency(results)
    ordered = sort_results(results)
    unique = deduplicate_results(ordered, config.dedup_threshold)
    stats["cupel.assembly.deduplicated_count"] = len(ordered) - len(unique)
    limited = limit_per_document(unique, config.max_chunks_per_doc)
    context = pack_sorted(
        limited,
        budget,
        counter,
        config.packing_strategy,
        config.include_metadata,
        config.marker_tokens == "exact",
    )

    timestamp = (clock or _utc_now)()
    metadata = ContextMetadata(query_hash=content_hash(query), timestamp=timestamp, state_root=state_root)
    return replace(context, metadata=metadata)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def verify_determinism(
    query: str,
    retriever: RetrieverLike,
    budget: TokenBudget,
    tokenizer: TokenizerLike = None,
    config: AssemblyConfig | None = None,
) -> bool:
    """Assemble twice and compare chunk ids and formatted text (CFS-021 §12)."""
    include_metadata = config.include_metadata if config is not None else False
    first = assemble_context(query, retriever, budget, tokenizer, config)
    second = assemble_context(query, retriever, budget, tokenizer, config)
    if first.chunk_ids != second.chunk_ids:
        return False
    return format_context(first, include_metadata=include_metadata) == format_context(
        second, include_metadata=include_metadata
    )
