"""The default chat path on LoCoMo (read from the shared data directory; skipped where it is absent).

A sample of the dev split's questions (every 10th), the history before each and the question last,
cl100k tokens: ``select_messages(messages, budget)`` keeps more evidence than BM25-greedy, with
``query=None`` at least the recent window's, and every window is a valid conversation. The full
measurement is ``benchmarks/locomo_dev.py`` (docs/eval.md, "Relevance on the LoCoMo dev split").
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cupel.chat import ChatSession, message_token_counts, select_messages, validate_transcript
from cupel.eval.baselines import bm25_units, recent_messages
from cupel.eval.loaders import load_locomo
from cupel.tokens import counter_from_name

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("LOCOMO", ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"))
BUDGETS = (1000, 4000)


def _recall(kept: list[int], gold: set[int]) -> float:
    return len(gold.intersection(kept)) / len(gold)


@pytest.mark.skipif(not DATA.is_file(), reason=f"LoCoMo not found at {DATA}")
def test_the_default_chat_path_beats_bm25_and_without_a_query_the_recent_window() -> None:
    counter = counter_from_name("cl100k_base")
    cases = load_locomo(DATA)[::10]
    session = ChatSession()  # the questions of a conversation share its messages: count them once
    counted: dict[int, int] = {}  # and so does this test, by message identity (the cases hold them)
    totals = {name: dict.fromkeys(BUDGETS, 0.0) for name in ("chat", "chat, no query", "bm25", "recent")}
    for case in cases:
        assert case.messages is not None and case.question is not None
        messages = list(case.messages)
        positions = {id(message): index for index, message in enumerate(messages)}
        fresh = [message for message in messages if id(message) not in counted]
        counted.update(zip(map(id, fresh), message_token_counts(fresh, counter=counter), strict=True))
        tokens = [counted[id(message)] for message in messages]
        gold = set(case.gold)
        last = len(messages) - 1
        texts = [str(message["content"]) for message in messages]
        for budget in BUDGETS:
            for name, query in (("chat", "auto"), ("chat, no query", None)):
                selection = select_messages(messages, budget, counter=counter, query=query, session=session)
                assert validate_transcript(list(selection.messages), "openai") == [], case.id
                kept = [positions[id(message)] for message in selection.messages]
                totals[name][budget] += _recall(kept, gold)
            chosen = bm25_units(case.question, texts[:last], tokens[:last], budget - tokens[last])
            totals["bm25"][budget] += _recall(chosen, gold)
            roles = [str(message["role"]) for message in messages]
            totals["recent"][budget] += _recall(recent_messages(roles, tokens, budget), gold)
    for budget in BUDGETS:
        assert totals["chat"][budget] > totals["bm25"][budget], (budget, totals)
        assert totals["chat, no query"][budget] >= totals["recent"][budget], (budget, totals)
