"""A saved WindowState is advice, not authority: a resumed window never overspends the budget it is
resumed with and never sends an invalid transcript, whatever the state says, and a state that
contradicts its transcript is dropped for a fresh start, with a report event and a logged warning."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

import pytest
from tests.chat.test_stable_window import ends, session

from cupel.chat import StableWindow, message_token_counts, validate_transcript
from cupel.chat.validate import RESUME_STAGE
from cupel.chat.window_state import positions_of, ranges_of

BUDGET = 1500


MESSAGES = session(120)
SIZES = ends(MESSAGES)
SAVED_AT = 30


def saved(at: int = SAVED_AT, **settings: Any) -> tuple[dict[str, Any], int]:
    """The window's state after turn ``at``, and the transcript length it has seen."""
    window = StableWindow(BUDGET, **settings)
    for size in SIZES[: at + 1]:
        window.select(MESSAGES[:size])
    data = window.to_dict()
    assert data is not None
    return data, SIZES[at]


def resume_all(data: dict[str, Any], at: int = SAVED_AT, **settings: Any) -> list[Any]:
    """Every turn after turn ``at``, each from the state the previous one saved (a stateless service)."""
    selections = []
    for size in SIZES[at + 1 :]:
        window = StableWindow(BUDGET, state=data, **settings)
        selections.append(window.select(MESSAGES[:size]))
        data = window.to_dict()  # type: ignore[assignment]
    return selections


def assert_within_budget_and_valid(selections: list[Any]) -> None:
    for selection in selections:
        messages = list(selection.messages)
        assert sum(message_token_counts(messages)) <= BUDGET
        assert selection.tokens <= BUDGET
        assert validate_transcript(messages) == []


def kept_positions(data: dict[str, Any]) -> list[int]:
    return positions_of([tuple(pair) for pair in data["kept"]])


def set_limit(data: dict[str, Any]) -> None:
    data["limit"] = 10**12


def zero_tokens(data: dict[str, Any]) -> None:
    data["tokens"] = 0


def start_at_a_tool_result(data: dict[str, Any]) -> None:
    results = [p for p in range(data["seen"]) if MESSAGES[p]["role"] == "tool"]
    data["kept"] = [[results[-3], data["seen"]]]


def drop_a_tool_result(data: dict[str, Any]) -> None:
    positions = kept_positions(data)
    first = next(p for p in positions if MESSAGES[p]["role"] == "tool")
    data["kept"] = [list(pair) for pair in ranges_of(p for p in positions if p != first)]


def orphan_summary(data: dict[str, Any]) -> None:
    data["summary"] = {"role": "tool", "tool_call_id": "call_none", "content": "what happened before"}
    data["summary_at"] = 1


TAMPERS: dict[str, Callable[[dict[str, Any]], None]] = {
    "limit 10**12": set_limit,
    "tokens 0": zero_tokens,
    "kept starts at a tool result": start_at_a_tool_result,
    "kept drops a tool result": drop_a_tool_result,
    "summary is an orphan tool result": orphan_summary,
}


@pytest.mark.parametrize("strategy", ["turns", "last", "messages"])
def test_an_untouched_state_resumes_without_a_word(strategy: str, caplog: pytest.LogCaptureFixture) -> None:
    data, _ = saved(strategy=strategy)
    with caplog.at_level(logging.WARNING, logger="cupel"):
        selections = resume_all(data, strategy=strategy)
    assert caplog.records == []
    assert not selections[0].compacted  # the first resumed turn appended
    assert all(event.stage != RESUME_STAGE for s in selections for event in s.report.events)
    assert_within_budget_and_valid(selections)


@pytest.mark.parametrize("name", list(TAMPERS))
def test_a_tampered_state_starts_afresh_and_says_so(name: str, caplog: pytest.LogCaptureFixture) -> None:
    data, _ = saved()
    original = copy.deepcopy(data)
    TAMPERS[name](data)
    tampered = copy.deepcopy(data)
    with caplog.at_level(logging.WARNING, logger="cupel"):
        selections = resume_all(data)
    assert data == tampered  # the caller's state is read, not changed
    assert data != original
    assert_within_budget_and_valid(selections)
    # Reported once: on the first resumed turn, which compacted afresh.
    [record] = [record for record in caplog.records if record.name == "cupel"]
    assert record.levelno == logging.WARNING
    assert "does not match its transcript" in record.getMessage()
    first = selections[0]
    assert first.compacted and first.prefix == 0
    events = [event for event in first.report.events if event.stage == RESUME_STAGE]
    assert len(events) == 1 and events[0].message is not None
    assert events[0].message in record.getMessage()
    later = [event for s in selections[1:] for event in s.report.events if event.stage == RESUME_STAGE]
    assert later == []


def test_the_resumed_budget_wins_over_the_saved_limit(caplog: pytest.LogCaptureFixture) -> None:
    data, _ = saved()
    # Saved at 1500 tokens, resumed on a budget of 900: the state's limit is not the resumed window's.
    with caplog.at_level(logging.WARNING, logger="cupel"):
        window = StableWindow(900, state=data)
        selection = window.select(MESSAGES[: SIZES[SAVED_AT + 1]])
    assert sum(message_token_counts(list(selection.messages))) <= 900
    assert selection.compacted
    assert window.state is not None and window.state.limit <= 900


def test_a_summary_state_resumes_and_a_tampered_summary_does_not(caplog: pytest.LogCaptureFixture) -> None:
    settings: dict[str, Any] = {"summarize": True, "summary_tokens": 100}
    at = SAVED_AT
    data, _ = saved(at, **settings)
    while data["summary"] is None:
        at += 1
        data, _ = saved(at, **settings)
    with caplog.at_level(logging.WARNING, logger="cupel"):
        assert_within_budget_and_valid(resume_all(copy.deepcopy(data), at, **settings))
    assert caplog.records == []
    data["summary"] = {**data["summary"], "content": data["summary"]["content"] + " and much more " * 50}
    with caplog.at_level(logging.WARNING, logger="cupel"):
        assert_within_budget_and_valid(resume_all(data, at, **settings))
    assert len(caplog.records) == 1 and "tokens" in caplog.records[0].getMessage()
