"""Older turns scored and sliced column-wise: what the policy's pipeline decides, without an item per turn.

Under ``"turns"`` the turns older than the recent run compete by the policy's scorer and slicer
(:func:`cupel.chat.whole_turns.select_turns` builds one item per turn and runs a pipeline over them).
For the built-in scorers whose scores read only what a turn record holds, the same scores come from
whole columns here: Recency ranks the turns' first message positions (their synthetic timestamps have
that order), Priority finds none (chat items have no priority), Kind and Tag look up each distinct
kind or tag tuple once, Composite combines its children's columns as it combines their scores. Any
other scorer, a slicer without ``slice_indices``, or an installed tracing hook gives ``None``: the
caller builds the items and runs the pipeline. Deduplication never drops a candidate (every rendering
opens with its own message position), so it is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from cupel import _numeric
from cupel._score_order import descending_indices
from cupel.diagnostics.hooks import active_sink
from cupel.model import ContextBudget, ContextItem, ContextKind
from cupel.pipeline import Pipeline, compute_effective_budget
from cupel.protocols import Scorer
from cupel.scorers import CompositeScorer, KindScorer, PriorityScorer, RecencyScorer, TagScorer
from cupel.scorers._base import rank_scores

__all__ = ["KINDS", "CandidateColumns", "ColumnRun", "choose_older", "column_scores"]

K = TypeVar("K", bound=Hashable)


KINDS = (ContextKind.MESSAGE, ContextKind.TOOL_OUTPUT, ContextKind.SYSTEM_PROMPT)
"""The kinds a candidate can have, by the code :meth:`CandidateColumns.kinds` gives."""


class CandidateColumns:
    """The candidates (older turns, then unpinned system units) as columns, some built on demand.

    ``kinds()`` gives each candidate's kind as its position in :data:`KINDS`; ``tags()`` its tags;
    ``presence(tag)`` whether ``tag`` is among them, or ``None`` when only ``tags()`` can tell.
    """

    __slots__ = ("keys", "kinds", "presence", "tags", "tokens")

    def __init__(
        self,
        keys: Sequence[int],
        tokens: list[int],
        kinds: Callable[[], list[int]],
        tags: Callable[[], list[tuple[str, ...]]],
        presence: Callable[[str], list[bool] | None],
    ) -> None:
        self.keys = keys
        self.tokens = tokens
        self.kinds = kinds
        self.tags = tags
        self.presence = presence


def _by_value(scorer: Scorer, values: list[K], item_of: Callable[[K], ContextItem]) -> list[float]:
    """Scores of a scorer that reads one field of the item alone: one score per distinct value."""
    known: dict[K, float] = {}
    for value in dict.fromkeys(values):
        item = item_of(value)
        known[value] = scorer.score(item, (item,))
    return list(map(known.__getitem__, values))


def column_scores(scorer: Scorer, columns: CandidateColumns) -> list[float] | None:
    """What ``scorer.score_all`` gives the candidates' items, or ``None`` for a scorer not read here."""
    kind = type(scorer)
    if kind is CompositeScorer:
        assert isinstance(scorer, CompositeScorer)
        parts: list[list[float]] = []
        for child in scorer.scorers:
            column = column_scores(child, columns)
            if column is None:
                return None
            parts.append(column)
        return scorer.combine(parts)
    if kind is RecencyScorer:
        return rank_scores(columns.keys)
    if kind is PriorityScorer:
        return rank_scores([None] * len(columns.tokens))
    if kind is KindScorer:
        return _by_value(scorer, columns.kinds(), lambda code: ContextItem("-", 0, kind=KINDS[code]))
    if kind is TagScorer:
        assert isinstance(scorer, TagScorer)
        if len(scorer.tag_weights) == 1 and scorer.case_sensitive:
            # One weighted tag: an item scores by whether it has it (tags are distinct), nothing else.
            (tag,) = scorer.tag_weights
            present = columns.presence(tag)
            if present is not None:
                return _by_value(scorer, present, lambda has: ContextItem("-", 0, tags=(tag,) if has else ()))
        return _by_value(scorer, columns.tags(), lambda value: ContextItem("-", 0, tags=value))
    return None


@dataclass(frozen=True, slots=True)
class ColumnRun:
    """What the pipeline decided over the candidate columns: scores, score order and the chosen."""

    columns: CandidateColumns
    scores: list[float]
    order: list[int]
    chosen: list[int]
    budget: ContextBudget


def choose_older(pipeline: Pipeline, columns: CandidateColumns, remaining: int) -> ColumnRun | None:
    """The candidates the pipeline keeps in ``remaining`` tokens (positions, any order), or ``None``."""
    slice_indices = getattr(pipeline.slicer, "slice_indices", None)
    if slice_indices is None or active_sink() is not None:
        return None
    scores = column_scores(pipeline.scorer, columns)
    if scores is None:
        return None
    # Stage 4 as the pipeline sorts, then its index-list slice (Pipeline._prepare and _select).
    survivors = list(range(len(scores)))
    order = _numeric.order_by_score(scores, survivors)
    if order is None:
        order = descending_indices(survivors, scores)
    tokens = columns.tokens
    budget = compute_effective_budget(ContextBudget(remaining, remaining), 0)
    chosen: list[int] = slice_indices(order, tokens, scores, budget)
    if sum(map(tokens.__getitem__, chosen)) > remaining:
        return None  # the pipeline's overflow stage would act on this: leave it to the pipeline
    return ColumnRun(columns, scores, order, chosen, budget)
