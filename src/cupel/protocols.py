"""The extension points: Scorer, Slicer and Placer protocols (spec: Scorer, Slicer and Placer Interfaces).

Any object with the right method plugs into a :class:`~cupel.pipeline.Pipeline`; subclassing is never
required. Scorers may also offer ``score_all(items)``, a whole-list form the pipeline prefers because it
lets relative scorers avoid quadratic work. A scorer that reads the caller's query offers
``with_query(query)`` (:class:`QueryScorer`); an :class:`Embedder` maps texts to vectors for
RelevanceScorer's hybrid mode and the assembly store.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from cupel.model import ContextBudget, ContextItem, ScoredItem

__all__ = ["BatchScorer", "Embedder", "Placer", "QueryScorer", "Scorer", "Slicer", "TimeProvider", "Vector"]

Vector = Sequence[float]


@runtime_checkable
class Scorer(Protocol):
    """Computes one item's relevance against the full scoreable list (spec: Scorer Interface)."""

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        """Return the item's score; ``all_items`` includes ``item`` itself."""
        ...


@runtime_checkable
class BatchScorer(Scorer, Protocol):
    """A scorer that can also score a whole list at once.

    ``score_all(items)[i]`` must equal ``score(items[i], items)``.
    """

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        """Return one score per item, in input order."""
        ...


@runtime_checkable
class QueryScorer(Scorer, Protocol):
    """A scorer that reads the query of a call (``Pipeline.run(..., query=...)``).

    ``with_query(query)`` returns a scorer bound to ``query``: ``self`` when nothing changes, never a
    mutated ``self``. The pipeline binds once per call, before Stage 2 (docs/spec-notes.md, "Relevance").
    """

    def with_query(self, query: str) -> Scorer:
        """This scorer, answering ``query``."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to vectors of one fixed dimension; must be deterministic for reproducible retrieval."""

    def __call__(self, texts: list[str]) -> Sequence[Vector]: ...


@runtime_checkable
class Slicer(Protocol):
    """Selects a budget-fitting subset of score-sorted items (spec: Slicer Interface)."""

    def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
        """Return the selected items (a subset of ``scored``'s items, none twice)."""
        ...


@runtime_checkable
class Placer(Protocol):
    """Orders the final selection (spec: Placer Interface)."""

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        """Return the same items in presentation order."""
        ...


@runtime_checkable
class TimeProvider(Protocol):
    """Supplies the current instant to time-dependent scorers (spec: DecayScorer, TimeProvider)."""

    def now(self) -> datetime:
        """Return the current time as a timezone-aware datetime."""
        ...
