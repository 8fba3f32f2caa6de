"""assemble_context end to end, configuration, fusion, retrievers and the cache (CFS-021 §11, §12)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

import pytest

from cupel.assembly import (
    AssemblyConfig,
    CacheKey,
    ContextCache,
    Document,
    PackingStrategy,
    RetrievalResult,
    StaticRetriever,
    TokenBudget,
    assemble_context,
    content_hash,
    format_context,
    reciprocal_rank_fusion,
    verify_determinism,
)
from cupel.assembly.assemble import apply_recency
from cupel.errors import CupelTypeError, InvalidConfigurationError
from tests.assembly.helpers import exact_budget, result

INTERLEAVED = AssemblyConfig(PackingStrategy.INTERLEAVED)
FIXED = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)

PASSAGE = "Both keys stay valid until one of them is revoked, so rotation needs no downtime at all."
RESULTS = [
    result("guide", "g0", "Create a secondary key under Settings.", 0.7, sequence=0, path="guide.md"),
    result("guide", "g1", PASSAGE, 0.9, sequence=1, path="guide.md"),
    result("faq", "f3", PASSAGE, 0.6, sequence=3, path="faq.md"),
    result("faq", "f4", "A revoked key cannot be restored.", 0.5, sequence=4, path="faq.md"),
    result("notes", "n0", PASSAGE.replace("at all", "whatsoever"), 0.8, sequence=0, path="notes.md"),
]


def assemble(config: AssemblyConfig | None = None, results: Iterable[RetrievalResult] = RESULTS) -> str:
    context = assemble_context("rotate keys", StaticRetriever(results), exact_budget(1000), config=config)
    return format_context(context, include_metadata=bool(config and config.include_metadata))


def test_assembly_deduplicates_keeping_the_best_copy() -> None:
    assert assemble() == (
        "[DOC: guide.md]\nCreate a secondary key under Settings.\n" + PASSAGE + "\n"
        "[DOC: faq.md]\nA revoked key cannot be restored.\n"
    )


def test_dedup_threshold_one_keeps_near_duplicates() -> None:
    text = assemble(AssemblyConfig(dedup_threshold=1.0))
    assert "[DOC: notes.md]" in text
    assert text.count(PASSAGE) == 1


def test_max_chunks_per_doc_keeps_each_documents_best_chunks() -> None:
    text = assemble(AssemblyConfig(max_chunks_per_doc=1, dedup_threshold=1.0))
    assert text == (
        "[DOC: guide.md]\n" + PASSAGE + "\n"
        "[DOC: notes.md]\n" + PASSAGE.replace("at all", "whatsoever") + "\n"
        "[DOC: faq.md]\nA revoked key cannot be restored.\n"
    )


def test_strategy_and_metadata_are_honoured() -> None:
    text = assemble(AssemblyConfig(packing_strategy=PackingStrategy.SCORE_WEIGHTED, include_metadata=True))
    assert text.startswith("[DOC: guide.md]\n[CHUNK: g1 seq=1 score=0.9000]\n" + PASSAGE + "\n")
    assert text.index("g0") < text.index("f4")


def test_prefer_recent_boosts_newer_documents_relative_to_the_result_set() -> None:
    old = Document("old", "old.md", datetime(2020, 1, 1, tzinfo=UTC))
    new = Document("new", "new.md", datetime(2024, 1, 1, tzinfo=UTC))
    undated = Document("undated", "undated.md")
    results = [
        RetrievalResult(result("x", "o", "old words here", 0).chunk, old, 0.50),
        RetrievalResult(result("x", "n", "new words there", 0).chunk, new, 0.48),
        RetrievalResult(result("x", "u", "no date at all", 0).chunk, undated, 0.49),
    ]
    assert assemble(AssemblyConfig(PackingStrategy.SCORE_WEIGHTED), results).startswith("[DOC: old.md]")
    boosted = assemble(AssemblyConfig(PackingStrategy.SCORE_WEIGHTED, prefer_recent=True), results)
    assert boosted.startswith("[DOC: new.md]")
    rescored = apply_recency(results)
    assert [r.score for r in rescored] == [0.5, pytest.approx(0.48 * 1.1), 0.49]
    assert results[1].score == 0.48  # inputs untouched


def test_prefer_recent_without_distinct_timestamps_changes_nothing() -> None:
    assert apply_recency(RESULTS) == RESULTS


def test_metadata_records_query_hash_state_root_and_time() -> None:
    retriever = StaticRetriever(RESULTS)
    context = assemble_context("rotate keys", retriever, TokenBudget(2000), clock=lambda: FIXED)
    assert context.metadata is not None
    assert context.metadata.query_hash == content_hash("rotate keys")
    assert context.metadata.state_root == retriever.state_root()
    assert context.metadata.timestamp == FIXED


def test_static_state_root_ignores_order_and_tracks_content() -> None:
    assert StaticRetriever(RESULTS).state_root() == StaticRetriever(RESULTS[::-1]).state_root()
    assert StaticRetriever(RESULTS).state_root() != StaticRetriever(RESULTS[1:]).state_root()


def test_a_plain_function_is_a_retriever_without_state_root() -> None:
    context = assemble_context("q", lambda query: RESULTS, TokenBudget(2000))
    assert context.metadata is not None and context.metadata.state_root is None
    assert context.chunk_ids == ("g0", "g1", "f4")


def test_verify_determinism() -> None:
    assert verify_determinism("q", StaticRetriever(RESULTS), TokenBudget(2000))
    assert verify_determinism("q", StaticRetriever(RESULTS), TokenBudget(2000), config=INTERLEAVED)

    class Drifting:
        calls = 0

        def retrieve(self, query: str) -> list[RetrievalResult]:
            Drifting.calls += 1
            return RESULTS[: Drifting.calls]

    assert not verify_determinism("q", Drifting(), TokenBudget(2000))


def test_bad_arguments() -> None:
    with pytest.raises(CupelTypeError, match="query must be a str"):
        assemble_context(b"q", StaticRetriever(RESULTS), TokenBudget(2000))  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match="retriever must have a retrieve"):
        assemble_context("q", 3, TokenBudget(2000))  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match=r"results\[0\] must be a RetrievalResult"):
        assemble_context("q", lambda query: ["x"], TokenBudget(2000))  # type: ignore[list-item,return-value]
    with pytest.raises(CupelTypeError, match="config must be an AssemblyConfig"):
        assemble_context("q", StaticRetriever(RESULTS), TokenBudget(2000), config={})  # type: ignore[arg-type]


# Reciprocal rank fusion


def test_rrf_scores_and_channel_scores() -> None:
    a = result("d", "a", "alpha", 0.9)
    b = result("d", "b", "beta", 0.8)
    c = result("d", "c", "gamma", 12.0)
    fused = reciprocal_rank_fusion([a, b], [c, result("d", "a", "alpha", 7.5)])
    by_id = {r.chunk.id: r for r in fused}
    assert by_id["a"].score == 1 / 61 + 1 / 62
    assert (by_id["a"].semantic_score, by_id["a"].lexical_score) == (0.9, 7.5)
    assert by_id["b"].score == 1 / 62 and by_id["b"].lexical_score is None
    assert by_id["c"].score == 1 / 61 and by_id["c"].semantic_score is None
    assert [r.chunk.id for r in fused] == ["a", "c", "b"]


def test_rrf_ranks_by_score_not_arrival_order_and_counts_duplicates_once() -> None:
    a, b = result("d", "a", "alpha", 0.9), result("d", "b", "beta", 0.8)
    assert reciprocal_rank_fusion([b, a], []) == reciprocal_rank_fusion([a, b], [])
    assert reciprocal_rank_fusion([a, a], [])[0].score == 1 / 61


def test_rrf_k() -> None:
    a = result("d", "a", "alpha", 0.9)
    assert reciprocal_rank_fusion([a], [a], k=0)[0].score == 2.0
    with pytest.raises(InvalidConfigurationError, match="k must be >= 0"):
        reciprocal_rank_fusion([a], [a], k=-1)


# Cache


def test_cache_hits_for_the_same_query_state_budget_and_config() -> None:
    cache = ContextCache(max_size=4)
    retriever = StaticRetriever(RESULTS)
    first = cache.assemble("q", retriever, TokenBudget(2000))
    assert cache.assemble("q", retriever, TokenBudget(2000)) is first
    assert (cache.hits, cache.misses) == (1, 1)
    assert cache.assemble("q", retriever, TokenBudget(2001)) is not first
    assert cache.assemble("q", retriever, TokenBudget(2000), config=INTERLEAVED) is not first
    assert cache.assemble("q", StaticRetriever(RESULTS[1:]), TokenBudget(2000)) is not first
    assert cache.assemble("q", retriever, TokenBudget(2000), tokenizer=len) is not first
    assert len(cache) == 4


def test_cache_evicts_the_least_recently_used() -> None:
    cache = ContextCache(max_size=2)
    retriever = StaticRetriever(RESULTS)
    a = cache.assemble("a", retriever, TokenBudget(2000))
    cache.assemble("b", retriever, TokenBudget(2000))
    assert cache.assemble("a", retriever, TokenBudget(2000)) is a  # "a" is now the most recent
    cache.assemble("c", retriever, TokenBudget(2000))  # evicts "b"
    assert cache.assemble("a", retriever, TokenBudget(2000)) is a
    hits = cache.hits
    cache.assemble("b", retriever, TokenBudget(2000))
    assert cache.hits == hits and len(cache) == 2


def test_cache_bypasses_retrievers_without_state_root() -> None:
    cache = ContextCache()
    cache.assemble("q", lambda query: RESULTS, TokenBudget(2000))
    assert len(cache) == 0


def test_cache_key_and_low_level_api() -> None:
    key = CacheKey.of("q", "root", TokenBudget(2000), AssemblyConfig())
    assert key.query_hash == content_hash("q") and key.state_root == "root"
    cache = ContextCache(1)
    assert cache.get(key) is None
    context = assemble_context("q", StaticRetriever(RESULTS), TokenBudget(2000))
    cache.put(key, context)
    assert cache.get(key) is context
    cache.clear()
    assert len(cache) == 0
    with pytest.raises(InvalidConfigurationError, match=r"ContextCache\.max_size must be >= 1, got 0"):
        ContextCache(0)
