"""Evaluation measures what users run: chat cases through select_messages with the case's query, the
bm25 baseline, and LoCoMo evidence split on any separator."""

from __future__ import annotations

import pytest

from cupel import ChronologicalPlacer, GreedySlice, Policy, RelevanceScorer
from cupel.chat import select_messages
from cupel.eval import evaluate
from cupel.eval.baselines import bm25_units
from cupel.eval.cases import case_from_dict
from cupel.eval.evaluate import case_query
from cupel.eval.loaders import locomo_cases, locomo_skipped, shipped_cases


def _locomo(evidence: list[object]) -> list[dict[str, object]]:
    turns = [
        {"speaker": "A" if n % 2 == 0 else "B", "dia_id": f"D1:{n + 1}", "text": f"turn {n}"}
        for n in range(4)
    ]
    return [
        {
            "sample_id": "s",
            "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": turns},
            "qa": [
                {"question": f"q{n}", "answer": "a", "evidence": entry} for n, entry in enumerate(evidence)
            ],
        }
    ]


def test_locomo_evidence_is_split_on_any_separator_and_skips_are_counted() -> None:
    data = _locomo([["D1:1 D1:3"], ["D1:2;D1:4"], ["D1:1, D1:2"], ["D9:9"], [], ["D1:4\tD1:1"]])
    cases = locomo_cases(data)
    assert [sorted(case.gold) for case in cases] == [[0, 2], [1, 3], [0, 1], [0, 3]]
    assert locomo_skipped(data) == {"no evidence id names a turn": 1, "no evidence listed": 1}
    assert locomo_skipped(_locomo([["D1:1"]])) == {}


def test_locomo_transcripts_open_with_a_user_message_whoever_speaks_first() -> None:
    data = _locomo([["D1:2"]])
    conversation = data[0]["conversation"]
    assert isinstance(conversation, dict)
    for turn in conversation["session_1"]:
        turn["speaker"] = "B" if turn["speaker"] == "A" else "A"  # speaker_b opens
    (case,) = locomo_cases(data)
    assert case.messages is not None
    assert [message["role"] for message in case.messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert case.messages[0]["content"] == "B: turn 0"


def test_bm25_units_are_greedy_by_score_and_fill_newest_first() -> None:
    texts = ["flight to Oslo", "garden", "my flight is LH 438 on Friday", "jazz"]
    # The two flight texts first (the shorter scores higher), then the newest unmatched one that fits.
    assert bm25_units("when is my flight", texts, [3, 1, 7, 1], 11) == [0, 2, 3]
    assert bm25_units("", texts, [3, 1, 7, 1], 2) == [1, 3]


def test_the_query_of_a_case() -> None:
    chat = case_from_dict({"id": "c", "messages": [{"role": "user", "content": "Where?"}], "gold": [0]}, "c")
    assert case_query(chat) == "Where?"
    asked = case_from_dict(
        {"id": "q", "question": "Why?", "messages": [{"role": "user", "content": "x"}], "gold": [0]}, "q"
    )
    assert case_query(asked) == "Why?"


@pytest.mark.parametrize("strategy", [None, "last", "messages"])
def test_chat_cases_run_through_select_messages(strategy: str | None) -> None:
    cases = [case for case in shipped_cases() if case.is_chat][:6]
    result = evaluate(cases, ["chat"], [400], resamples=0, strategy=strategy)
    for case in cases:
        assert case.messages is not None
        # What a user of the chat preset gets, asked the case's question.
        selection = select_messages(
            list(case.messages),
            400,
            "chat",
            strategy=strategy,  # type: ignore[arg-type]
            query=case_query(case),
        )
        kept = {
            index
            for index, message in enumerate(case.messages)
            if any(message is m for m in selection.messages)
        }
        gold = dict(case.gold)
        expected = sum(weight for element, weight in gold.items() if element in kept) / sum(gold.values())
        (run,) = [run for run in result.runs_for("chat", 400) if run.case == case.id]
        assert run.metrics.recall_items == pytest.approx(expected)


def test_a_relevance_policy_gets_the_case_question() -> None:
    relevance = Policy(RelevanceScorer(), GreedySlice(), ChronologicalPlacer())
    case = case_from_dict(
        {
            "id": "rag",
            "question": "When does the flight leave?",
            "items": [
                {"id": "a", "content": "The flight leaves at nine", "tokens": 10},
                {"id": "b", "content": "The garden party starts at noon", "tokens": 10},
            ],
            "gold": ["a"],
        },
        "rag",
    )
    result = evaluate([case], {"relevance": relevance}, [10], resamples=0)
    assert result.summary("relevance", 10, "recall_items").mean == 1.0
    assert result.summary("bm25", 10, "recall_items").mean == 1.0
