"""Exact and near-duplicate removal (CFS-021 §10) and the hash behind it."""

from __future__ import annotations

import hashlib

import pytest

from cupel.assembly import (
    ContextChunk,
    compute_overlap,
    content_hash,
    deduplicate_chunks,
    deduplicate_results,
    hashing,
    shingles,
    sort_results,
)
from cupel.errors import CupelTypeError, InvalidConfigurationError
from tests.assembly.helpers import result

BASE = (
    "Rotate keys in four steps: create a secondary key, deploy it to every service, promote it to "
    "primary, then revoke the old key once the usage graph shows no requests signed with it."
)


def test_shingles_are_case_folded_word_trigrams() -> None:
    assert shingles("The quick, brown FOX") == {("the", "quick", "brown"), ("quick", "brown", "fox")}
    assert shingles("Two words") == {("two", "words")}
    assert shingles("... !!") == frozenset()


def test_overlap_is_containment_of_the_first_text_in_the_second() -> None:
    assert compute_overlap(BASE, BASE) == 1.0
    assert compute_overlap("a b c d", "x y z") == 0.0
    # "a b c d" has shingles abc, bcd; only abc occurs in the second text.
    assert compute_overlap("a b c d", "a b c x y") == 0.5
    # Containment is asymmetric: a passage inside a longer text is covered by it, not the other way round.
    short = "create a secondary key, deploy it to every service"
    assert compute_overlap(short, BASE) == 1.0
    assert compute_overlap(BASE, short) < 0.3
    assert compute_overlap("", BASE) == 0.0


def test_one_edited_word_in_a_long_passage_is_still_a_near_duplicate() -> None:
    edited = BASE.replace("every service", "each service")
    assert 0.8 < compute_overlap(edited, BASE) < 1.0


def chunk(chunk_id: str, text: str) -> ContextChunk:
    return ContextChunk(chunk_id, "doc.md", text, 0.5, 0)


def test_exact_duplicates_are_dropped_first_occurrence_wins() -> None:
    kept = deduplicate_chunks([chunk("1", BASE), chunk("2", "Unrelated text."), chunk("3", BASE)])
    assert [c.chunk_id for c in kept] == ["1", "2"]


def test_near_duplicates_are_dropped_and_distinct_chunks_kept() -> None:
    edited = BASE.replace("every service", "each service")
    other = "Keys do not expire on their own, but rotating them every 90 days is recommended."
    kept = deduplicate_chunks([chunk("1", BASE), chunk("2", edited), chunk("3", other)])
    assert [c.chunk_id for c in kept] == ["1", "3"]


def test_threshold_is_strict_and_one_disables_near_duplicate_removal() -> None:
    half = [chunk("1", "a b c x y"), chunk("2", "a b c d")]  # overlap of the second in the first: 0.5
    assert len(deduplicate_chunks(half, threshold=0.5)) == 2
    assert len(deduplicate_chunks(half, threshold=0.49)) == 1
    edited = BASE.replace("every service", "each service")
    assert len(deduplicate_chunks([chunk("1", BASE), chunk("2", edited)], threshold=1.0)) == 2
    # Exact duplicates go whatever the threshold.
    assert len(deduplicate_chunks([chunk("1", BASE), chunk("2", BASE)], threshold=1.0)) == 1


def test_texts_without_words_are_only_exact_duplicates() -> None:
    kept = deduplicate_chunks([chunk("1", "---"), chunk("2", "***"), chunk("3", "---")])
    assert [c.chunk_id for c in kept] == ["1", "2"]


def test_deduplicating_sorted_results_keeps_the_best_ranked_copy() -> None:
    results = [result("faq", "f", BASE, 0.4, path="faq.md"), result("guide", "g", BASE, 0.9, path="guide.md")]
    assert [r.chunk.id for r in deduplicate_results(sort_results(results))] == ["g"]


def test_many_distinct_chunks_are_all_kept() -> None:
    chunks = [chunk(str(i), f"topic {i} has its own words number {i} and {i * 7}") for i in range(300)]
    assert len(deduplicate_chunks(chunks)) == 300


def test_bad_arguments() -> None:
    with pytest.raises(InvalidConfigurationError, match=r"threshold must be between 0\.0 and 1\.0, got 2"):
        deduplicate_chunks([], threshold=2)
    with pytest.raises(CupelTypeError, match=r"chunks\[0\] must be a ContextChunk"):
        deduplicate_chunks(["text"])  # type: ignore[list-item]


def test_blake3_digest_when_installed() -> None:
    pytest.importorskip("blake3")
    assert hashing.HASH_ALGORITHM == "blake3"
    # The BLAKE3 test vector for the empty input.
    assert content_hash(b"") == "blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"


def test_fallback_hash_keeps_exact_duplicate_semantics(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hashing, "_blake3", None)
    expected = hashlib.blake2b(b"abc", digest_size=32).hexdigest()
    assert content_hash("abc") == f"blake2b-256:{expected}"
    kept = deduplicate_chunks([chunk("1", "---"), chunk("2", BASE), chunk("3", "---"), chunk("4", BASE)])
    assert [c.chunk_id for c in kept] == ["1", "2"]
