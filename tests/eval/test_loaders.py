"""Loaders read fixtures written in the published LongMemEval and LoCoMo layouts."""

from __future__ import annotations

from pathlib import Path

from cupel.eval.loaders import load_any, load_locomo, load_longmemeval

FIXTURES = Path(__file__).parent / "fixtures"


def test_longmemeval_marked_turns_are_gold_and_abstentions_are_skipped() -> None:
    cases = load_longmemeval(FIXTURES / "longmemeval.json")
    assert [case.id for case in cases] == ["e47becba", "gpt4_2655b836"]
    first = cases[0]
    assert first.tags == ("longmemeval", "single-session-user")
    assert first.messages is not None
    assert dict(first.gold) == {2: 1.0}
    assert "Business Administration" in first.messages[2]["content"]
    assert first.messages[-1] == {
        "role": "user",
        "content": "(2023/05/30 (Tue) 23:40) What degree did I graduate with?",
    }
    # Without has_answer marks, every turn of the answer sessions is gold.
    assert dict(cases[1].gold) == {2: 1.0, 3: 1.0}


def test_locomo_one_case_per_question_with_evidence() -> None:
    cases = load_locomo(FIXTURES / "locomo.json")
    assert [case.id for case in cases] == ["conv-26-q1", "conv-26-q2", "conv-26-q3"]
    first, second, third = cases
    assert first.messages is not None
    assert first.messages[0] == {
        "role": "user",
        "content": "[1:56 pm on 8 May, 2023] Caroline: Hey Mel! I went to an LGBTQ support group "
        "yesterday and it was so powerful.",
    }
    assert first.messages[2]["content"].endswith("[shares a photo: a painting of a sunrise over a lake]")
    assert first.messages[-1] == {
        "role": "user",
        "content": "When did Caroline go to the LGBTQ support group?",
    }
    assert dict(first.gold) == {0: 1.0}
    assert dict(second.gold) == {1: 1.0, 2: 1.0}  # "D1:3; D1:2" names two turns
    assert dict(third.gold) == {4: 1.0}
    assert first.tags == ("locomo", "category-2")


def test_load_any_tells_the_formats_apart() -> None:
    assert [case.id for case in load_any(FIXTURES / "longmemeval.json")][:1] == ["e47becba"]
    assert len(load_any(FIXTURES / "locomo.json")) == 3
