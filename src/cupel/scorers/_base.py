"""Shared plumbing for scorers: a small base class and the whole-list dispatch the pipeline uses."""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Sequence
from operator import lt

from cupel import _numeric
from cupel._floats import to_float
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.model import ContextItem

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

    from cupel.protocols import Scorer
    from cupel.scorers.columns import ItemColumns


class ScorerBase(ABC):
    """Base class of the built-in scorers. ``score_all`` defaults to one ``score`` call per item."""

    __slots__ = ()

    @abstractmethod
    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        """Return the item's score against ``all_items`` (which contains ``item``)."""

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        """Return ``[score(item, items) for item in items]``, possibly faster."""
        return [self.score(item, items) for item in items]

    def score_columns(self, batch: ItemColumns) -> Any:
        """``score_all`` of a column batch (:mod:`cupel.scorers.columns`); by default of its items."""
        return self.score_all(batch.items())


def score_items(scorer: Scorer, items: Sequence[ContextItem]) -> list[float]:
    """Score every item of ``items`` against the whole list, preferring the scorer's ``score_all``.

    A scorer defined outside cupel is checked: one number per item, or a :class:`CupelTypeError` that
    names the scorer and the item (a string such as ``"0.5"`` or ``None`` is not a score).
    """
    batch = getattr(scorer, "score_all", None)
    name = type(scorer).__name__
    if batch is None:
        scores: object = [scorer.score(item, items) for item in items]
        method = "score"
    else:
        scores = batch(items)
        method = "score_all"
    if _is_builtin(scorer):
        assert isinstance(scores, list)
        return scores
    if not isinstance(scores, Sequence) or isinstance(scores, str | bytes):
        raise CupelTypeError(f"scorer {name}.{method} must return a list of numbers, got {scores!r:.80}")
    if len(scores) != len(items):
        raise CupelError(f"scorer {name}.{method} returned {len(scores)} scores for {len(items)} items")
    checked = list(scores)
    for index, value in enumerate(checked):
        if type(value) is not float:
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise CupelTypeError(
                    f"scorer {name}.{method} returned {value!r:.40} for item {index} "
                    f"({_preview(items[index].content)}); a score must be a number"
                )
            checked[index] = to_float(value) if isinstance(value, int) else float(value)
    return checked


def column_of(scorer: Scorer, batch: ItemColumns) -> Any:
    """The scorer's scores of ``batch``: a list, or a float64 array where a built-in ranks with numpy
    (CompositeScorer combines arrays without building lists)."""
    method = getattr(scorer, "score_columns", None)
    if method is not None and _is_builtin(scorer):
        return method(batch)
    return score_items(scorer, batch.items())


def score_columns(scorer: Scorer, batch: ItemColumns) -> list[float]:
    """Score every item of ``batch`` against the whole batch: what ``scorer.score_all`` gives its items.

    The one scoring entry point of the pipeline (Stage 2) and of chat selection.
    """
    return listed(column_of(scorer, batch))


def _is_builtin(component: object) -> bool:
    """Built-in components are trusted to honour their protocol; outputs of others are checked."""
    return type(component).__module__.startswith("cupel.")


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= 30 else flat[:29] + "…")


def check_weight(owner: str, name: str, value: object, *, allow_zero: bool) -> float:
    """Validate a configured weight: a finite real number, positive (or non-negative)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CupelTypeError(f"{owner}: {name} must be a number, got {value!r}")
    weight = to_float(value)
    if math.isnan(weight) or math.isinf(weight):
        raise InvalidConfigurationError(f"{owner}: {name} must be finite, got {value!r}")
    if weight < 0.0 or (weight == 0.0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise InvalidConfigurationError(f"{owner}: {name} must be {bound}, got {value!r}")
    return weight


def check_unit_interval(owner: str, name: str, value: object) -> float:
    """Validate a configured score in [0.0, 1.0]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CupelTypeError(f"{owner}: {name} must be a number, got {value!r}")
    number = to_float(value)
    if not 0.0 <= number <= 1.0:
        raise InvalidConfigurationError(f"{owner}: {name} must be in [0.0, 1.0], got {value!r}")
    return number


def rank_scores(keys: Sequence[int | None]) -> list[float]:
    """Rank-based scores shared by RecencyScorer and PriorityScorer, in O(N log N).

    An item's rank is the number of keyed items with a strictly smaller key; the score is
    ``rank / (keyed - 1)``, 1.0 for a lone keyed item and 0.0 for an item without a key.
    """
    fast = _numeric.rank_scores(keys)
    return _plain_rank_scores(keys) if fast is None else fast


def rank_column(keys: list[int | None], source: Sequence[ContextItem], name: str | None = None) -> Any:
    """:func:`rank_scores` as a float64 array when numpy ranks the keys, else as a list.

    With ``name``, the current run remembers the converted keys as that column of ``source`` (see
    :mod:`cupel._run_columns`), for a later stage that needs the same keys.
    """
    values = _numeric.key_values(keys)
    if values is not None:
        if name is not None:
            from cupel._run_columns import remember  # loaded with the first run, not with cupel

            remember(source, name, values)
        ranks = _numeric.rank_array(values)
        if ranks is not None:
            return ranks
    return _plain_rank_scores(keys)


def listed(scores: Any) -> list[float]:
    """Whole-list scores as a list: an array becomes a Column that keeps it."""
    return scores if isinstance(scores, list) else _numeric.column(scores)


def _plain_rank_scores(keys: Sequence[int | None]) -> list[float]:
    count = len(keys)
    if count > 1 and None not in keys and all(map(lt, keys[:-1], keys[1:])):  # type: ignore[arg-type]
        # Keys already strictly ascending (a conversation's positions, for recency): the rank is the
        # position, with no sort or table.
        return [rank / (count - 1) for rank in range(count)]
    present = sorted(key for key in keys if key is not None)
    count = len(present)
    if count <= 1:
        return [0.0 if key is None else 1.0 for key in keys]
    first_rank: dict[int, int] = {}
    for rank, key in enumerate(present):
        if key not in first_rank:
            first_rank[key] = rank
    denominator = count - 1
    return [0.0 if key is None else first_rank[key] / denominator for key in keys]


def rank_score(key: int | None, keys: Sequence[int | None]) -> float:
    """The per-item form of :func:`rank_scores`, exactly as the spec's pseudocode computes it."""
    if key is None:
        return 0.0
    count = 0
    rank = 0
    for other in keys:
        if other is None:
            continue
        count += 1
        if other < key:
            rank += 1
    if count <= 1:
        return 1.0
    return rank / (count - 1)


def bind_query(scorer: Scorer, query: str | None) -> Scorer:
    """``scorer`` answering ``query``: through its ``with_query`` when it has one, else unchanged.

    ``None`` leaves every scorer as configured (a fixed query stays). Composite and scaled scorers
    bind their children, so a query reaches a relevance term however deeply it is nested.
    """
    if query is None:
        return scorer
    if not isinstance(query, str):
        raise CupelTypeError(f"query must be a string or None, got {type(query).__name__}")
    method = getattr(scorer, "with_query", None)
    if method is None:
        return scorer
    bound: Scorer = method(query)
    return bound
