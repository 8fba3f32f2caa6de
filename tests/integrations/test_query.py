"""The framework hooks hand selection the transcript's auto query (``query="auto"``)."""

from __future__ import annotations

import pytest

from cupel import Policy
from cupel.policy import chat
from cupel.scorers import CompositeScorer, RelevanceScorer

core = pytest.importorskip("langchain_core.messages")


def _asking() -> Policy:
    preset = chat()
    assert isinstance(preset.scorer, CompositeScorer)
    return preset.replace(scorer=CompositeScorer([*preset.scorer.entries, (RelevanceScorer(), 5.0)]))


def test_the_langchain_trimmer_keeps_what_the_latest_question_asks_for() -> None:
    from cupel.chat.langchain import select_messages
    from cupel.integrations.langchain import message_trimmer

    history = []
    for day in range(12):
        said = "I bought a used tenor saxophone." if day == 1 else f"Day {day}: work, then errands."
        history += [core.HumanMessage(said), core.AIMessage("Noted.")]
    history.append(core.HumanMessage("Which saxophone did I buy?"))
    kept = message_trimmer(80, _asking()).invoke(history)
    assert history[2] in kept
    assert kept == list(select_messages(history, 80, _asking()).messages)
    assert history[2] not in select_messages(history, 80, _asking(), query=None).messages
