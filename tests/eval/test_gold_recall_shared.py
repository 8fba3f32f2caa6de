"""One definition of gold recall: `cupel eval` and `cupel replay` score every session alike.

Cases full of identical contents (the policies deduplicate them, so only one copy can be kept) are
scored by :func:`cupel.eval.evaluate` and by replay's partition task; every gold metric must agree.
"""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from cupel.distributed.partition import GOLD_METRICS, RawSession, ReplayPlan, replay_records
from cupel.distributed.replay import policy_documents
from cupel.eval import case_from_dict, evaluate
from cupel.eval.metrics import interchangeable
from tests.profiles import examples


@st.composite
def cases(draw: st.DrawFn) -> dict[str, object]:
    contents = draw(st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta"]), min_size=1, max_size=7))
    items = [
        {
            "id": f"i{n}",
            "content": content,
            "tokens": draw(st.integers(1, 40)),
            "priority": draw(st.integers(0, 9)),
        }
        for n, content in enumerate(contents)
    ]
    gold = draw(st.lists(st.sampled_from([item["id"] for item in items]), min_size=1, unique=True))
    return {"id": "case", "items": items, "gold": gold}


@settings(max_examples=examples(30), deadline=None)
@given(record=cases(), budget=st.integers(10, 120), policy=st.sampled_from(["rag", "chat"]))
def test_replay_and_eval_agree_on_every_gold_metric(
    record: dict[str, object], budget: int, policy: str
) -> None:
    evaluated = evaluate([case_from_dict(record)], [policy], [budget], resamples=0)
    (run,) = evaluated.runs_for(policy, budget)
    plan = ReplayPlan(policy_documents([policy]), ((str(budget), {"maxTokens": budget}),))
    (row,) = replay_records([RawSession("s.jsonl", 1, json.dumps(record))], plan)
    assert row["error"] is None, row["error"]
    for name in GOLD_METRICS:
        expected = run.metrics.value(name)
        assert (math.isnan(row[name]) and expected is None) or row[name] == expected, name


def test_identical_elements_count_once_with_their_highest_weight() -> None:
    messages = [
        {"role": "user", "content": "same"},
        {"role": "assistant", "content": "same"},  # another role: not a copy
        {"role": "user", "content": "same"},
        {"role": "user", "content": [{"type": "text", "text": "same"}]},  # not plain text: never a copy
    ]
    canon, gold = interchangeable(messages, {0: 1.0, 2: 3.0, 3: 1.0}, chat=True)
    assert canon == [0, 1, 0, 3]
    assert gold == {0: 3.0, 3: 1.0}
