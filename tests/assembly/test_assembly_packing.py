"""Packing strategies and the shared budget rules (CFS-021 §7, §8)."""

from __future__ import annotations

import pytest

from cupel.assembly import (
    CallableTokenizer,
    PackingStrategy,
    SimpleTokenizer,
    TokenBudget,
    chunk_annotation,
    format_context,
    pack_context,
)
from cupel.errors import CupelTypeError, InvalidConfigurationError
from tests.assembly.helpers import exact_budget, result, sized

# Two documents: "a" has the best chunk, "b" the second and third best.
TWO_DOCS = [
    result("a", "a0", sized(10), 0.5, sequence=0),
    result("a", "a1", sized(10), 0.9, sequence=1),
    result("b", "b0", sized(10), 0.8, sequence=0),
    result("b", "b1", sized(10), 0.7, sequence=1),
]


def ids(strategy: PackingStrategy, budget: TokenBudget | None = None) -> tuple[str, ...]:
    return pack_context(TWO_DOCS, budget or exact_budget(1000), strategy=strategy).chunk_ids


def test_greedy_keeps_documents_together_in_reading_order() -> None:
    assert ids(PackingStrategy.GREEDY) == ("a0", "a1", "b0", "b1")


def test_interleaved_alternates_documents_best_chunk_first() -> None:
    assert ids(PackingStrategy.INTERLEAVED) == ("a1", "b0", "a0", "b1")


def test_score_weighted_is_strictly_by_score() -> None:
    assert ids(PackingStrategy.SCORE_WEIGHTED) == ("a1", "b0", "b1", "a0")


def test_interleaved_continues_with_the_longest_group() -> None:
    results = [result("a", f"a{i}", sized(1), 0.9 - i / 10, sequence=i) for i in range(3)]
    results.append(result("b", "b0", sized(1), 0.85))
    context = pack_context(results, exact_budget(1000), strategy="interleaved")
    assert context.chunk_ids == ("a0", "b0", "a1", "a2")


@pytest.mark.parametrize(
    ("strategy", "runs"),
    [(PackingStrategy.GREEDY, 2), (PackingStrategy.INTERLEAVED, 4), (PackingStrategy.SCORE_WEIGHTED, 3)],
)
def test_document_overhead_is_charged_once_per_run(strategy: PackingStrategy, runs: int) -> None:
    context = pack_context(TWO_DOCS, exact_budget(1000, per_doc_overhead=7), strategy=strategy)
    assert context.total_tokens == 40 + 7 * runs
    assert format_context(context).count("[DOC: ") == runs


def test_a_document_whose_first_chunk_does_not_fit_is_skipped_not_cut() -> None:
    results = [
        result("a", "a0", sized(30), 0.9),
        result("b", "b0", sized(50), 0.8),
        result("c", "c0", sized(10), 0.7),
    ]
    context = pack_context(results, exact_budget(60))
    assert context.chunk_ids == ("a0", "c0")
    assert not context.truncated


def test_the_open_document_is_cut_to_fit_and_packing_stops() -> None:
    results = [
        result("a", "a0", sized(30), 0.9, sequence=0),
        result("a", "a1", "word " * 40, 0.85, sequence=1),
        result("b", "b0", sized(1), 0.8),
    ]
    context = pack_context(results, exact_budget(50, per_doc_overhead=5))
    assert context.chunk_ids == ("a0", "a1")
    assert context.truncated
    last = context.chunks[-1]
    assert last.truncated and last.text.endswith("...")
    assert last.tokens == SimpleTokenizer().count_tokens(last.text)
    assert context.total_tokens <= 50
    assert context.total_tokens == 5 + 30 + (last.tokens or 0)


def test_the_spec_ellipsis_overshoot_is_absorbed() -> None:
    # truncate_to_tokens(text, 10) yields 11 tokens here; the packer asks again for less.
    results = [result("a", "a0", sized(5), 0.9, sequence=0), result("a", "a1", "y" * 200, 0.8, sequence=1)]
    context = pack_context(results, exact_budget(15))
    assert context.chunk_ids == ("a0", "a1")
    assert context.total_tokens <= 15
    assert context.chunks[1].text == "y" * 36 + "..."


def test_when_nothing_fits_whole_the_best_chunk_is_cut() -> None:
    results = [result("a", "a0", "word " * 100, 0.9), result("b", "b0", "word " * 90, 0.8)]
    context = pack_context(results, exact_budget(30, per_doc_overhead=10))
    assert context.chunk_ids == ("a0",)
    assert context.truncated
    assert context.total_tokens <= 30


@pytest.mark.parametrize("available", [0, 1, 10])
def test_a_budget_too_small_for_anything_gives_an_empty_context(available: int) -> None:
    context = pack_context(TWO_DOCS, exact_budget(available, per_doc_overhead=10))
    assert context.chunks == () and context.total_tokens == 0 and not context.truncated


def test_empty_input() -> None:
    context = pack_context([], TokenBudget(2000))
    assert context.chunks == () and context.total_tokens == 0
    assert format_context(context) == ""


def test_metadata_lines_are_charged_to_the_budget() -> None:
    plain = pack_context(TWO_DOCS, exact_budget(1000))
    annotated = pack_context(TWO_DOCS, exact_budget(1000), include_metadata=True)
    notes = sum(
        SimpleTokenizer().count_tokens(chunk_annotation(c.chunk_id, c.sequence, c.score))
        for c in plain.chunks
    )
    assert annotated.total_tokens == plain.total_tokens + notes
    text = format_context(annotated, include_metadata=True)
    assert text.startswith("[DOC: a]\n[CHUNK: a0 seq=0 score=0.5000]\n" + sized(10) + "\n")
    squeezed = pack_context(TWO_DOCS, exact_budget(plain.total_tokens), include_metadata=True)
    assert squeezed.total_tokens <= plain.total_tokens
    assert len(squeezed.chunks) < len(plain.chunks)


def test_packing_with_a_real_counter() -> None:
    words = CallableTokenizer(lambda text: len(text.split()))
    results = [result("a", "a0", "one two three", 0.9), result("b", "b0", "four five", 0.8)]
    context = pack_context(results, exact_budget(5), words)
    assert context.chunk_ids == ("a0", "b0") and context.total_tokens == 5
    assert pack_context(results, exact_budget(5), lambda text: len(text.split())).chunk_ids == ("a0", "b0")


def test_inputs_are_not_modified() -> None:
    results = list(reversed(TWO_DOCS))
    snapshot = list(results)
    pack_context(results, exact_budget(25), strategy="interleaved")
    assert results == snapshot


def test_bad_arguments() -> None:
    with pytest.raises(CupelTypeError, match="budget must be a TokenBudget"):
        pack_context(TWO_DOCS, 100)  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigurationError, match="packing_strategy must be one of"):
        pack_context(TWO_DOCS, TokenBudget(2000), strategy="fastest")
    with pytest.raises(CupelTypeError, match=r"results\[1\] must be a RetrievalResult"):
        pack_context([TWO_DOCS[0], "text"], TokenBudget(2000))  # type: ignore[list-item]
    clash = [result("a", "a0", "x", 0.5, path="a.md"), result("a", "a1", "y", 0.4, path="other.md")]
    with pytest.raises(InvalidConfigurationError, match="document id 'a' appears with different documents"):
        pack_context(clash, TokenBudget(2000))
