"""evaluate(): policies and baselines on small cases with known outcomes; determinism across workers."""

from __future__ import annotations

import json

import pytest

from cupel import ContextItem, Pipeline, Policy, get_preset
from cupel.errors import InvalidConfigurationError
from cupel.eval import evaluate
from cupel.eval.cases import case_from_dict
from cupel.eval.generator import generate_cases
from cupel.eval.loaders import shipped_cases
from cupel.placers import ChronologicalPlacer
from cupel.scorers import PriorityScorer
from cupel.slicers import GreedySlice

ITEMS = case_from_dict(
    {
        "id": "items",
        "tags": ["rag"],
        "items": [
            {
                "id": "old",
                "content": "x" * 40,
                "tokens": 10,
                "priority": 9,
                "timestamp": "2024-01-01T00:00:00Z",
            },
            {
                "id": "mid",
                "content": "y" * 40,
                "tokens": 10,
                "priority": 1,
                "timestamp": "2024-01-02T00:00:00Z",
            },
            {
                "id": "new",
                "content": "z" * 40,
                "tokens": 10,
                "priority": 2,
                "timestamp": "2024-01-03T00:00:00Z",
            },
        ],
        "gold": ["old"],
    }
)
PRIORITY = Policy(PriorityScorer(), GreedySlice(), ChronologicalPlacer())


def _mean(result: object, selector: str, budget: int, metric: str = "recall_items") -> float | None:
    return result.summary(selector, budget, metric).mean  # type: ignore[attr-defined]


def test_policies_and_baselines_on_an_item_case() -> None:
    result = evaluate([ITEMS], {"priority": PRIORITY}, [10, 30], resamples=0)
    assert result.selectors == ("priority", "recent", "bm25", "random", "oracle")
    # Budget 10: priority keeps "old" (gold); the recent window keeps "new"; the oracle keeps "old".
    assert _mean(result, "priority", 10) == 1.0
    assert _mean(result, "recent", 10) == 0.0
    assert _mean(result, "oracle", 10) == 1.0
    assert _mean(result, "priority", 10, "budget_use") == 1.0
    # Budget 30: everything fits.
    assert all(_mean(result, selector, 30) == 1.0 for selector in result.selectors)
    assert result.share_of_oracle("recent", 10) == 0.0
    assert _mean(result, "priority", 10, "valid") is None  # items have no provider validity


def test_chat_case_runs_through_the_chat_conversion() -> None:
    case = case_from_dict(
        {
            "id": "chat",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "My flight is LH 438 on Friday."},
                {"role": "assistant", "content": "Noted: LH 438 on Friday."},
                {
                    "role": "user",
                    "content": "Unrelated: what's a good pasta recipe with lots of detail please?",
                },
                {
                    "role": "assistant",
                    "content": "Cacio e pepe: pecorino, pepper, pasta water, toss quickly." * 3,
                },
                {"role": "user", "content": "When is my flight?"},
            ],
            "gold": [1],
        }
    )
    result = evaluate([case], ["chat"], [60, 400], resamples=0)
    assert _mean(result, "oracle", 60) == 1.0
    assert _mean(result, "chat", 400) == 1.0
    assert _mean(result, "recent", 400) == 1.0
    assert _mean(result, "chat", 400, "valid") == 1.0
    assert _mean(result, "recent", 60) == 0.0  # the newest messages crowd the flight out


def test_duplicates_are_interchangeable() -> None:
    case = case_from_dict(
        {
            "id": "dup",
            "items": [
                {"id": "a", "content": "the answer", "tokens": 5, "timestamp": "2024-01-01T00:00:00Z"},
                {"id": "b", "content": "the answer", "tokens": 5, "timestamp": "2024-01-02T00:00:00Z"},
            ],
            "gold": ["a"],
        }
    )
    result = evaluate([case], ["chat"], [5], resamples=0)
    assert _mean(result, "recent", 5) == 1.0  # kept copy "b"


def test_pipeline_errors_are_recorded_not_raised() -> None:
    case = case_from_dict(
        {"id": "pinned", "items": [{"id": "p", "content": "p", "tokens": 50, "pinned": True}], "gold": ["p"]}
    )
    result = evaluate([case], ["chat"], [10], resamples=0)
    assert result.errors("chat", 10) == 1
    run = result.runs_for("chat", 10)[0]
    assert run.metrics.error is not None and "Pinned items require 50 tokens" in run.metrics.error
    assert run.metrics.recall_items == 0.0


def test_same_result_with_workers_and_with_a_pipeline() -> None:
    cases = shipped_cases()[:6]
    one = evaluate(cases, ["chat", "rag"], [300], resamples=50)
    two = evaluate(cases, ["chat", "rag"], [300], resamples=50, jobs=2)
    assert one.to_dict(timings=False) == two.to_dict(timings=False)
    # A pipeline carries no chat settings: compare through a preset that has none.
    piped = evaluate(cases, {"rag": Pipeline.from_policy(get_preset("rag"))}, [300], resamples=50)
    assert piped.to_dict(timings=False)["summary"]["rag"] == one.to_dict(timings=False)["summary"]["rag"]


def test_bad_arguments_are_one_line_errors() -> None:
    with pytest.raises(InvalidConfigurationError, match="budgets: a budget must be > 0 tokens, got 0"):
        evaluate([ITEMS], ["chat"], [0])
    with pytest.raises(InvalidConfigurationError, match="label 'recent' is used twice or names a baseline"):
        evaluate([ITEMS], {"recent": "chat"}, [10])
    with pytest.raises(InvalidConfigurationError, match="cases: no cases"):
        evaluate([], ["chat"], [10])
    with pytest.raises(TypeError, match=r"cases\[0\] must be an EvalCase"):
        evaluate([ContextItem("x", 1)], ["chat"], [10])  # type: ignore[list-item]


def test_generator_is_seeded_and_plants_its_dependencies() -> None:
    first = generate_cases(8, seed=5)
    assert [case.to_dict() for case in first] == [case.to_dict() for case in generate_cases(8, seed=5)]
    assert [case.to_dict() for case in first] != [case.to_dict() for case in generate_cases(8, seed=6)]
    session = first[0]
    assert session.messages is not None
    contents = [str(message.get("content")) for message in session.messages]
    gold = sorted(session.gold)
    assert len(gold) == 3
    assert "Correction:" in contents[gold[-1]] or any("Correction:" in contents[g] for g in gold)
    # The stated-then-corrected fact itself is not gold.
    stated = next(n for n, text in enumerate(contents) if text.startswith("FYI,"))
    assert stated not in session.gold
    rag = first[3]
    assert rag.items is not None and rag.item_ids is not None
    assert [rag.item_ids[n] for n in rag.gold] == ["current"]
    sizes = [len(json.dumps(case.to_dict())) for case in generate_cases(12, seed=1)]
    assert max(sizes) > 3 * min(sizes)
