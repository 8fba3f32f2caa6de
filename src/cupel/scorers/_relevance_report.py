"""What a report says about relevance: each entry's relevance score and a note on the query
(docs/spec-notes.md, "Relevance")."""

from __future__ import annotations

from collections.abc import Sequence

from cupel.model import ContextItem
from cupel.protocols import Scorer
from cupel.scorers._base import ScorerBase, column_of, listed, score_columns
from cupel.scorers.relevance import RelevanceScorer, query_terms

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

    from cupel.diagnostics.report import SelectionReport
    from cupel.scorers.columns import ItemColumns

__all__ = ["explain_relevance", "find_relevance", "relevance_note", "scores_and_relevance"]


def find_relevance(scorer: Scorer) -> RelevanceScorer | None:
    """The first RelevanceScorer in ``scorer``'s tree (depth first, children in order), or None."""
    from cupel.scorers.composite import CompositeScorer
    from cupel.scorers.scaled import ScaledScorer

    pending: list[object] = [scorer]
    while pending:
        node = pending.pop()
        if isinstance(node, RelevanceScorer):
            return node
        if isinstance(node, CompositeScorer):
            pending.extend(reversed(node.scorers))
        elif isinstance(node, ScaledScorer):
            pending.append(node.inner)
    return None


def relevance_note(relevance: RelevanceScorer) -> str:
    """What a report says about the relevance term of its run."""
    query = relevance.query
    if query is None:
        return (
            "relevance: RelevanceScorer had no query, so every item's relevance is 0.0 and it changed "
            "no ranking (give the call a query)"
        )
    shown = query if len(query) <= 80 else query[:79] + "…"
    if not query_terms(query, stemming=relevance.stemming, stop_words=relevance.stop_words):
        return f"relevance: the query {shown!r} has no terms besides stop words; every item scored 0.0"
    return f"relevance: scored against the query {shown!r}"


def explain_relevance(report: SelectionReport, scorer: Scorer, by_id: dict[int, float]) -> SelectionReport:
    """``report`` with every scored entry's relevance (``by_id``: the relevance term's column of the
    run, by item identity, kept when Stage 2 scored: :func:`scores_and_relevance`) and a note on the
    query, when ``scorer`` has a relevance term; otherwise ``report`` itself."""
    relevance = find_relevance(scorer)
    if relevance is None:
        return report
    from cupel.diagnostics.report import with_relevance

    return with_relevance(report, by_id, [relevance_note(relevance)])


def scores_and_relevance(scorer: Scorer, batch: ItemColumns) -> tuple[list[float], list[float] | None]:
    """:func:`~cupel.scorers._base.score_columns` of ``batch``, and the column of ``scorer``'s relevance
    term (:func:`find_relevance`) those scores were combined from; ``None`` without one.

    One scoring pass: the term is scored once, through the same code, and its column kept, so a
    report can say what the choice used without scoring anything again.
    """
    relevance = find_relevance(scorer)
    if relevance is None:
        return score_columns(scorer, batch), None
    kept = _Kept(relevance)
    scores = score_columns(_replaced(scorer, relevance, kept), batch)
    assert kept.column is not None  # the term is in the tree, so it was scored
    return scores, kept.column


class _Kept(ScorerBase):
    """A relevance term that keeps the whole-list column it gives (one scoring at a time)."""

    __slots__ = ("column", "inner")

    def __init__(self, inner: RelevanceScorer) -> None:
        self.inner = inner
        self.column: list[float] | None = None

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        return self.inner.score(item, all_items)

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        self.column = self.inner.score_all(items)
        return self.column

    def score_columns(self, batch: ItemColumns) -> Any:
        column = column_of(self.inner, batch)
        self.column = listed(column)
        return column


def _replaced(node: Scorer, target: RelevanceScorer, kept: _Kept) -> Scorer:
    """``node`` with ``target`` (by identity) replaced by ``kept``: the same weights, rebuilt only
    along the path to it (the tree :func:`find_relevance` searched)."""
    from cupel.scorers.composite import CompositeScorer
    from cupel.scorers.scaled import ScaledScorer

    if node is target:
        return kept
    if isinstance(node, CompositeScorer):
        children = [_replaced(child, target, kept) for child in node.scorers]
        if all(new is old for new, old in zip(children, node.scorers, strict=True)):
            return node
        weights = [weight for _, weight in node.entries]
        return CompositeScorer(zip(children, weights, strict=True))
    if isinstance(node, ScaledScorer):
        inner = _replaced(node.inner, target, kept)
        return node if inner is node.inner else ScaledScorer(inner)
    return node
