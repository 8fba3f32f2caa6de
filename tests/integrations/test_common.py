"""The helpers every integration shares: relevance hints, tool-schema budgets, Responses item units."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cupel import ContextBudget
from cupel.integrations._common import relevance_hints, schema_text, shrink_budget, tool_schema_tokens


def test_scores_in_zero_one_are_kept_and_others_rescaled() -> None:
    assert relevance_hints([0.2, None, 1.0]) == [0.2, None, 1.0]
    assert relevance_hints([2.0, 4.0, 3.0, None, math.nan]) == [0.0, 1.0, 0.5, None, None]
    assert relevance_hints([-3.0, -3.0]) == [1.0, 1.0]
    assert relevance_hints([]) == []


@given(st.lists(st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)), max_size=20))
def test_hints_are_in_zero_one_and_keep_the_order_of_the_scores(scores: list[float | None]) -> None:
    hints = relevance_hints(scores)
    assert len(hints) == len(scores)
    for score, hint in zip(scores, hints, strict=True):
        assert (hint is None) == (score is None or not math.isfinite(score))
        assert hint is None or 0.0 <= hint <= 1.0
    pairs = [(s, h) for s, h in zip(scores, hints, strict=True) if h is not None and s is not None]
    for first, first_hint in pairs:
        for second, second_hint in pairs:
            if first < second:
                assert first_hint <= second_hint


def test_tool_schemas_shrink_max_and_target_alike() -> None:
    schema = {"name": "weather", "description": "Weather for a city.", "parameters": {"type": "object"}}
    cost = tool_schema_tokens([schema], len)
    assert cost == len(schema_text(schema))
    shrunk = shrink_budget(ContextBudget(1000, 800, output_reserve=100), cost)
    assert (shrunk.max_tokens, shrunk.target_tokens, shrunk.output_reserve) == (1000 - cost, 800 - cost, 100)
    assert shrink_budget(500, 0) == ContextBudget(500, 500)
    assert shrink_budget(50, 80) == ContextBudget(0, 0)


def test_units_flatten_back_to_the_items_in_order() -> None:
    pytest.importorskip("agents")
    from cupel.integrations.openai_agents import item_units

    kinds = ["user", "reasoning", "function_call", "function_call_output", "assistant", "web_search_call"]

    @given(st.lists(st.sampled_from(kinds), max_size=15))
    def check(sequence: list[str]) -> None:
        items = [
            {"role": kind, "content": "x"}
            if kind in ("user", "assistant")
            else {"type": kind, "call_id": "c"}
            for kind in sequence
        ]
        units = item_units(items)
        assert [item for unit in units for item in unit] == items
        for unit in units:
            # Only a run of model-output items is ever grouped.
            assert len(unit) == 1 or all(item.get("role") != "user" for item in unit)
            assert len(unit) == 1 or all(item.get("type") != "function_call_output" for item in unit)

    check()
