"""The C-level per-item passes agree with the plain loops they replace (kinds, deduplication)."""

from __future__ import annotations

import pickle

from hypothesis import given
from hypothesis import strategies as st

from cupel import ContextItem, ContextKind, ContextSource, KindScorer
from cupel._kinds import folded_kinds
from cupel._prepared import deduplicate
from cupel.model import ascii_fold

KIND_SPELLINGS = ["Message", "message", "MESSAGE", "Document", "tool_output", "Ünïcode", "ÜNÏCODE"]


def test_kinds_built_from_the_same_string_are_one_object() -> None:
    assert ContextKind("Ticket") is ContextKind("Ticket")
    assert ContextKind("Ticket") is not ContextKind("ticket")  # equal, but each keeps its spelling
    assert str(ContextKind("ticket")) == "ticket"
    assert pickle.loads(pickle.dumps(ContextKind("Ticket"))) is ContextKind("Ticket")
    # A name of another type is never looked up: it would match a differently spelled value.
    source = ContextSource("Ticket")
    assert type(ContextKind(source)) is ContextKind
    assert str(ContextKind(ContextKind("TICKET"))) == "TICKET"


@given(st.lists(st.sampled_from(KIND_SPELLINGS), max_size=30))
def test_folded_kinds_equal_folding_each_item(spellings: list[str]) -> None:
    # Fresh kind objects and shared ones alike.
    items = [
        ContextItem(f"c{index}", 1, kind=ContextKind(kind) if index % 2 else kind)
        for index, kind in enumerate(spellings)
    ]
    assert folded_kinds(items) == [ascii_fold(item.kind) for item in items]
    ascii_only = [item for item in items if item.kind.isascii()]
    assert folded_kinds(ascii_only) == [ascii_fold(item.kind) for item in ascii_only]


@given(st.lists(st.sampled_from(KIND_SPELLINGS), max_size=30))
def test_kind_scorer_scores_the_list_as_it_scores_each_item(spellings: list[str]) -> None:
    scorer = KindScorer({"message": 0.5, "Ünïcode": 0.9})
    items = [ContextItem(f"c{index}", 1, kind=kind) for index, kind in enumerate(spellings)]
    assert scorer.score_all(items) == [scorer.score(item, items) for item in items]


def _plain_survivors(contents: list[str], scores: list[float]) -> list[int]:
    """Stage 3 as one loop: per content the highest score, then the lowest index."""
    best: dict[str, int] = {}
    for index, content in enumerate(contents):
        kept = best.get(content)
        if kept is None or scores[index] > scores[kept]:
            best[content] = index
    return [index for index, content in enumerate(contents) if best[content] == index]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c", "d", "e"]) | st.text(min_size=1, max_size=3),
            st.sampled_from([0.0, 0.5, 1.0, float("nan")]) | st.floats(allow_nan=False),
        ),
        max_size=40,
    )
)
def test_deduplication_survivors_equal_the_plain_loop(pairs: list[tuple[str, float]]) -> None:
    contents = [content for content, _ in pairs]
    scores = [score for _, score in pairs]
    items = [ContextItem(content, 1) for content in contents]
    survivors, dropped, winners = deduplicate(items, scores)
    assert survivors == _plain_survivors(contents, scores)
    kept = set(survivors)
    assert dropped == [index for index in range(len(items)) if index not in kept]
    assert len(winners) == len(dropped)
    assert all(
        contents[winner] == contents[index] and winner in kept
        for index, winner in zip(dropped, winners, strict=True)
    )
