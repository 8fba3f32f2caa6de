"""The chat package gives the outputs recorded before its rebuild (``equality_cases.py``), case by case.

The agent rules changed some outcomes on purpose, and only those are left out: a latest turn that did
not fit (a ``BudgetOverflowError``, or a ``"turns"`` window that lost the transcript's last message)
and a window without a user message. A StableWindow case is compared up to its first such turn.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from tests.chat import equality_cases

RECORDED: dict[str, Any] = json.loads(equality_cases.FIXTURE.read_text(encoding="utf-8"))
RUNS = dict(equality_cases.cases())


def _agent_rules_apply(key: str, outcome: dict[str, Any]) -> bool:
    """Whether the agent rules decide this outcome now (from what the recorded outcome shows)."""
    if outcome.get("error") == "BudgetOverflowError":
        return True
    if "error" in outcome:
        return False
    if not outcome["user_kept"]:
        return True
    turns = "/turns/" in key or "/stable/turns/" in key
    return turns and not outcome["last_kept"]


def test_the_fixture_covers_every_case() -> None:
    assert sorted(RECORDED) == sorted(RUNS)


COMPARED = sorted(
    key for key, outcome in RECORDED.items() if "steps" in outcome or not _agent_rules_apply(key, outcome)
)


def test_most_cases_are_compared() -> None:
    assert len(COMPARED) > 0.6 * len(RECORDED)


@pytest.mark.parametrize("key", COMPARED)
def test_same_output_as_recorded(key: str) -> None:
    expected = RECORDED[key]
    actual = RUNS[key]()
    if "error" in expected and actual.get("error") == "BudgetOverflowError":
        return  # both refuse; a window without a question is now refused before the summary's reserve
    if "steps" in expected:
        for step, (before, now) in enumerate(zip(expected["steps"], actual["steps"], strict=True)):
            if _agent_rules_apply(key, before):
                return  # this turn and every later one (the window's state differs from here)
            assert now == before, f"turn {step}"
        return
    assert actual == expected
