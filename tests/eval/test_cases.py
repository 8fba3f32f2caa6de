"""The case format: reading, one-line errors, the round trip, the schema and the shipped cases."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cupel.eval.cases import CaseFormatError, case_from_dict, read_cases
from cupel.eval.loaders import shipped_cases, shipped_cases_path
from cupel.eval.schema import CASE_SCHEMA

ROOT = Path(__file__).resolve().parents[2]

CHAT = {
    "id": "c1",
    "tags": ["chat"],
    "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    "gold": [0, {"index": 1, "weight": 2}],
}
ITEMS = {
    "id": "i1",
    "items": [{"id": "a", "content": "alpha beta"}, {"id": "b", "content": "x", "tokens": 7}],
    "gold": ["b"],
}


def test_chat_and_item_cases_read() -> None:
    chat = case_from_dict(CHAT)
    assert chat.is_chat and dict(chat.gold) == {0: 1.0, 1: 2.0}
    items = case_from_dict(ITEMS)
    assert items.items is not None
    assert [item.tokens for item in items.items] == [3, 7]  # "alpha beta" counted at chars/4
    assert dict(items.gold) == {1: 1.0}


@pytest.mark.parametrize("case", [CHAT, ITEMS])
def test_round_trip(case: dict[str, object]) -> None:
    once = case_from_dict(case).to_dict()
    assert case_from_dict(once).to_dict() == once


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"gold": [5]}, "cases: line 1 (c1): gold[0]: no message index 5"),
        ({"gold": []}, "cases: line 1 (c1): gold must be a non-empty array, got []"),
        (
            {"gold": [{"index": 0, "weight": 0}]},
            "cases: line 1 (c1): gold[0].weight must be a finite number > 0, got 0",
        ),
        ({"gold": [0, 0]}, "cases: line 1 (c1): gold[1]: 0 is listed twice"),
        ({"items": []}, "cases: line 1 (c1): give exactly one of 'messages' or 'items'"),
        (
            {"provider": "cohere"},
            "cases: line 1 (c1): provider must be one of openai, anthropic, got 'cohere'",
        ),
        ({"extra": 1}, "cases: line 1 (c1): unknown field(s) 'extra'"),
        (
            {"messages": [{"content": "no role"}]},
            "cases: line 1 (c1): messages[0] must be an object with a string 'role'",
        ),
    ],
)
def test_errors_name_the_line_case_and_field(change: dict[str, object], message: str) -> None:
    with pytest.raises(CaseFormatError) as caught:
        read_cases(json.dumps({**CHAT, **change}))
    assert str(caught.value) == message


def test_item_errors_and_duplicate_ids() -> None:
    with pytest.raises(CaseFormatError, match=r"items\[1\]\.id 'a' is not unique"):
        case_from_dict({**ITEMS, "items": [{"id": "a", "content": "x"}, {"id": "a", "content": "y"}]})
    with pytest.raises(CaseFormatError, match=r"gold\[0\]: no item id 'zz'"):
        case_from_dict({**ITEMS, "gold": ["zz"]})
    with pytest.raises(CaseFormatError, match="line 2: case id 'c1' is used twice"):
        read_cases(json.dumps(CHAT) + "\n" + json.dumps(CHAT))
    with pytest.raises(CaseFormatError, match="invalid JSON at line 1, column 2"):
        read_cases("{nope")


def test_shipped_cases_follow_the_schema_and_cover_four_tasks() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(CASE_SCHEMA)
    lines = shipped_cases_path().read_text(encoding="utf-8").splitlines()
    for line in lines:
        validator.validate(json.loads(line))
    cases = shipped_cases()
    assert len(cases) >= 40
    kinds = {case.tags[0] for case in cases}
    assert kinds == {"chat", "agent", "rag", "code-review"}
    assert all(sum(case.tags[0] == kind for case in cases) >= 10 for kind in kinds)


def test_schema_rejects_what_the_reader_rejects() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(CASE_SCHEMA)
    assert validator.is_valid(CHAT) and validator.is_valid(ITEMS)
    assert not validator.is_valid({**CHAT, "extra": 1})
    assert not validator.is_valid({**CHAT, "gold": ["a"]})
    assert not validator.is_valid({**CHAT, **{"items": ITEMS["items"]}})


def test_shipped_file_is_what_the_builder_writes(tmp_path: Path) -> None:
    script = ROOT / "examples" / "eval" / "build_cases.py"
    rendered = subprocess.run(
        [sys.executable, str(script), "--stdout"], capture_output=True, text=True, check=True
    ).stdout
    assert rendered == shipped_cases_path().read_text(encoding="utf-8")
