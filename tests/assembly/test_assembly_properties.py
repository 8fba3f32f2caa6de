"""Hypothesis properties of CFS-021: budget compliance, determinism and coherence."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cupel.assembly import (
    AssemblyConfig,
    PackingStrategy,
    RetrievalResult,
    SimpleTokenizer,
    StaticRetriever,
    TokenBudget,
    assemble_context,
    chunk_annotation,
    format_context,
    pack_context,
)
from tests.assembly.helpers import budgets, result_sets

strategies = st.sampled_from(list(PackingStrategy))
configs = st.builds(
    AssemblyConfig,
    packing_strategy=strategies,
    dedup_threshold=st.sampled_from([0.0, 0.5, 0.8, 1.0]),
    max_chunks_per_doc=st.one_of(st.none(), st.integers(1, 3)),
    prefer_recent=st.booleans(),
    include_metadata=st.booleans(),
)
SIMPLE = SimpleTokenizer()


def runs(paths: list[str]) -> int:
    return sum(1 for index, path in enumerate(paths) if index == 0 or paths[index - 1] != path)


@given(result_sets(), budgets, strategies, st.booleans())
def test_budget_compliance_with_exact_accounting(
    results: list[RetrievalResult], budget: TokenBudget, strategy: PackingStrategy, include_metadata: bool
) -> None:
    context = pack_context(results, budget, strategy=strategy, include_metadata=include_metadata)
    assert context.total_tokens <= budget.available
    notes = (
        sum(SIMPLE.count_tokens(chunk_annotation(c.chunk_id, c.sequence, c.score)) for c in context.chunks)
        if include_metadata
        else 0
    )
    overhead = budget.per_doc_overhead * runs([c.document_path for c in context.chunks])
    assert context.total_tokens == sum(c.tokens or 0 for c in context.chunks) + overhead + notes
    for chunk in context.chunks:
        assert chunk.tokens == SIMPLE.count_tokens(chunk.text)
    assert context.truncated == any(c.truncated for c in context.chunks)
    assert sum(c.truncated for c in context.chunks) <= 1
    text = format_context(context, include_metadata=include_metadata)
    assert text.count("[DOC: ") == runs([c.document_path for c in context.chunks])


@given(result_sets(), budgets, configs, st.data())
def test_output_is_byte_identical_across_runs_and_input_permutations(
    results: list[RetrievalResult], budget: TokenBudget, config: AssemblyConfig, data: st.DataObject
) -> None:
    shuffled = data.draw(st.permutations(results))
    outputs = []
    for ordering in (results, results, shuffled):
        context = assemble_context("q", StaticRetriever(ordering), budget, config=config)
        assert context.total_tokens <= budget.available
        outputs.append(
            (
                format_context(context, include_metadata=config.include_metadata).encode("utf-8"),
                context.chunk_ids,
                context.total_tokens,
                context.truncated,
                context.metadata.state_root if context.metadata else None,
            )
        )
    assert outputs[0] == outputs[1] == outputs[2]


@given(result_sets(), budgets)
def test_greedy_keeps_every_document_in_one_contiguous_run(
    results: list[RetrievalResult], budget: TokenBudget
) -> None:
    context = assemble_context("q", StaticRetriever(results), budget)
    paths = [c.document_path for c in context.chunks]
    assert runs(paths) == len(set(paths))
    # Inside a document, chunks are in reading order.
    for path in set(paths):
        sequences = [(c.sequence, c.byte_offset) for c in context.chunks if c.document_path == path]
        assert sequences == sorted(sequences)


@given(result_sets(), budgets)
def test_score_weighted_output_is_in_score_order(results: list[RetrievalResult], budget: TokenBudget) -> None:
    context = pack_context(results, budget, strategy=PackingStrategy.SCORE_WEIGHTED)
    scores = [c.score for c in context.chunks]
    assert scores == sorted(scores, reverse=True)


@given(result_sets(), strategies)
def test_a_generous_budget_packs_every_unique_chunk(
    results: list[RetrievalResult], strategy: PackingStrategy
) -> None:
    context = pack_context(results, TokenBudget(100_000), strategy=strategy)
    assert len(context.chunks) == len(results) and not context.truncated
