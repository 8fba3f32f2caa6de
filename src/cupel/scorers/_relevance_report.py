"""What a report says about relevance: each entry's relevance score and a note on the query
(docs/spec-notes.md, "Relevance")."""

from __future__ import annotations

from collections.abc import Sequence

from cupel.model import ContextItem
from cupel.protocols import Scorer
from cupel.scorers.relevance import RelevanceScorer, query_terms

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from cupel.diagnostics.report import SelectionReport

__all__ = ["explain_relevance", "find_relevance", "relevance_note"]


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


def explain_relevance(
    report: SelectionReport, scorer: Scorer, items: Sequence[ContextItem]
) -> SelectionReport:
    """``report`` with every scored entry's relevance and a note on the query, when ``scorer`` has a
    relevance term; otherwise ``report`` itself.

    The relevance column is recomputed over the run's scoreable items (the same list, in the same
    order, as Stage 2 scored), so it equals the column the run combined.
    """
    relevance = find_relevance(scorer)
    if relevance is None:
        return report
    from cupel.diagnostics.report import with_relevance

    scoreable = [item for item in items if not item.pinned and item.tokens >= 0]
    scores = relevance.score_all(scoreable)
    by_id = {id(item): score for item, score in zip(scoreable, scores, strict=True)}
    return with_relevance(report, by_id, [relevance_note(relevance)])
