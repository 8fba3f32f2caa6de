"""The chat package gives the outputs recorded before its rebuild (``equality_cases.py``), case by case.

The agent rules changed some outcomes on purpose, and only those are left out: a latest turn that did
not fit (a ``BudgetOverflowError``, or a ``"turns"`` window that lost the transcript's last message)
and a window without a user message. A StableWindow case is compared up to its first such turn. A
``"turns"`` report now gives each unit the numbers its choice used (docs/spec-notes.md, "A report
reuses its choice's numbers"), so there each entry's score, and the order of the excluded entries by
it, are left out; everything else of the entry is compared.
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
    if "/turns/" in key:
        actual, expected = _without_scores(actual), _without_scores(expected)
    assert actual == expected


def _without_scores(outcome: dict[str, Any]) -> dict[str, Any]:
    """``outcome`` with each report entry's score (its third field) left out, the excluded entries
    in a fixed order."""
    found = dict(outcome)
    for name in ("included", "excluded"):
        if name in found:
            entries = [entry[:2] + entry[3:] for entry in found[name]]
            found[name] = sorted(entries, key=json.dumps) if name == "excluded" else entries
    return found
