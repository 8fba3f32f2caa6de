"""RelevanceScorer: BM25 relevance to the query of a call, its binding through composite and scaled
scorers, and what reports say about it."""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cupel import (
    ChronologicalPlacer,
    CompositeScorer,
    ContextBudget,
    ContextItem,
    GreedySlice,
    Pipeline,
    PriorityScorer,
    RecencyScorer,
    RelevanceScorer,
    ScaledScorer,
    ScoreSlice,
    _numeric,
)
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.protocols import QueryScorer
from cupel.scorers._base import bind_query
from cupel.scorers.columns import ItemColumns
from cupel.scorers.relevance import STOP_WORDS, bm25_scores, query_terms, stem

WORDS = ["apple", "banana", "cherry", "dog", "evening", "flight", "garden", "harbor", "island", "jazz"]
texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=12).map(" ".join)
corpora = st.lists(texts, min_size=1, max_size=15)
queries = st.lists(st.sampled_from([*WORDS, "the", "what", "zebra"]), max_size=4).map(" ".join)


def _items(contents: list[str]) -> list[ContextItem]:
    return [ContextItem(content=content or "-", tokens=1 + len(content) // 4) for content in contents]


# ---- the stemmer and the terms ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["study", "studies", "studied", "studying"], "stud"),
        (["run", "runs", "running"], "run"),
        (["paint", "paints", "painted", "painting", "paintings"], "paint"),
        (["bake", "baked", "baking", "bakes"], "bak"),
        (["play", "plays", "played", "playing"], "play"),
        (["class", "classes"], "class"),
    ],
)
def test_inflections_share_a_stem(words: list[str], expected: str) -> None:
    assert {stem(word) for word in words} == {expected}


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", max_size=14))
def test_a_stem_is_a_prefix_of_its_word(word: str) -> None:
    # BM25 filters texts by substring search for the stems: this must hold for it to be exact.
    assert word.startswith(stem(word))
    assert len(stem(word)) >= min(3, len(word))


def test_query_terms_drop_stop_words_and_stem() -> None:
    assert query_terms("What did Caroline research about adoption agencies?") == [
        "adoption",
        "agenc",
        "carolin",
        "research",
    ]
    assert query_terms("what did they do") == []
    assert query_terms("What did", stop_words=False) == ["did", "what"]
    assert "the" in STOP_WORDS


# ---- scores ------------------------------------------------------------------------------------------


def _reference_bm25(query: str, contents: list[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
    """BM25 written out from its definition, word by word (the reference for the filtered form)."""
    import re

    wanted = query_terms(query)
    docs = [
        [stem(word) for word in re.findall(r"[^\W_]+", text.lower()) if word not in STOP_WORDS]
        for text in contents
    ]
    count = len(contents)
    average = sum(map(len, contents)) / count
    scores = []
    for text, doc in zip(contents, docs, strict=True):
        total = 0.0
        for term in wanted:
            frequency = doc.count(term)
            if not frequency:
                continue
            df = sum(term in other for other in docs)
            idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
            norm = k1 * (1 - b + b * len(text) / average) if average else k1
            total += idf * frequency * (k1 + 1) / (frequency + norm)
        scores.append(total)
    return scores


@given(corpora, queries)
def test_bm25_equals_its_definition(contents: list[str], query: str) -> None:
    assert bm25_scores(query, contents) == pytest.approx(_reference_bm25(query, contents), abs=1e-12)


@given(corpora, queries)
def test_scores_lie_in_the_unit_interval(contents: list[str], query: str) -> None:
    scores = RelevanceScorer(query).score_all(_items(contents))
    assert len(scores) == len(contents)
    assert all(0.0 <= score <= 1.0 for score in scores)
    if any(scores):
        assert max(scores) == 1.0


@given(corpora, queries, st.randoms(use_true_random=False))
def test_scores_do_not_depend_on_the_order(contents: list[str], query: str, random: object) -> None:
    items = _items(contents)
    scores = dict(zip(map(id, items), RelevanceScorer(query).score_all(items), strict=True))
    shuffled = list(items)
    random.shuffle(shuffled)  # type: ignore[attr-defined]
    again = RelevanceScorer(query).score_all(shuffled)
    assert [scores[id(item)] for item in shuffled] == again


@given(corpora, st.sampled_from([word for word in WORDS if word != "garden"]))
def test_a_text_with_the_rare_query_term_outranks_one_without(contents: list[str], word: str) -> None:
    contents = [content for content in contents if word not in content.split()]
    items = _items([*contents, f"{word} garden", "garden garden"])
    scores = RelevanceScorer(f"{word} garden").score_all(items)
    assert scores[-2] > scores[-1]


@given(corpora, st.lists(st.sampled_from(sorted(STOP_WORDS)), max_size=4).map(" ".join))
def test_a_query_of_stop_words_or_nothing_scores_every_item_the_same(contents: list[str], query: str) -> None:
    items = _items(contents)
    assert set(RelevanceScorer(query).score_all(items)) == {0.0}
    assert set(RelevanceScorer().score_all(items)) == {0.0}


def test_scores_are_the_same_under_any_hash_seed() -> None:
    code = (
        "from cupel import ContextItem, RelevanceScorer\n"
        "items = [ContextItem(content=t, tokens=5) for t in "
        "['tree nut allergy noted', 'dinner at eight', 'nuts and trees', 'allergic to pollen']]\n"
        "print(RelevanceScorer('Which allergies do I have? nuts?').score_all(items))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(outputs) == 1


def test_per_item_score_matches_the_whole_list() -> None:
    items = _items(["flight to Oslo on Friday", "garden party", "the flight was late"])
    scorer = RelevanceScorer("When is my flight?")
    assert [scorer.score(item, items) for item in items] == scorer.score_all(items)
    assert scorer.score_all([]) == []


def test_hybrid_fuses_cosine_similarity() -> None:
    def embedder(batch: list[str]) -> list[list[float]]:
        # Query first; a text about "trip" points the query's way although it shares no word with it.
        return [[1.0, 0.0] if "trip" in text or "flight" in text else [0.0, 1.0] for text in batch]

    items = _items(["the trip to Oslo", "garden party"])
    lexical = RelevanceScorer("flight").score_all(items)
    assert lexical == [0.0, 0.0]
    hybrid = RelevanceScorer("flight", embedder=embedder, semantic_weight=0.5).score_all(items)
    assert hybrid == [0.5, 0.0]


def test_a_bad_embedder_fails_with_a_message() -> None:
    items = _items(["a text"])
    with pytest.raises(Exception, match="embedder returned 1 vectors for 2 texts"):
        RelevanceScorer("text", embedder=lambda batch: [[1.0]]).score_all(items)


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        ({"query": 3}, CupelTypeError, "query must be a string or None"),
        ({"k1": -1}, InvalidConfigurationError, "k1 must be non-negative"),
        ({"b": 1.5}, InvalidConfigurationError, r"b must be in \[0.0, 1.0\]"),
        ({"stemming": "yes"}, CupelTypeError, "stemming must be a bool"),
        ({"embedder": 3}, CupelTypeError, "embedder must be callable"),
        ({"semantic_weight": 2}, InvalidConfigurationError, "semantic_weight must be in"),
        ({"neighbors": -1}, InvalidConfigurationError, "neighbors must be >= 0"),
        ({"neighbors": True}, CupelTypeError, "neighbors must be an integer"),
        ({"neighbors": 1.5}, CupelTypeError, "neighbors must be an integer"),
        ({"neighbor_weight": 2}, InvalidConfigurationError, r"neighbor_weight must be in \[0.0, 1.0\]"),
    ],
)
def test_bad_arguments_are_named(keywords: dict[str, object], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        RelevanceScorer(**keywords)  # type: ignore[arg-type]


# ---- conversation context: neighbours share relevance ---------------------------------------------------


def test_neighbors_share_relevance_halving_with_each_step() -> None:
    items = _items(["dog", "dog", "apple", "dog", "dog", "dog", "dog"])
    assert RelevanceScorer("apple").score_all(items) == [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert RelevanceScorer("apple", neighbors=3).score_all(items) == [0.25, 0.5, 1.0, 0.5, 0.25, 0.125, 0.0]
    quarter = RelevanceScorer("apple", neighbors=1, neighbor_weight=0.25).score_all(items)
    assert quarter == [0.0, 0.25, 1.0, 0.25, 0.0, 0.0, 0.0]


def test_neighbors_add_up_and_are_divided_by_the_best_again() -> None:
    # The middle item holds no query term but sits between two that do: it ends up first.
    items = _items(["apple", "dog", "apple"])
    assert RelevanceScorer("apple", neighbors=1).score_all(items) == [1.0, 1.0, 1.0]
    assert RelevanceScorer("apple", neighbors=2).score_all(items) == [1.0, 0.8, 1.0]


def test_neighbors_follow_the_list_order() -> None:
    # The conversation's order is the list's: the turn after the one naming the term gains, not a
    # turn elsewhere in the list.
    items = _items(["apple", "dog", "cherry", "dog"])
    scores = RelevanceScorer("apple", neighbors=1).score_all(items)
    assert scores == [1.0, 0.5, 0.0, 0.0]


@given(corpora, queries, st.integers(min_value=0, max_value=5), st.sampled_from([0.0, 0.25, 0.5, 1.0]))
def test_neighbor_scores_lie_in_the_unit_interval(
    contents: list[str], query: str, neighbors: int, weight: float
) -> None:
    items = _items(contents)
    plain = RelevanceScorer(query).score_all(items)
    scores = RelevanceScorer(query, neighbors=neighbors, neighbor_weight=weight).score_all(items)
    assert all(0.0 <= score <= 1.0 for score in scores)
    assert (max(scores) == 1.0) == any(plain)
    if neighbors == 0 or weight == 0.0:
        assert scores == plain
    # An item holding a query term never scores 0.0; one with no relevant item within reach does.
    for index, score in enumerate(scores):
        near = (
            plain[max(0, index - neighbors) : index + neighbors + 1] if weight else plain[index : index + 1]
        )
        assert (score > 0.0) == any(near)


# ---- the query of a call -----------------------------------------------------------------------------


def _pipeline(scorer: object) -> Pipeline:
    return Pipeline(scorer, GreedySlice(), ChronologicalPlacer())  # type: ignore[arg-type]


def test_binding_reaches_nested_relevance_terms() -> None:
    tree = CompositeScorer(
        [(RecencyScorer(), 1.0), (ScaledScorer(CompositeScorer([(RelevanceScorer(), 1.0)])), 2.0)]
    )
    assert isinstance(RelevanceScorer(), QueryScorer)
    bound = bind_query(tree, "flight")
    assert bound is not tree and tree.scorers[1].inner.scorers[0].query is None  # type: ignore[attr-defined]
    assert bound.scorers[1].inner.scorers[0].query == "flight"  # type: ignore[attr-defined]
    assert bound.normalized_weights == tree.normalized_weights  # type: ignore[attr-defined]
    plain = CompositeScorer([(RecencyScorer(), 1.0)])
    assert bind_query(plain, "flight") is plain
    assert bind_query(tree, None) is tree


def test_the_query_of_a_call_replaces_a_fixed_one_and_none_keeps_it() -> None:
    scorer = RelevanceScorer("garden")
    assert scorer.with_query("flight").query == "flight"
    assert scorer.with_query("garden") is scorer
    assert bind_query(scorer, None) is scorer


def test_pipeline_run_selects_for_the_query() -> None:
    contents = ["my flight leaves Friday at 9", "the garden needs water", "jazz tonight", "dog walk"]
    items = [ContextItem(content=content, tokens=5) for content in contents]
    budget = ContextBudget(max_tokens=5, target_tokens=5)
    pipeline = _pipeline(RelevanceScorer())
    assert pipeline.run(items, budget, query="When does my flight leave?") == [items[0]]
    assert pipeline.run(items, budget, query="water the garden") == [items[1]]
    assert asyncio.run(pipeline.arun(items, budget, query="jazz")) == [items[2]]
    report = asyncio.run(pipeline.adry_run(items, budget, query="dog"))
    assert report.items == [items[3]]
    with pytest.raises(CupelTypeError, match="query must be a string or None"):
        pipeline.run(items, budget, query=3)  # type: ignore[arg-type]


def test_report_entries_carry_relevance_and_notes_name_the_query() -> None:
    items = [
        *_items(["my flight leaves Friday", "garden party"]),
        ContextItem(content="pinned", tokens=1, pinned=True),
    ]
    pipeline = _pipeline(CompositeScorer([(RecencyScorer(), 1.0), (RelevanceScorer(), 1.0)]))
    report = pipeline.dry_run(items, ContextBudget(max_tokens=100, target_tokens=100), query="flight")
    relevance = {entry.item.content: entry.relevance for entry in report.included}
    assert relevance == {"my flight leaves Friday": 1.0, "garden party": 0.0, "pinned": None}
    assert report.notes == ("relevance: scored against the query 'flight'",)
    again = type(report).from_dict(report.to_dict())
    assert [entry.relevance for entry in again.included] == [entry.relevance for entry in report.included]
    assert again.notes == report.notes


def test_a_dry_run_scores_relevance_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []  # the number of texts of each call that scores relevance, either way
    by_items, by_columns = RelevanceScorer.score_all, RelevanceScorer.score_columns

    def items(self: RelevanceScorer, listed: Sequence[ContextItem]) -> list[float]:
        calls.append(len(listed))
        return by_items(self, listed)

    def columns(self: RelevanceScorer, batch: ItemColumns) -> list[float]:
        calls.append(batch.count)
        return by_columns(self, batch)

    monkeypatch.setattr(RelevanceScorer, "score_all", items)
    monkeypatch.setattr(RelevanceScorer, "score_columns", columns)
    items = _items(["my flight leaves Friday", "garden party", "flight delayed", "jazz"])
    pipeline = _pipeline(CompositeScorer([(RecencyScorer(), 1.0), (RelevanceScorer(neighbors=1), 1.0)]))
    report = pipeline.dry_run(items, ContextBudget(max_tokens=100, target_tokens=100), query="flight")
    assert calls == [4]  # Stage 2 alone: the report keeps the column it combined
    expected = RelevanceScorer("flight", neighbors=1).score_all(items)
    assert {entry.item.content: entry.relevance for entry in report.included} == {
        item.content: score for item, score in zip(items, expected, strict=True)
    }


def test_without_a_query_relevance_adds_nothing_and_the_report_says_so() -> None:
    items = [
        ContextItem(content=text, tokens=3, priority=priority)
        for text, priority in (("my flight leaves Friday", 1), ("garden party", 3), ("jazz", 2))
    ]
    budget = ContextBudget(max_tokens=6, target_tokens=6)
    with_term = _pipeline(CompositeScorer([(PriorityScorer(), 1.0), (RelevanceScorer(), 1.0)])).dry_run(
        items, budget
    )
    alone = _pipeline(PriorityScorer()).dry_run(items, budget)
    assert [entry.item.content for entry in alone.included] == ["garden party", "jazz"]
    # The weights stay as configured: every score is halved, so no ranking changes.
    assert [entry.item for entry in with_term.included] == [entry.item for entry in alone.included]
    assert [entry.score for entry in with_term.included] == [entry.score / 2 for entry in alone.included]
    assert all(entry.relevance == 0.0 for entry in with_term.included)
    assert "had no query" in with_term.notes[0]
    assert alone.notes == ()
    assert all(entry.relevance is None for entry in alone.included)


def test_texts_whose_lower_case_is_longer_are_scored_exactly() -> None:
    # "İ".lower() is two characters: the joined search must not shift the texts' offsets.
    contents = ["İİİ trip to İstanbul", "flight to istanbul", "İ", "garden flight"]
    assert bm25_scores("istanbul flight", contents) == pytest.approx(
        _reference_bm25("istanbul flight", contents), abs=1e-12
    )


@given(corpora, queries, st.integers(min_value=0, max_value=60))
def test_score_slice_selects_the_same_traced_and_untraced(
    contents: list[str], query: str, target: int
) -> None:
    items = _items(contents)
    pipeline = Pipeline(RelevanceScorer(), ScoreSlice(), ChronologicalPlacer())
    budget = ContextBudget(max_tokens=target, target_tokens=target)
    chosen = pipeline.run(items, budget, query=query)
    assert pipeline.dry_run(items, budget, query=query).items == chosen
    scores = RelevanceScorer(query).score_all(items)
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        first.setdefault(item.content, index)  # deduplication keeps the first of equal contents
    remaining = target
    expected = set()
    for index in sorted(first.values(), key=lambda index: (-scores[index], index)):
        if items[index].tokens <= remaining:
            remaining -= items[index].tokens
            expected.add(id(items[index]))
    assert {id(item) for item in chosen} == expected


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=64, max_size=150),
    st.integers(min_value=1, max_value=5),
    st.sampled_from([0.25, 0.5, 0.9, 1.0]),
)
def test_the_array_spread_is_the_plain_loop_float_for_float(
    scores: list[float], neighbors: int, weight: float
) -> None:
    pytest.importorskip("numpy")
    scorer = RelevanceScorer("x", neighbors=neighbors, neighbor_weight=weight)
    arrays = scorer._spread(scores)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_numeric, "numpy_module", lambda: None)
        plain = scorer._spread(scores)
    assert arrays == plain
