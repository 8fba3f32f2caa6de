"""Baselines every report carries: the recent window, BM25-greedy, seeded random and the oracle bound.

Each works on a case's *units* -- the atoms a selection can keep (one item, or a chat message together
with its tool results) -- given as token costs, and returns the kept element indices.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from cupel.scorers.relevance import bm25_scores

__all__ = ["bm25_units", "oracle_knapsack", "random_units", "recent_items", "recent_messages"]


def recent_messages(roles: Sequence[str], tokens: Sequence[int], max_tokens: int) -> list[int]:
    """LangChain ``trim_messages(strategy="last", include_system=True, start_on="human")`` semantics.

    Keep a leading system message; then the longest run of latest messages whose tokens fit what is
    left; then drop from its oldest end until it starts on a user message. Message indices, ascending.
    """
    if not roles:
        return []
    start = 1 if roles[0] == "system" else 0
    remaining = max(0, max_tokens - (tokens[0] if start else 0))
    first = len(roles)
    used = 0
    while first > start and used + tokens[first - 1] <= remaining:
        first -= 1
        used += tokens[first]
    while first < len(roles) and roles[first] != "user":
        first += 1
    return [*range(start), *range(first, len(roles))]


def recent_items(order: Sequence[int], tokens: Sequence[int], max_tokens: int) -> list[int]:
    """The newest contiguous run of items (``order`` is oldest first) that fits ``max_tokens``."""
    kept: list[int] = []
    used = 0
    for element in reversed(order):
        if used + tokens[element] > max_tokens:
            break
        used += tokens[element]
        kept.append(element)
    kept.reverse()
    return kept


def bm25_units(query: str, texts: Sequence[str], unit_tokens: Sequence[int], max_tokens: int) -> list[int]:
    """Units greedily by BM25 score against ``query`` (RelevanceScorer's BM25), each kept if it still fits.

    Equal scores (units without a query term, for one) go newest first. Unit indices, ascending.
    """
    scores = bm25_scores(query, texts)
    return _fill(sorted(range(len(texts)), key=lambda unit: (-scores[unit], -unit)), unit_tokens, max_tokens)


def random_units(unit_tokens: Sequence[int], max_tokens: int, seed: int) -> list[int]:
    """Units in a seeded random order, each kept if it still fits; unit indices, ascending."""
    order = list(range(len(unit_tokens)))
    random.Random(seed).shuffle(order)
    return _fill(order, unit_tokens, max_tokens)


def _fill(order: Sequence[int], unit_tokens: Sequence[int], max_tokens: int) -> list[int]:
    """The units of ``order``, in turn, each kept if it still fits; unit indices, ascending."""
    kept: list[int] = []
    used = 0
    for unit in order:
        if used + unit_tokens[unit] <= max_tokens:
            used += unit_tokens[unit]
            kept.append(unit)
    return sorted(kept)


def oracle_knapsack(
    unit_tokens: Sequence[int], unit_values: Mapping[int, float], max_tokens: int
) -> list[int]:
    """The units maximising the total value within ``max_tokens`` (0/1 knapsack, exact).

    Only units with value take part. Keeps the Pareto frontier of (tokens, value) states, so the work
    grows with the number of distinct useful subsets, not with the budget. Ties prefer fewer tokens,
    then the earliest units.
    """
    units = sorted(
        unit for unit, value in unit_values.items() if value > 0 and unit_tokens[unit] <= max_tokens
    )
    if sum(unit_tokens[unit] for unit in units) <= max_tokens:
        return units
    # state: tokens -> (value, chosen units); a state survives only if no cheaper one is at least as good.
    frontier: list[tuple[int, float, tuple[int, ...]]] = [(0, 0.0, ())]
    for unit in units:
        cost, value = unit_tokens[unit], unit_values[unit]
        grown = [
            (tokens + cost, total + value, (*chosen, unit))
            for tokens, total, chosen in frontier
            if tokens + cost <= max_tokens
        ]
        merged = sorted(frontier + grown, key=lambda state: (state[0], -state[1]))
        frontier = []
        best = -1.0
        for state in merged:
            if state[1] > best + 1e-12:
                frontier.append(state)
                best = state[1]
    top = max(state[1] for state in frontier)
    return list(next(state for state in frontier if state[1] >= top - 1e-12)[2])
