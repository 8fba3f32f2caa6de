"""policy.schema.json is generated from the registry, and the schema and the loader agree.

Every example policy in the docs validates with both; spellings the loader reads (any letter case,
``-`` for ``_``) validate too; documents the loader rejects for a reason JSON Schema can express are
rejected by the schema as well.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import tomli
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from cupel.policy import PolicyFileError, loads_policy, policy_from_dict, policy_schema, policy_to_dict
from cupel.policy._schema import SCHEMA_PATH, generate_schema, schema_text
from tests.policy.strategies import CLOCK, policies
from tests.profiles import examples

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(toml|json)\n(.*?)^```", re.DOTALL | re.MULTILINE)
POLICY_KEYS = {"scorers", "slicer", "placer", "extends", "overflow_strategy", "deduplication"}

VALIDATOR = Draft202012Validator(policy_schema())


def schema_errors(document: Any) -> list[str]:
    return [error.message for error in VALIDATOR.iter_errors(document)]


def doc_policies() -> list[tuple[str, dict[str, Any]]]:
    """Every TOML/JSON policy in README.md, docs/*.md and examples/*.toml, with where it was found."""
    found: list[tuple[str, dict[str, Any]]] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            language, body = match.groups()
            document = tomli.loads(body) if language == "toml" else json.loads(body)
            if isinstance(document, dict) and POLICY_KEYS & set(document):
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{path.relative_to(ROOT)}:{line}", document))
    for path in sorted((ROOT / "examples").glob("*.toml")):
        found.append((str(path.relative_to(ROOT)), tomli.loads(path.read_text(encoding="utf-8"))))
    return found


def test_shipped_schema_is_the_generated_one() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), (
        "policy.schema.json is stale: run python -m cupel.policy._schema"
    )
    assert policy_schema() == generate_schema()
    Draft202012Validator.check_schema(policy_schema())


def test_the_docs_have_example_policies() -> None:
    places = [place for place, _ in doc_policies()]
    assert len(places) >= 4, places
    assert any(place.startswith("README.md") for place in places)
    assert any(place.startswith("examples/") for place in places)


@pytest.mark.parametrize(("place", "document"), doc_policies(), ids=lambda value: str(value)[:40])
def test_every_doc_policy_validates_with_loader_and_schema(place: str, document: dict[str, Any]) -> None:
    assert schema_errors(document) == [], place
    policy_from_dict(document, time_provider=CLOCK)


@given(policies)
def test_every_written_policy_validates(policy: Any) -> None:
    assert schema_errors(policy_to_dict(policy)) == []


def _respell(name: str, data: st.DataObject) -> str:
    """``name`` in random letter case, ``-`` or ``_`` at random, maybe with surrounding spaces."""
    chars = [data.draw(st.sampled_from([c.lower(), c.upper()])) if c.isalpha() else c for c in name]
    spelled = "".join(data.draw(st.sampled_from("-_")) if c == "_" else c for c in chars)
    return data.draw(st.sampled_from(["", " "])) + spelled + data.draw(st.sampled_from(["", "  "]))


@given(st.data())
def test_other_spellings_the_loader_reads_validate(data: st.DataObject) -> None:
    document = {
        "extends": _respell(data.draw(st.sampled_from(["chat", "code_review", "long_running"])), data),
        "scorers": [
            {"type": _respell("metadata_trust", data), "weight": 2},
            {
                "type": _respell("decay", data),
                "curve": {"type": _respell("exponential", data), "half_life": "1h"},
            },
        ],
        "slicer": {
            "type": _respell("count_quota", data),
            "entries": [{"kind": "Memory", "cap_count": 2}],
            "scarcity": data.draw(st.sampled_from(["Degrade", "THROW", " throw"])),
        },
        "placer": _respell("u_shaped", data),
        "overflow_strategy": data.draw(st.sampled_from(["Truncate", "PROCEED", " throw "])),
    }
    policy_from_dict(document, time_provider=CLOCK)
    assert schema_errors(document) == []


def test_overflow_strategy_truncate_in_any_case() -> None:
    """The disagreement that started this: the loader read "Truncate", the schema rejected it."""
    for spelling in ("truncate", "Truncate", "TRUNCATE"):
        document = {"extends": "chat", "overflow_strategy": spelling}
        assert policy_from_dict(document).overflow_strategy.value == "truncate"
        assert schema_errors(document) == []


@pytest.mark.parametrize(
    "document",
    [
        {"slicer": "greedy", "placer": "chronological"},  # scorers required without extends
        {"extends": "nope"},
        {"extends": "chat", "bogus": 1},
        {"extends": "chat", "version": 2},
        {"extends": "chat", "overflow_strategy": "explode"},
        {"extends": "chat", "deduplication": "yes"},
        {"extends": "chat", "scorers": []},
        {"extends": "chat", "scorers": [{"type": "recency", "weight": -1}]},
        {"extends": "chat", "scorers": [{"type": "recency", "weight": 0}]},
        {"extends": "chat", "scorers": [{"type": "recency", "bogus": 1}]},
        {"extends": "chat", "scorers": ["tag"]},  # tag needs tag_weights
        {"extends": "chat", "scorers": [{"type": "Tag"}]},
        {"extends": "chat", "scorers": [{"type": "kind", "weights": {"Message": -1}}]},
        {"extends": "chat", "scorers": [{"type": "kind", "weights": {" ": 1}}]},
        {"extends": "chat", "scorers": [{"type": "metadata_trust", "default_score": 2}]},
        {"extends": "chat", "scorers": [{"type": "metadata_key", "key": "k", "value": "v"}]},
        {"extends": "chat", "scorers": [{"type": "decay", "curve": {"type": "linear"}}]},
        {"extends": "chat", "scorers": [{"type": "decay", "curve": {"type": "window", "max_age": "soon"}}]},
        {"extends": "chat", "scorers": [{"type": "decay", "curve": {"type": "window", "max_age": 0}}]},
        {"extends": "chat", "scorers": [{"type": "decay", "curve": {"type": "step", "windows": []}}]},
        {"extends": "chat", "scorers": [{"type": "scaled"}]},
        {"extends": "chat", "scorers": [{"type": "composite", "scorers": []}]},
        {"extends": "chat", "slicer": {"type": "knapsack", "bucket_size": 0}},
        {"extends": "chat", "slicer": {"type": "quota", "quotas": [{"kind": "Message", "cap": 101}]}},
        {"extends": "chat", "slicer": {"type": "count_quota", "entries": [{"kind": "Message"}]}},
        {"extends": "chat", "slicer": {"type": "count_quota", "entries": [], "scarcity": "sometimes"}},
        {"extends": "chat", "placer": {"type": "u_shaped", "bogus": 1}},
        {"extends": "chat", "placer": 3},
    ],
    ids=lambda document: json.dumps(document)[:60],
)
def test_both_reject(document: dict[str, Any]) -> None:
    assert schema_errors(document)
    with pytest.raises(PolicyFileError):
        loads_policy(json.dumps(document), "json")


_FREE_FORM = {"weights", "tag_weights"}  # maps from kinds or tags to numbers, not parameter tables


def _tables(node: Any, key: str = "") -> list[dict[str, Any]]:
    """Every parameter table below the top level: components, curves, windows, quota entries."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict) and key not in _FREE_FORM:
        if key:
            found.append(node)
        for child_key, child in node.items():
            found.extend(_tables(child, child_key))
    elif isinstance(node, list):
        for child in node:
            found.extend(_tables(child, key or "item"))
    return found


def _loader_accepts(document: dict[str, Any]) -> bool:
    try:
        policy_from_dict(document, time_provider=CLOCK)
    except PolicyFileError:
        return False
    return True


@settings(max_examples=examples(20), deadline=None)
@given(policies)
def test_schema_and_loader_agree_on_which_parameters_are_required(policy: Any) -> None:
    """Leave out any one parameter of any table: the schema and the loader both accept, or both reject."""
    document = policy_to_dict(policy)
    for table in _tables(document):
        for name in [key for key in table if key not in ("type", "weight")]:
            value = table.pop(name)
            try:
                assert _loader_accepts(document) == (not schema_errors(document)), (name, document)
            finally:
                table[name] = value
