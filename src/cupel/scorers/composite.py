"""CompositeScorer (spec: Scorers, CompositeScorer)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from cupel import _numeric
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextItem
from cupel.protocols import Scorer
from cupel.scorers._base import ScorerBase, _is_builtin, bind_query, check_weight, column_of, score_items

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

    from cupel.scorers.columns import ItemColumns


class CompositeScorer(ScorerBase):
    """Weighted average of child scorers; weights are relative and normalised to sum to 1.0.

    ``CompositeScorer([(RecencyScorer(), 3), (PriorityScorer(), 1)])``. Children may themselves be
    composite or scaled; a cycle (by identity) is rejected at construction. ``score_all`` asks each
    child for its whole-list scores once and combines them in child order.
    """

    __slots__ = ("entries", "normalized_weights", "scorers")

    entries: tuple[tuple[Scorer, float], ...]
    scorers: tuple[Scorer, ...]
    normalized_weights: tuple[float, ...]

    def __init__(self, entries: Iterable[tuple[Scorer, float]]) -> None:
        checked: list[tuple[Scorer, float]] = []
        for index, entry in enumerate(entries):
            try:
                scorer, raw_weight = entry
            except (TypeError, ValueError):
                raise CupelTypeError(
                    f"CompositeScorer: entries[{index}] must be a (scorer, weight) pair, got {entry!r}"
                ) from None
            if scorer is None or not callable(getattr(scorer, "score", None)):
                raise CupelTypeError(
                    f"CompositeScorer: entries[{index}] scorer must have a score() method, got {scorer!r}"
                )
            weight = check_weight("CompositeScorer", f"entries[{index}] weight", raw_weight, allow_zero=False)
            checked.append((scorer, weight))
        if not checked:
            raise InvalidConfigurationError("CompositeScorer: at least one scorer entry is required")
        weights = [weight for _, weight in checked]
        total = sum(weights)
        if not math.isfinite(total):
            # Finite weights can overflow as a sum (1e308 + 1e308); only ratios matter, so scale first.
            largest = max(weights)
            weights = [weight / largest for weight in weights]
            total = sum(weights)
        self.entries = tuple(checked)
        self.scorers = tuple(scorer for scorer, _ in checked)
        self.normalized_weights = tuple(weight / total for weight in weights)
        _detect_cycles(self.scorers)

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        result = 0.0
        for scorer, weight in zip(self.scorers, self.normalized_weights, strict=True):
            result += scorer.score(item, all_items) * weight
        return result

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return self.combine([_child_column(scorer, items) for scorer in self.scorers])

    def score_columns(self, batch: ItemColumns) -> Any:
        """The children's column scores of the batch, combined as ``score_all`` combines them."""
        return self.combine([column_of(scorer, batch) for scorer in self.scorers])

    def combine(self, columns: Sequence[Sequence[float]]) -> list[float]:
        """The weighted sum of the children's whole-list scores, one column per child in child order
        (a list, or a float64 array when numpy computed it)."""
        fast = _numeric.weighted_sum(columns, self.normalized_weights)
        if fast is not None:
            return fast
        result = [0.0] * len(columns[0])
        for column, weight in zip(columns, self.normalized_weights, strict=True):
            result = [total + score * weight for total, score in zip(result, column, strict=True)]
        return result

    def with_query(self, query: str) -> CompositeScorer:
        """The same weights over children bound to ``query`` (``self`` when no child reads a query)."""
        bound = [bind_query(scorer, query) for scorer in self.scorers]
        if all(new is old for new, old in zip(bound, self.scorers, strict=True)):
            return self
        return CompositeScorer(zip(bound, (weight for _, weight in self.entries), strict=True))

    def __repr__(self) -> str:
        inner = ", ".join(f"({scorer!r}, {weight!r})" for scorer, weight in self.entries)
        return f"CompositeScorer([{inner}])"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CompositeScorer) and self.entries == other.entries

    def __hash__(self) -> int:
        return hash(self.entries)


def _child_column(scorer: Scorer, items: Sequence[ContextItem]) -> Sequence[float]:
    """A child's whole-list scores; a built-in child that ranks with numpy hands over its array."""
    column = getattr(scorer, "_score_column", None)
    if column is not None and _is_builtin(scorer):
        scores: Sequence[float] = column(items)
        return scores
    return score_items(scorer, items)


def _children(node: object) -> tuple[object, ...]:
    from cupel.scorers.scaled import ScaledScorer

    if isinstance(node, CompositeScorer):
        return node.scorers
    if isinstance(node, ScaledScorer):
        return (node.inner,)
    return ()


def _detect_cycles(roots: Sequence[object]) -> None:
    """DETECT-CYCLES from the spec: depth-first search by reference identity."""
    visited: set[int] = set()
    in_path: set[int] = set()

    def visit(node: object) -> None:
        key = id(node)
        if key in visited:
            if key in in_path:
                raise InvalidConfigurationError(
                    "CompositeScorer: cycle detected: scorer appears in its own dependency graph"
                )
            return
        visited.add(key)
        in_path.add(key)
        for child in _children(node):
            visit(child)
        in_path.discard(key)

    for root in roots:
        visit(root)
