"""Binding the query of a call to a scorer tree (docs/spec-notes.md, "Relevance")."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from cupel.protocols import Scorer

__all__ = ["bind_query"]


def bind_query(scorer: Scorer, query: str | None) -> Scorer:
    """``scorer`` answering ``query``: through its ``with_query`` when it has one, else unchanged.

    ``None`` leaves every scorer as configured (a fixed query stays). Composite and scaled scorers
    bind their children, so a query reaches a relevance term however deeply it is nested.
    """
    if query is None:
        return scorer
    method = getattr(scorer, "with_query", None)
    if method is None:
        return scorer
    bound: Scorer = method(query)
    return bound
