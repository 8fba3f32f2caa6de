"""Policy files: the schema by example, extends, errors with their paths, registration, round trips."""

from __future__ import annotations

import json
import math
import pickle
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import tomli
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from cupel import (
    ChronologicalPlacer,
    CompositeScorer,
    ContextItem,
    CupelError,
    CupelTypeError,
    DecayScorer,
    ExponentialCurve,
    FixedTimeProvider,
    FrequencyScorer,
    GreedySlice,
    InvalidConfigurationError,
    KindScorer,
    MetadataKeyScorer,
    MetadataTrustScorer,
    OverflowStrategy,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    ScaledScorer,
    ScoredItem,
    StepCurve,
    SystemTimeProvider,
    TagScorer,
    UShapedPlacer,
    WindowCurve,
)
from cupel.policy import (
    MissingTomlReaderError,
    Policy,
    PolicyFileError,
    dump_policy,
    format_duration,
    get_preset,
    load_policy,
    loads_policy,
    parse_duration,
    policy_from_dict,
    policy_schema,
    policy_to_dict,
    preset_names,
    register_placer,
    register_scorer,
    register_slicer,
    registered_types,
    save_policy,
    unregister_placer,
    unregister_scorer,
    unregister_slicer,
)
from cupel.policy._toml_writer import toml_dumps
from cupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    KnapsackSlice,
    QuotaEntry,
    QuotaSet,
    QuotaSlice,
    ScarcityBehavior,
)
from tests.policy.strategies import CLOCK, policies


def validate(data: object, schema: dict[str, Any]) -> list[str]:
    """The schema's complaints about ``data`` (none when it is valid)."""
    return [error.message for error in Draft202012Validator(schema).iter_errors(data)]


# --- the schema by example -----------------------------------------------------------------------

BRIEF_EXAMPLE = """
scorers = [{type = "recency", weight = 3}, {type = "kind", weight = 1, weights = {Message = 0.5}}]
slicer = {type = "knapsack", bucket_size = 50}
placer = "u_shaped"
deduplication = true
overflow_strategy = "truncate"
"""


def test_the_documented_example() -> None:
    policy = loads_policy(BRIEF_EXAMPLE)
    assert policy == Policy(
        CompositeScorer([(RecencyScorer(), 3.0), (KindScorer({"Message": 0.5}), 1.0)]),
        KnapsackSlice(50),
        UShapedPlacer(),
        deduplication=True,
        overflow_strategy=OverflowStrategy.TRUNCATE,
    )


def test_one_scorer_entry_is_that_scorer_alone() -> None:
    policy = loads_policy('scorers = [{type = "priority"}]\nslicer = "greedy"\nplacer = "chronological"')
    assert policy.scorer == PriorityScorer()
    # A weight on a lone scorer is accepted and has no effect.
    weighted = loads_policy(
        'scorers = [{type = "priority", weight = 7}]\nslicer = "greedy"\nplacer = "chronological"'
    )
    assert weighted == policy


def test_string_shorthand_and_forgiving_type_names() -> None:
    policy = loads_policy('scorers = ["Recency", "reflexive"]\nslicer = "Greedy"\nplacer = "u-shaped"')
    assert policy.scorer == CompositeScorer([(RecencyScorer(), 1.0), (ReflexiveScorer(), 1.0)])
    assert policy.placer == UShapedPlacer()


def test_nested_composite_and_scaled() -> None:
    text = """
    scorers = [
        {type = "composite", weight = 2, scorers = [
            {type = "recency", weight = 1}, {type = "priority", weight = 3}
        ]},
        {type = "scaled", weight = 1, inner = {type = "tag", tag_weights = {urgent = 2.0, bug = 1.0}}},
    ]
    slicer = {type = "greedy"}
    placer = {type = "chronological"}
    """
    policy = loads_policy(text)
    assert policy.scorer == CompositeScorer(
        [
            (CompositeScorer([(RecencyScorer(), 1.0), (PriorityScorer(), 3.0)]), 2.0),
            (ScaledScorer(TagScorer({"urgent": 2.0, "bug": 1.0})), 1.0),
        ]
    )


def test_every_scorer_type() -> None:
    text = """
    scorers = [
        {type = "recency"}, {type = "priority"}, {type = "frequency"}, {type = "reflexive"},
        {type = "kind"},
        {type = "kind", weights = {SystemPrompt = 1.0, "tool output" = 0.25}},
        {type = "tag", tag_weights = {a = 1}, case_sensitive = false},
        {type = "metadata_trust", default_score = 0.25},
        {type = "metadata_key", key = "cupel:priority", value = "high", boost = 1.5},
        {type = "decay", curve = {type = "exponential", half_life = "2h"}},
        {type = "decay", curve = {type = "window", max_age = 3600}, null_timestamp_score = 0.0},
        {type = "decay", curve = {type = "step", windows = [
            {max_age = "1h", score = 1.0}, {max_age = "1d", score = 0.5}
        ]}},
        {type = "scaled", inner = {type = "priority"}},
        {type = "composite", scorers = [{type = "recency"}]},
    ]
    slicer = "greedy"
    placer = "chronological"
    """
    clock = FixedTimeProvider(datetime(2024, 1, 1, tzinfo=UTC))
    policy = loads_policy(text, time_provider=clock)
    assert isinstance(policy.scorer, CompositeScorer)
    children = [scorer for scorer, _ in policy.scorer.entries]
    assert children == [
        RecencyScorer(),
        PriorityScorer(),
        FrequencyScorer(),
        ReflexiveScorer(),
        KindScorer(),
        KindScorer({"SystemPrompt": 1.0, "tool output": 0.25}),
        TagScorer({"a": 1.0}, case_sensitive=False),
        MetadataTrustScorer(0.25),
        MetadataKeyScorer("cupel:priority", "high", 1.5),
        DecayScorer(clock, ExponentialCurve(timedelta(hours=2))),
        DecayScorer(clock, WindowCurve(timedelta(hours=1)), null_timestamp_score=0.0),
        DecayScorer(clock, StepCurve([(timedelta(hours=1), 1.0), (timedelta(days=1), 0.5)])),
        ScaledScorer(PriorityScorer()),
        CompositeScorer([(RecencyScorer(), 1.0)]),
    ]


def test_decay_uses_the_system_clock_by_default() -> None:
    policy = loads_policy(
        'scorers = [{type = "decay", curve = {type = "window", max_age = "1d"}}]\nslicer = "greedy"\n'
        'placer = "chronological"'
    )
    assert isinstance(policy.scorer, DecayScorer)
    assert policy.scorer.time_provider == SystemTimeProvider()


def test_every_slicer_type() -> None:
    text = """
    scorers = ["priority"]
    placer = "chronological"
    [slicer]
    type = "count_quota"
    scarcity = "throw"
    entries = [{kind = "ToolOutput", require_count = 1, cap_count = 2}, {kind = "Message", cap_count = 5}]
    [slicer.inner]
    type = "quota"
    quotas = [{kind = "Document", require = 10, cap = 40}, {kind = "Message"}]
    inner = {type = "knapsack"}
    """
    policy = loads_policy(text)
    assert policy.slicer == CountQuotaSlice(
        [CountQuotaEntry("ToolOutput", 1, 2), CountQuotaEntry("Message", 0, 5)],
        QuotaSlice(QuotaSet([QuotaEntry("Document", 10, 40), QuotaEntry("Message")]), KnapsackSlice(100)),
        ScarcityBehavior.THROW,
    )
    ccks = loads_policy(
        'scorers = ["priority"]\nplacer = "chronological"\n'
        'slicer = {type = "count_constrained_knapsack", bucket_size = 10, '
        'entries = [{kind = "tool", cap_count = 1}]}'
    )
    assert ccks.slicer == CountConstrainedKnapsackSlice([CountQuotaEntry("tool", 0, 1)], KnapsackSlice(10))
    quota_default_inner = loads_policy(
        'scorers = ["priority"]\nplacer = "chronological"\nslicer = {type = "quota", quotas = []}'
    )
    assert quota_default_inner.slicer == QuotaSlice(QuotaSet(), GreedySlice())


def test_json_is_the_same_schema() -> None:
    data = {
        "scorers": [
            {"type": "recency", "weight": 3},
            {"type": "kind", "weight": 1, "weights": {"Message": 0.5}},
        ],
        "slicer": {"type": "knapsack", "bucket_size": 50},
        "placer": "u_shaped",
        "deduplication": True,
        "overflow_strategy": "truncate",
    }
    assert loads_policy(json.dumps(data)) == loads_policy(BRIEF_EXAMPLE)
    assert loads_policy(json.dumps(data), "json") == policy_from_dict(data)
    assert loads_policy(json.dumps(data).encode()) == policy_from_dict(data)


# --- extends ------------------------------------------------------------------------------------


def test_extends_alone_is_the_preset() -> None:
    for name in preset_names():
        assert loads_policy(f'extends = "{name}"') == get_preset(name)


def test_extends_overrides_key_by_key() -> None:
    policy = loads_policy('extends = "rag"\nplacer = "chronological"\noverflow_strategy = "truncate"')
    rag = get_preset("rag")
    assert policy == rag.replace(placer=ChronologicalPlacer(), overflow_strategy=OverflowStrategy.TRUNCATE)


def test_extends_scorers_replace_the_whole_scorer() -> None:
    policy = loads_policy('extends = "chat"\nscorers = [{type = "reflexive"}]')
    assert policy == get_preset("chat").replace(scorer=ReflexiveScorer())


def test_extends_deduplication() -> None:
    assert loads_policy('extends = "debugging"\ndeduplication = false').deduplication is False


def test_dump_never_writes_extends() -> None:
    policy = loads_policy('extends = "chat"\nplacer = "u_shaped"')
    assert "extends" not in policy_to_dict(policy)
    assert loads_policy(dump_policy(policy)) == policy


# --- errors: each names its place in the document ------------------------------------------------

MINIMAL = 'slicer = "greedy"\nplacer = "chronological"\n'


def error_of(text: str, format: str | None = None) -> PolicyFileError:
    with pytest.raises(PolicyFileError) as raised:
        loads_policy(text, format)  # type: ignore[arg-type]
    return raised.value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'scorers = [{type = "recency", weight = 3}, {type = "kind", weight = -1}]\n' + MINIMAL,
            "scorers[1].weight: must be > 0, got -1",
        ),
        (
            'scorers = [{type = "recency", weight = "heavy"}]\n' + MINIMAL,
            'scorers[0].weight: must be a number, got "heavy"',
        ),
        (
            'scorers = [{type = "recency", weight = 0}, "kind"]\n' + MINIMAL,
            "scorers[0].weight: must be > 0, got 0",
        ),
        (
            'scorers = [{type = "frecency"}]\n' + MINIMAL,
            'scorers[0].type: unknown scorer type "frecency"; known types: composite, decay, frequency, '
            "kind, metadata_key, metadata_trust, priority, recency, reflexive, relevance, scaled, tag",
        ),
        ("scorers = [{weight = 1}]\n" + MINIMAL, "scorers[0].type: required"),
        ("scorers = [{type = 3}]\n" + MINIMAL, "scorers[0].type: must be a string, got 3"),
        (
            'scorers = [{type = "recency", half_life = "1h"}]\n' + MINIMAL,
            "scorers[0].half_life: unknown key for scorer type 'recency'; allowed keys: type, weight",
        ),
        ("scorers = []\n" + MINIMAL, "scorers: must contain at least one scorer"),
        ('scorers = {type = "recency"}\n' + MINIMAL, "scorers: must be an array, got a table"),
        ("scorers = [3]\n" + MINIMAL, "scorers[0]: must be a table, got 3"),
        (
            'scorers = [{type = "kind", weights = {Message = -0.5}}]\n' + MINIMAL,
            "scorers[0].weights.Message: must be >= 0, got -0.5",
        ),
        (
            'scorers = [{type = "kind", weights = {Message = 0.5, message = 0.2}}]\n' + MINIMAL,
            'scorers[0].weights.message: kind "message" repeats "Message" (kinds compare case-insensitively)',
        ),
        (
            'scorers = [{type = "kind", weights = {" " = 0.5}}]\n' + MINIMAL,
            'scorers[0].weights." ": must be a non-blank kind name, got " "',
        ),
        (
            'scorers = [{type = "kind", weights = ["Message"]}]\n' + MINIMAL,
            "scorers[0].weights: must be a table, got an array",
        ),
        ('scorers = [{type = "tag"}]\n' + MINIMAL, "scorers[0].tag_weights: required"),
        (
            'scorers = [{type = "tag", tag_weights = {a = 1}, case_sensitive = "no"}]\n' + MINIMAL,
            'scorers[0].case_sensitive: must be true or false, got "no"',
        ),
        (
            'scorers = [{type = "tag", tag_weights = {a = 1, A = 2}, case_sensitive = false}]\n' + MINIMAL,
            "scorers[0].tag_weights: TagScorer: tag 'A' appears twice when compared case-insensitively",
        ),
        (
            'scorers = [{type = "metadata_key", key = "k", value = "v"}]\n' + MINIMAL,
            "scorers[0].boost: required",
        ),
        (
            'scorers = [{type = "metadata_key", key = 1, value = "v", boost = 2}]\n' + MINIMAL,
            "scorers[0].key: must be a string, got 1",
        ),
        (
            'scorers = [{type = "metadata_trust", default_score = 1.5}]\n' + MINIMAL,
            "scorers[0].default_score: must be <= 1, got 1.5",
        ),
        ('scorers = [{type = "decay"}]\n' + MINIMAL, "scorers[0].curve: required"),
        (
            'scorers = [{type = "decay", curve = {type = "linear"}}]\n' + MINIMAL,
            'scorers[0].curve.type: unknown curve type "linear"; known types: exponential, step, window',
        ),
        (
            'scorers = [{type = "decay", curve = {type = "exponential", half_life = "2 hours"}}]\n' + MINIMAL,
            'scorers[0].curve.half_life: must be a duration such as "30m", "1h30m" or "2d" '
            '(units d, h, m, s, ms, us), got "2 hours"',
        ),
        (
            'scorers = [{type = "decay", curve = {type = "exponential", half_life = -5}}]\n' + MINIMAL,
            "scorers[0].curve.half_life: must be > 0, got -5",
        ),
        (
            'scorers = [{type = "decay", curve = {type = "window", max_age = "0s"}}]\n' + MINIMAL,
            'scorers[0].curve.max_age: must be greater than zero, got "0s"',
        ),
        (
            'scorers = [{type = "decay", curve = {type = "step", windows = [{max_age = "1d", score = 1}, '
            '{max_age = "1h", score = 0.5}]}}]\n' + MINIMAL,
            "scorers[0].curve.windows[1].max_age: must be longer than the previous window's (1d); "
            'windows are ordered youngest first, got "1h"',
        ),
        (
            'scorers = [{type = "decay", curve = {type = "step", windows = [{max_age = "1d", score = 2}]}}]\n'
            + MINIMAL,
            "scorers[0].curve.windows[0].score: must be <= 1, got 2",
        ),
        (
            'scorers = [{type = "decay", curve = {type = "step", windows = []}}]\n' + MINIMAL,
            "scorers[0].curve.windows: must contain at least one window",
        ),
        (
            'scorers = [{type = "scaled", inner = {type = "composite", '
            'scorers = ["recency", {type = "nope"}]}}]\n' + MINIMAL,
            'scorers[0].inner.scorers[1].type: unknown scorer type "nope"; known types: composite, decay, '
            "frequency, kind, metadata_key, metadata_trust, priority, recency, reflexive, relevance, "
            "scaled, tag",
        ),
        (
            'scorers = [{type = "composite", scorers = [{type = "recency", weight = -2}]}]\n' + MINIMAL,
            "scorers[0].scorers[0].weight: must be > 0, got -2",
        ),
    ],
)
def test_scorer_errors(text: str, message: str) -> None:
    error = error_of(text)
    assert str(error) == message
    assert error.path == message.split(": ", 1)[0]
    assert isinstance(error, InvalidConfigurationError) and isinstance(error, ValueError)


SCORER = 'scorers = ["priority"]\nplacer = "chronological"\n'


@pytest.mark.parametrize(
    ("slicer", "message"),
    [
        (
            '"random"',
            'slicer.type: unknown slicer type "random"; known types: count_constrained_knapsack, '
            "count_quota, greedy, knapsack, quota, score",
        ),
        ('{type = "knapsack", bucket_size = 0}', "slicer.bucket_size: must be > 0, got 0"),
        ('{type = "knapsack", bucket_size = 1.5}', "slicer.bucket_size: must be an integer, got 1.5"),
        (
            '{type = "greedy", bucket_size = 10}',
            "slicer.bucket_size: unknown key for slicer type 'greedy'; allowed keys: type",
        ),
        ('{type = "quota"}', "slicer.quotas: required"),
        (
            '{type = "quota", quotas = [{kind = "Message", cap = 150}]}',
            "slicer.quotas[0].cap: must be <= 100, got 150",
        ),
        (
            '{type = "quota", quotas = [{kind = "Message", require = 60, cap = 50}]}',
            "slicer.quotas[0]: QuotaEntry for kind 'Message': require (60.0) must be <= cap (50.0)",
        ),
        (
            '{type = "quota", quotas = [{kind = "Message", require = 60}, '
            '{kind = "Document", require = 50}]}',
            "slicer.quotas: QuotaSet: the require percentages must sum to at most 100.0, got 110 "
            "('Message' 60, 'Document' 50)",
        ),
        ('{type = "quota", quotas = [{require = 10}]}', "slicer.quotas[0].kind: required"),
        (
            '{type = "quota", quotas = [{kind = "Message", share = 10}]}',
            "slicer.quotas[0].share: unknown key for a quota entry; allowed keys: kind, require, cap",
        ),
        (
            '{type = "quota", quotas = [], inner = {type = "knapsack", bucket_size = -1}}',
            "slicer.inner.bucket_size: must be > 0, got -1",
        ),
        (
            '{type = "count_quota", entries = [{kind = "tool", cap_count = 2}], inner = "knapsack"}',
            "slicer.inner: CountQuotaSlice does not support KnapsackSlice as the inner slicer (got "
            "KnapsackSlice(bucket_size=100)); use GreedySlice as the inner slicer, or "
            "CountConstrainedKnapsackSlice for count quotas with knapsack selection",
        ),
        ('{type = "count_quota", entries = [{kind = "tool"}]}', "slicer.entries[0].cap_count: required"),
        (
            '{type = "count_quota", entries = [{kind = "tool", require_count = 3, cap_count = 2}]}',
            "slicer.entries[0]: CountQuotaEntry for kind 'tool': require_count (3) must be <= cap_count (2)",
        ),
        (
            '{type = "count_quota", entries = [{kind = "tool", cap_count = -1}]}',
            "slicer.entries[0].cap_count: must be >= 0, got -1",
        ),
        (
            '{type = "count_quota", entries = [], scarcity = "sometimes"}',
            'slicer.scarcity: must be one of "degrade", "throw", got "sometimes"',
        ),
        (
            '{type = "count_constrained_knapsack", '
            'entries = [{kind = "a", cap_count = 1}, {kind = "A", cap_count = 2}]}',
            "slicer: CountConstrainedKnapsackSlice.entries names kind 'A' twice "
            "(kinds compare case-insensitively)",
        ),
    ],
)
def test_slicer_errors(slicer: str, message: str) -> None:
    assert (
        str(
            error_of(
                SCORER.replace('placer = "chronological"\n', f'placer = "chronological"\nslicer = {slicer}\n')
            )
        )
        == message
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'scorers = ["priority"]\nslicer = "greedy"\nplacer = "random"',
            'placer.type: unknown placer type "random"; known types: chronological, u_shaped',
        ),
        (
            'scorers = ["priority"]\nslicer = "greedy"\nplacer = {type = "u_shaped", mirror = true}',
            "placer.mirror: unknown key for placer type 'u_shaped'; allowed keys: type",
        ),
        (
            'scorers = ["priority"]\nslicer = "greedy"',
            "placer: required (or name a preset to start from with extends)",
        ),
        (
            'slicer = "greedy"\nplacer = "chronological"',
            "scorers: required (or name a preset to start from with extends)",
        ),
        ('extends = "chat"\ndeduplication = "yes"', 'deduplication: must be true or false, got "yes"'),
        (
            'extends = "chat"\noverflow_strategy = "explode"',
            'overflow_strategy: must be one of "throw", "truncate", "proceed", got "explode"',
        ),
        (
            'extends = "summarise"',
            'extends: unknown preset "summarise"; known presets: chat, code_review, rag, document_qa, '
            "tool_use, long_running, debugging",
        ),
        (
            'extends = "chat"\nversion = 2',
            "version: unsupported policy file version 2; this cupel reads version 1",
        ),
        (
            'extends = "chat"\nbudget = 4000',
            "budget: unknown key for a policy; allowed keys: $schema, version, extends, scorers, slicer, "
            "placer, deduplication, overflow_strategy, chat",
        ),
    ],
)
def test_policy_errors(text: str, message: str) -> None:
    assert str(error_of(text)) == message


def test_overflow_strategy_case_insensitive_and_version_and_schema_keys() -> None:
    policy = loads_policy(
        '"$schema" = "./policy.schema.json"\nversion = 1\nextends = "chat"\noverflow_strategy = "Proceed"'
    )
    assert policy.overflow_strategy is OverflowStrategy.PROCEED


def test_syntax_errors() -> None:
    assert str(error_of("scorers = [", "toml")).startswith("<policy>: invalid TOML: ")
    assert str(error_of('{"scorers": [}', "json")).startswith("<policy>: invalid JSON at line 1, column 14: ")
    assert (
        str(error_of('{"extends": "chat", "extends": "rag"}'))
        == '<policy>: invalid JSON: duplicate key "extends"'
    )
    assert (
        str(error_of('{"extends": "chat", "x": NaN}')) == "<policy>: invalid JSON: NaN is not a JSON number"
    )
    assert str(error_of("[1, 2]", "json")) == "<policy>: must be a table, got an array"


def test_json_errors_use_the_same_paths() -> None:
    data = {
        "scorers": [{"type": "recency"}, {"type": "kind", "weight": -1}],
        "slicer": "greedy",
        "placer": "chronological",
    }
    assert str(error_of(json.dumps(data))) == "scorers[1].weight: must be > 0, got -1"
    with pytest.raises(PolicyFileError, match=r"^scorers\[1\]\.weight: must be > 0, got -1$"):
        policy_from_dict(data)


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "team.toml"
    path.write_text('extends = "chat"\nplacer = "sideways"\n', encoding="utf-8")
    with pytest.raises(PolicyFileError) as raised:
        load_policy(path)
    assert str(raised.value) == (
        f'{path}: placer.type: unknown placer type "sideways"; known types: chronological, u_shaped'
    )
    assert raised.value.source == str(path) and raised.value.path == "placer.type"
    assert isinstance(raised.value, CupelError)
    copy = pickle.loads(pickle.dumps(raised.value))
    assert str(copy) == str(raised.value) and copy.path == "placer.type"


def test_missing_toml_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tomli", None)
    monkeypatch.setitem(sys.modules, "tomllib", None)
    with pytest.raises(MissingTomlReaderError, match=r"pip install 'pycupel\[toml\]'"):
        loads_policy('extends = "chat"')
    # JSON needs nothing extra.
    assert loads_policy('{"extends": "chat"}') == get_preset("chat")


def test_tomllib_is_the_fallback_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tomli", None)
    assert loads_policy(BRIEF_EXAMPLE) == loads_policy(json.dumps(tomli.loads(BRIEF_EXAMPLE)))


def test_bad_arguments() -> None:
    with pytest.raises(InvalidConfigurationError, match="format must be 'toml' or 'json'"):
        loads_policy('extends = "chat"', "yaml")  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match="time_provider must have a now"):
        policy_from_dict({"extends": "chat"}, time_provider=object())  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError):
        load_policy(42)  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError):
        policy_to_dict(get_preset("chat").build_pipeline())  # type: ignore[arg-type]


# --- load_policy: paths and text -----------------------------------------------------------------


def test_load_and_save_files(tmp_path: Path) -> None:
    policy = loads_policy(BRIEF_EXAMPLE)
    for name in ("p.toml", "p.json", "p.policy"):
        path = tmp_path / name
        save_policy(policy, path)
        text = path.read_text(encoding="utf-8")
        assert text.startswith("{") == name.endswith(".json")
        assert load_policy(path) == policy
        assert load_policy(str(path)) == policy
    save_policy(policy, tmp_path / "forced.txt", format="json")
    assert load_policy(tmp_path / "forced.txt") == policy  # sniffed
    assert load_policy(tmp_path / "forced.txt", format="json") == policy


def test_load_policy_accepts_text() -> None:
    assert load_policy(BRIEF_EXAMPLE) == loads_policy(BRIEF_EXAMPLE)
    assert load_policy('extends = "rag"') == get_preset("rag")
    assert load_policy('{"extends": "rag"}') == get_preset("rag")
    assert load_policy(b'extends = "rag"') == get_preset("rag")


def test_load_policy_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_policy(str(tmp_path / "absent.toml"))


# --- writing --------------------------------------------------------------------------------------


def test_canonical_toml() -> None:
    assert dump_policy(loads_policy(BRIEF_EXAMPLE)) == (
        "version = 1\n"
        "scorers = [\n"
        '    { type = "recency", weight = 3.0 },\n'
        '    { type = "kind", weight = 1.0, weights = { Message = 0.5 } },\n'
        "]\n"
        'slicer = { type = "knapsack", bucket_size = 50 }\n'
        'placer = "u_shaped"\n'
        "deduplication = true\n"
        'overflow_strategy = "truncate"\n'
    )


def test_canonical_dict_for_nested_and_single_composites() -> None:
    policy = Policy(
        CompositeScorer(
            [(ScaledScorer(CompositeScorer([(RecencyScorer(), 2.0)])), 1.0), (KindScorer(), 0.5)]
        ),
        GreedySlice(),
        ChronologicalPlacer(),
    )
    assert policy_to_dict(policy)["scorers"] == [
        {
            "type": "scaled",
            "weight": 1.0,
            "inner": {"type": "composite", "scorers": [{"type": "recency", "weight": 2.0}]},
        },
        {"type": "kind", "weight": 0.5},
    ]
    lone = Policy(CompositeScorer([(RecencyScorer(), 2.0)]), GreedySlice(), ChronologicalPlacer())
    assert policy_to_dict(lone)["scorers"] == [
        {"type": "composite", "scorers": [{"type": "recency", "weight": 2.0}]}
    ]
    assert loads_policy(dump_policy(lone)) == lone


def test_unwritable_components() -> None:
    class Homemade:
        def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
            return 0.0

    policy = Policy(Homemade(), GreedySlice(), ChronologicalPlacer())
    with pytest.raises(CupelTypeError, match="neither a built-in scorer nor registered with register_scorer"):
        dump_policy(policy)


@given(policies)
def test_round_trip_property(policy: Policy) -> None:
    """load -> save -> load is lossless, in both formats, for every built-in component."""
    data = policy_to_dict(policy)
    assert validate(data, policy_schema()) == []
    for format in ("toml", "json"):
        text = dump_policy(policy, format)  # type: ignore[arg-type]
        loaded = loads_policy(text, format, time_provider=CLOCK)  # type: ignore[arg-type]
        assert loaded == policy
        assert dump_policy(loaded, format) == text  # type: ignore[arg-type]


plain_values = st.recursive(
    st.one_of(
        st.text(),
        st.booleans(),
        st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.floats(allow_nan=False, allow_infinity=False),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=6), plain_values, max_size=5))
def test_toml_emitter_property(data: dict[str, Any]) -> None:
    """The emitter writes TOML that tomli reads back as the same data."""
    assert tomli.loads(toml_dumps(data)) == data


def test_toml_emitter_escapes() -> None:
    data = {"a b": 'quote " backslash \\ tab \t newline \n nul \x00 del \x7f é 🎉', "": [1.5e-7, -0.0, 1e300]}
    text = toml_dumps(data)
    assert tomli.loads(text) == data
    assert '"a b" = ' in text and '"" = ' in text
    with pytest.raises(InvalidConfigurationError, match="lone surrogate"):
        toml_dumps({"k": "\ud800"})
    with pytest.raises(CupelTypeError):
        toml_dumps({"k": object()})


# --- durations -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90s", timedelta(seconds=90)),
        ("1h30m", timedelta(minutes=90)),
        ("1.5d", timedelta(hours=36)),
        ("250ms", timedelta(milliseconds=250)),
        ("7us", timedelta(microseconds=7)),
        ("2d3h4m5s6ms7us", timedelta(days=2, hours=3, minutes=4, seconds=5, milliseconds=6, microseconds=7)),
        (3600, timedelta(hours=1)),
        (0.5, timedelta(milliseconds=500)),
    ],
)
def test_parse_duration(text: object, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@given(st.timedeltas(min_value=timedelta(microseconds=1)))
def test_duration_round_trip(duration: timedelta) -> None:
    assert parse_duration(format_duration(duration)) == duration


def test_duration_errors() -> None:
    with pytest.raises(PolicyFileError, match="whole number of microseconds"):
        parse_duration("0.5us")
    with pytest.raises(PolicyFileError, match="must be a number"):
        parse_duration(True)
    with pytest.raises(InvalidConfigurationError):
        format_duration(timedelta(0))
    assert format_duration(timedelta(minutes=90)) == "1h30m"


# --- the JSON Schema ------------------------------------------------------------------------------


def test_schema_lists_exactly_the_built_in_types_and_their_keys() -> None:
    schema = policy_schema()
    defs = schema["$defs"]
    types = registered_types()
    for role in ("scorer", "slicer", "placer"):
        names = sorted(
            key.split(".", 1)[1] for key in defs if key.startswith(f"{role}.") and key != f"{role}.custom"
        )
        assert names == list(types[role])
        for name in names:
            properties = set(defs[f"{role}.{name}"]["properties"])
            expected = {"type", "weight"} if role == "scorer" else {"type"}
            from cupel.policy.registry import _PLACERS, _SCORERS, _SLICERS

            registry = {"scorer": _SCORERS, "slicer": _SLICERS, "placer": _PLACERS}[role]
            entry = registry.get(name)
            assert entry is not None and entry.keys is not None
            assert properties == expected | set(entry.keys)
    assert schema["properties"]["extends"]["anyOf"][0]["enum"] == list(preset_names())


def test_schema_accepts_examples_and_rejects_errors() -> None:
    schema = policy_schema()
    assert validate(tomli.loads(BRIEF_EXAMPLE), schema) == []
    assert validate({"extends": "chat", "placer": "u_shaped"}, schema) == []
    assert validate({"slicer": "greedy", "placer": "chronological"}, schema)  # scorers required
    assert validate({"extends": "chat", "scorers": [{"type": "recency", "weight": -1}]}, schema)
    assert validate({"extends": "chat", "scorers": [{"type": "recency", "bogus": 1}]}, schema)
    assert validate({"extends": "chat", "overflow_strategy": "explode"}, schema)
    # A custom type (registered at run time) is allowed by the schema.
    assert validate({"extends": "chat", "scorers": [{"type": "boost", "factor": 2}]}, schema) == []


# --- registration ---------------------------------------------------------------------------------


class BoostScorer:
    """A custom scorer: a constant factor."""

    def __init__(self, factor: float = 1.0) -> None:
        if factor <= 0:
            raise ValueError(f"factor must be > 0, got {factor}")
        self.factor = float(factor)

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        return self.factor

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BoostScorer) and other.factor == self.factor

    def __hash__(self) -> int:
        return hash(self.factor)


class FirstN:
    def __init__(self, n: int) -> None:
        self.n = n

    def slice(self, scored: Sequence[ScoredItem], budget: Any) -> list[ContextItem]:
        return [entry.item for entry in scored[: self.n]]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FirstN) and other.n == self.n

    def __hash__(self) -> int:
        return self.n


class Reversed:
    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        return [entry.item for entry in reversed(items)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reversed)

    def __hash__(self) -> int:
        return 0


@pytest.fixture
def registered() -> Iterator[None]:
    register_scorer("boost", BoostScorer, to_config=lambda scorer: {"factor": scorer.factor})
    register_slicer("first_n", FirstN, to_config=lambda slicer: {"n": slicer.n})
    register_placer("reversed", Reversed, to_config=lambda placer: {})
    try:
        yield
    finally:
        unregister_scorer("boost")
        unregister_slicer("first_n")
        unregister_placer("reversed")


@pytest.mark.usefixtures("registered")
def test_registered_types_in_files() -> None:
    text = """
    scorers = [{type = "boost", weight = 2, factor = 3}, {type = "scaled", inner = {type = "boost"}}]
    slicer = {type = "first_n", n = 2}
    placer = "reversed"
    """
    policy = loads_policy(text)
    assert policy == Policy(
        CompositeScorer([(BoostScorer(3), 2.0), (ScaledScorer(BoostScorer()), 1.0)]), FirstN(2), Reversed()
    )
    for format in ("toml", "json"):
        assert loads_policy(dump_policy(policy, format), format) == policy  # type: ignore[arg-type]
    assert policy_to_dict(policy)["placer"] == "reversed"
    assert "boost" in registered_types()["scorer"]


@pytest.mark.usefixtures("registered")
def test_registered_type_errors() -> None:
    base = 'slicer = "greedy"\nplacer = "chronological"\n'
    assert str(error_of('scorers = [{type = "boost", factor = -1}]\n' + base)) == (
        "scorers[0]: scorer type 'boost': factor must be > 0, got -1"
    )
    message = str(error_of('scorers = [{type = "boost", strength = 1}]\n' + base))
    assert message.startswith("scorers[0]: scorer type 'boost': ") and "strength" in message
    unknown = str(error_of('scorers = [{type = "nope"}]\n' + base))
    assert "boost" in unknown.split("known types: ")[1]


def test_registration_rules() -> None:
    with pytest.raises(InvalidConfigurationError, match="'recency' is a built-in scorer type"):
        register_scorer("recency", BoostScorer)
    with pytest.raises(InvalidConfigurationError, match="must start with a letter"):
        register_scorer("9lives", BoostScorer)
    with pytest.raises(CupelTypeError, match="factory must be callable"):
        register_scorer("x", 3)  # type: ignore[arg-type]
    register_scorer("Boost-It", BoostScorer)  # names are normalised like type names
    try:
        with pytest.raises(InvalidConfigurationError, match="already registered"):
            register_scorer("boost_it", BoostScorer)
        register_scorer("boost_it", lambda factor=1.0: BoostScorer(factor), replace=True)
        policy = loads_policy('scorers = [{type = "BOOST-IT", factor = 2}]\n' + MINIMAL)
        assert policy.scorer == BoostScorer(2)
        # Registered without to_config (and without a class): readable, not writable.
        with pytest.raises(CupelTypeError, match="neither a built-in scorer nor registered"):
            dump_policy(policy)
    finally:
        unregister_scorer("boost_it")
    with pytest.raises(InvalidConfigurationError, match="not a registered custom scorer type"):
        unregister_scorer("boost_it")
    with pytest.raises(InvalidConfigurationError, match="not a registered custom scorer type"):
        unregister_scorer("recency")


def test_registered_without_to_config_cannot_be_written() -> None:
    register_scorer("boost", BoostScorer)
    try:
        policy = loads_policy('scorers = [{type = "boost"}]\n' + MINIMAL)
        with pytest.raises(CupelTypeError, match="registered without to_config"):
            dump_policy(policy)
    finally:
        unregister_scorer("boost")


def test_one_class_one_name() -> None:
    register_scorer("boost", BoostScorer, to_config=lambda s: {"factor": s.factor})
    try:
        with pytest.raises(
            InvalidConfigurationError, match="BoostScorer is already registered as scorer type 'boost'"
        ):
            register_scorer("boost2", BoostScorer)
    finally:
        unregister_scorer("boost")


def test_to_config_must_return_plain_data() -> None:
    register_scorer("boost", BoostScorer, to_config=lambda s: {"factor": math.inf})
    try:
        with pytest.raises(CupelTypeError, match="non-finite"):
            dump_policy(Policy(BoostScorer(), GreedySlice(), ChronologicalPlacer()))
    finally:
        unregister_scorer("boost")
