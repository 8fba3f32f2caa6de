"""A chat report gives each unit the numbers its choice used, and scores nothing again
(docs/spec-notes.md, "A report reuses its choice's numbers")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from cupel.chat import StableWindow, select_messages
from cupel.diagnostics.report import SelectionReport
from cupel.scorers import RelevanceScorer
from cupel.scorers.columns import ItemColumns


def _history(turns: int = 30) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
    for turn in range(turns):
        said = "I bought a used tenor saxophone." if turn == 4 else f"Day {turn}: work, then errands."
        messages += [{"role": "user", "content": said}, {"role": "assistant", "content": f"Noted {turn}."}]
    return [*messages, {"role": "user", "content": "Which saxophone did I buy?"}]


@pytest.fixture
def relevance_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of texts of each call that scores relevance, through either entry point."""
    calls: list[int] = []
    by_columns = RelevanceScorer.score_columns
    by_items = RelevanceScorer.score_all

    def columns(self: RelevanceScorer, batch: ItemColumns) -> list[float]:
        calls.append(batch.count)
        return by_columns(self, batch)

    def items(self: RelevanceScorer, listed: Any) -> list[float]:
        calls.append(len(listed))
        return by_items(self, listed)

    monkeypatch.setattr(RelevanceScorer, "score_columns", columns)
    monkeypatch.setattr(RelevanceScorer, "score_all", items)
    return calls


def _read(report: SelectionReport) -> None:
    for entry in (*report.included, *report.excluded):
        assert entry.item.content is not None and entry.reason is not None


@pytest.mark.parametrize("langchain", [False, True])
def test_the_turns_report_scores_nothing_again(relevance_calls: list[int], langchain: bool) -> None:
    messages: list[Any] = _history()
    select: Callable[..., Any] = select_messages
    if langchain:
        pytest.importorskip("langchain_core")
        from tests.chat.equality_cases import to_langchain

        from cupel.chat.langchain import select_messages as select

        messages = to_langchain(messages)
    selection = select(messages, 120)  # the chat preset: a relevance term, query="auto"
    assert len(relevance_calls) == 1  # the older turns, once
    _read(selection.report)
    assert len(relevance_calls) == 1
    assert selection.report.notes == ("relevance: scored against the query 'Which saxophone did I buy?'",)


def test_a_last_window_report_scores_its_units_once(relevance_calls: list[int]) -> None:
    selection = select_messages(_history(), 120, strategy="last")
    assert relevance_calls == []  # the window is read from the end; nothing is ranked
    _read(selection.report)
    assert len(relevance_calls) == 1  # every unpinned unit, scores and relevance in one pass


def test_each_unit_of_an_older_turn_carries_its_turns_numbers(relevance_calls: list[int]) -> None:
    from cupel.chat import choose

    ranked: list[tuple[list[float], list[float] | None]] = []
    original = choose.scores_and_relevance

    def recorded(scorer: Any, batch: ItemColumns) -> tuple[list[float], list[float] | None]:
        result = original(scorer, batch)
        ranked.append(result)
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(choose, "scores_and_relevance", recorded)
        messages = _history()
        report = select_messages(messages, 120).report
    ((scores, relevance),) = ranked
    assert relevance is not None
    by_turn: dict[int, set[tuple[float, float | None]]] = {}
    for entry in (*report.included, *report.excluded):
        (index,) = entry.item.metadata["cupel:chat.indices"]
        if entry.relevance is None:  # pinned, or kept by the rules (the latest turn, the recent run)
            assert entry.score == 1.0 and entry in report.included
            assert index == 0 or index >= len(messages) - 5
        else:
            by_turn.setdefault((index - 1) // 2, set()).add((entry.score, entry.relevance))
    # Each older turn's two units share one pair, and the pairs are the ones the choice ranked by.
    assert all(len(pairs) == 1 for pairs in by_turn.values())
    candidates = sorted(zip(scores, relevance, strict=True))
    assert sorted(pair for pairs in by_turn.values() for pair in pairs) == candidates
    saxophone = by_turn[4].pop()
    assert saxophone[1] == max(relevance) > 0.0
    # The excluded, by the score their turn was ranked with.
    assert [entry.score for entry in report.excluded] == sorted(
        (entry.score for entry in report.excluded), reverse=True
    )


def test_a_summarized_entry_keeps_the_numbers_its_turn_was_ranked_with() -> None:
    from cupel.chat import Summarized

    summarized = select_messages(_history(), 160, summarize=True, summary_tokens=40).report
    told = [entry for entry in summarized.excluded if isinstance(entry.reason, Summarized)]
    assert told and all(entry.relevance is not None for entry in told)
    # The selection ran again in what the summary's reserve leaves: the same numbers as that one's.
    reserved = select_messages(_history(), 120).report
    numbers = {entry.item.content: (entry.score, entry.relevance) for entry in reserved.excluded}
    assert [(entry.score, entry.relevance) for entry in told] == [
        numbers[entry.item.content] for entry in told
    ]


def test_a_window_turn_that_appended_reports_no_relevance() -> None:
    window = StableWindow(3000)
    messages: list[dict[str, str]] = [{"role": "system", "content": "be brief"}]
    appended = 0
    for turn in range(12):
        messages.append({"role": "user", "content": f"question {turn} about the deploy webhook"})
        selection = window.select(list(messages))
        entries = selection.report.included + selection.report.excluded
        if not selection.compacted:
            appended += 1
            # Nothing was ranked on that turn, so no entry claims a relevance (it was never computed).
            assert {entry.relevance for entry in entries} == {None}
        messages.append({"role": "assistant", "content": f"answer {turn} about the deploy webhook"})
    assert appended
