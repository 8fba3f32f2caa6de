"""Baselines: the oracle against brute force, the recent window against LangChain's trim_messages."""

from __future__ import annotations

import itertools
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from cupel.eval.baselines import oracle_knapsack, random_units, recent_items, recent_messages
from tests.profiles import examples


def _brute_force(tokens: list[int], values: dict[int, float], limit: int) -> float:
    best = 0.0
    useful = [unit for unit, value in values.items() if value > 0]
    for size in range(len(useful) + 1):
        for chosen in itertools.combinations(useful, size):
            if sum(tokens[unit] for unit in chosen) <= limit:
                best = max(best, math.fsum(values[unit] for unit in chosen))
    return best


@settings(max_examples=examples(80), deadline=None)
@given(
    st.lists(st.integers(0, 60), min_size=1, max_size=9).flatmap(
        lambda tokens: st.tuples(
            st.just(tokens),
            st.dictionaries(
                st.integers(0, len(tokens) - 1), st.sampled_from([0.5, 1.0, 2.0, 3.0]), max_size=9
            ),
            st.integers(0, 200),
        )
    )
)
def test_oracle_matches_brute_force(case: tuple[list[int], dict[int, float], int]) -> None:
    tokens, values, limit = case
    chosen = oracle_knapsack(tokens, values, limit)
    assert sum(tokens[unit] for unit in chosen) <= limit
    assert len(set(chosen)) == len(chosen)
    assert math.fsum(values[unit] for unit in chosen) == _brute_force(tokens, values, limit)


def test_oracle_prefers_the_cheaper_of_equal_selections() -> None:
    assert oracle_knapsack([50, 10, 40], {0: 1.0, 1: 1.0, 2: 1.0}, 55) in ([1, 2], [2, 1])
    assert oracle_knapsack([50, 10], {0: 1.0, 1: 1.0}, 10) == [1]
    assert oracle_knapsack([5, 5], {}, 100) == []


def test_recent_items_is_the_newest_contiguous_run() -> None:
    tokens = [10, 50, 10, 10]
    assert recent_items([0, 1, 2, 3], tokens, 30) == [2, 3]
    # It stops at the first item that does not fit, even if older ones would.
    assert recent_items([0, 1, 2, 3], tokens, 40) == [2, 3]
    assert recent_items([3, 2, 1, 0], tokens, 60) == [1, 0]


def test_random_units_is_seeded_and_fits() -> None:
    tokens = [30, 10, 20, 40, 5]
    first = random_units(tokens, 50, seed=7)
    assert first == random_units(tokens, 50, seed=7)
    assert sum(tokens[unit] for unit in first) <= 50
    assert any(random_units(tokens, 50, seed=seed) != first for seed in range(20))


def _transcripts() -> st.SearchStrategy[tuple[list[str], list[int], int, bool]]:
    roles = st.lists(st.sampled_from(["user", "assistant"]), min_size=1, max_size=12)
    return roles.flatmap(
        lambda body: st.tuples(
            st.just(body),
            st.lists(st.integers(1, 40), min_size=len(body) + 1, max_size=len(body) + 1),
            st.integers(0, 300),
            st.booleans(),
        )
    )


@settings(max_examples=examples(80), deadline=None)
@given(_transcripts())
def test_recent_messages_equals_langchain_trim_messages_last(
    case: tuple[list[str], list[int], int, bool],
) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, trim_messages

    body, costs, limit, with_system = case
    roles = (["system"] if with_system else []) + body
    costs = costs[: len(roles)]
    classes = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    messages = [classes[role](content=f"m{index}", id=str(index)) for index, role in enumerate(roles)]
    cost_of = {message.id: cost for message, cost in zip(messages, costs, strict=True)}
    kept = trim_messages(
        messages,
        max_tokens=limit,
        strategy="last",
        token_counter=lambda batch: sum(cost_of[message.id] for message in batch),
        include_system=True,
        start_on="human",
    )
    assert recent_messages(roles, costs, limit) == [int(message.id) for message in kept]
