"""Fuzzing `cupel replay` session lines, `cupel eval` case files, and policy files under every command.

The same hostile mutations as :mod:`tests.fuzz.test_fuzz_inputs` and the same promises (status 0, 1
or 2, one line on failure, never a traceback or "unexpected"), plus each reader's own: a replay never
fails for a bad line (every non-blank physical line is one row, error rows name their line), eval
output never holds a bare ``NaN``, and a policy file is accepted or refused alike by every command.
``CUPEL_FUZZ_EXAMPLES`` raises the number of examples.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.test_fuzz_inputs import (
    JSON_VALUES,
    POLICY,
    SCALARS,
    SESSION,
    fuzz_settings,
    generated_messages,
    in_directory,
    mutated,
    run_cli,
    small,
)

pytest.importorskip("dask")

SESSION_LINES = b"\n".join(
    [
        b'{"id": "items", "items": '
        + small(SESSION, 3).replace(b"\n", b"")
        + b', "budget": {"maxTokens": 300}}',
        b'{"messages": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}, '
        b'{"role": "user", "content": "and now?"}], "budget": {"maxTokens": 200, "targetTokens": 150}}',
        b'{"id": 7, "items": [{"id": "a", "content": "gold", "tokens": 5}, {"id": "b", "content": "gold", '
        b'"tokens": 5}], "gold": ["a", {"id": "b", "weight": 2}], "budget": {"maxTokens": 100}}',
    ]
)

CASES = b"\n".join(
    [
        b'{"id": "chat", "tags": ["t"], "messages": [{"role": "system", "content": "be brief"}, '
        b'{"role": "user", "content": "what is 2+2"}, {"role": "assistant", "content": "4"}, '
        b'{"role": "user", "content": "and 3+3?"}], "gold": [1, {"index": 2, "weight": 0.5}]}',
        b'{"id": "items", "items": [{"id": "a", "content": "alpha", "tokens": 40}, '
        b'{"id": "b", "content": "beta", "tokens": 30, "priority": 3}], "gold": ["b"]}',
    ]
)


@st.composite
def generated_sessions(draw: st.DrawFn) -> bytes:
    """Session lines from scratch: the session keys with arbitrary values, items and transcripts."""
    keys = st.sampled_from(["id", "items", "messages", "budget", "gold", "other"])
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        record = draw(st.dictionaries(keys, JSON_VALUES, max_size=4))
        if draw(st.booleans()):
            record["messages"] = json.loads(draw(generated_messages()))
        if draw(st.booleans()):
            record["budget"] = {"maxTokens": draw(st.integers(-5, 300)), "targetTokens": draw(SCALARS)}
        lines.append(json.dumps(record))
    return "\n".join(lines).encode()


@fuzz_settings(0.5)
@given(data=st.one_of(mutated(SESSION_LINES), generated_sessions()))
def test_fuzz_replay_lines(data: bytes) -> None:
    def run(directory: Path) -> None:
        (directory / "s.jsonl").write_bytes(data)
        rows = directory / "rows.jsonl"
        outcome = run_cli(["replay", str(directory / "s.jsonl"), "--jobs", "1", "-o", str(rows)])
        assert outcome.code == 0, outcome.stderr  # a bad line is an error row, never the end of the job
        lines = data.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        expected = [number for number, line in enumerate(lines, start=1) if line.strip()]
        written = [json.loads(line) for line in rows.read_text(encoding="utf-8").splitlines()]
        assert sorted(row["line"] for row in written) == expected
        for row in written:
            assert row["source"] == "s.jsonl"
            if "error" in row:
                assert row["error_kind"] in ("malformed", "pinned_overflow", "selection")
                assert "\n" not in row["error"]

    in_directory(run)


def _no_bare_nan(text: str) -> None:
    def refuse(name: str) -> None:
        raise AssertionError(f"bare {name} in the output")

    json.loads(text, parse_constant=refuse)


@st.composite
def generated_cases(draw: st.DrawFn) -> bytes:
    """Case lines from scratch: arbitrary transcripts or items, gold entries with arbitrary weights."""
    lines = []
    for number in range(draw(st.integers(1, 3))):
        case: dict[str, object] = {"id": f"c{number}"}
        if draw(st.booleans()):
            case["messages"] = json.loads(draw(generated_messages()))
            refs: st.SearchStrategy[object] = st.integers(-1, 6)
            key = "index"
        else:
            case["items"] = [
                {"id": f"i{n}", "content": draw(st.text(max_size=10)), "tokens": draw(st.integers(-2, 50))}
                for n in range(draw(st.integers(1, 4)))
            ]
            refs, key = st.sampled_from(["i0", "i1", "i9", 0]), "id"
        case["gold"] = draw(
            st.lists(refs | st.fixed_dictionaries({key: refs, "weight": SCALARS}) | JSON_VALUES, max_size=3)
        )
        lines.append(json.dumps(case))
    return "\n".join(lines).encode()


@fuzz_settings(0.75)
@given(data=st.one_of(mutated(CASES), generated_cases()), output=st.sampled_from(["json", "text"]))
def test_fuzz_eval_case_files(data: bytes, output: str) -> None:
    def run(directory: Path) -> None:
        (directory / "cases.jsonl").write_bytes(data)
        arguments = ["eval", str(directory / "cases.jsonl"), "--budget", "120", "--policy", "chat"]
        outcome = run_cli([*arguments, "--resamples", "0", "--no-timings", "--format", output])
        assert outcome.code in (0, 2)
        if outcome.code == 2:
            assert "cases.jsonl" in outcome.stderr or "--tag" in outcome.stderr, outcome.stderr
        elif output == "json":
            _no_bare_nan(outcome.stdout)

    in_directory(run)


ITEMS = small(SESSION, 8)
ONE_CASE = (
    b'{"id": "c", "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "q"}], '
    b'"gold": [0]}\n'
)
ONE_SESSION = b'{"items": [{"content": "a", "tokens": 5}], "budget": {"maxTokens": 90}}\n'


def _policy_error(stderr: str, command: str) -> str:
    return stderr.strip().removeprefix(f"cupel {command}: ").removeprefix("--policy: ")


@fuzz_settings(0.75)
@given(
    data=st.one_of(
        mutated(POLICY).map(lambda text: (text, "toml")),
        mutated(
            b'{"extends": "chat", "scorers": [{"type": "composite", "weight": 2, "scorers": ['
            b'{"type": "priority"}, {"type": "decay", "curve": {"type": "window", "max_age": "2h"}}]}], '
            b'"slicer": {"type": "quota", "quotas": [{"kind": "Message", "require": 10, "cap": 90}], '
            b'"inner": "greedy"}}'
        ).map(lambda text: (text, "json")),
    ),
    command=st.sampled_from(["select", "explain", "sensitivity", "eval", "replay"]),
)
def test_fuzz_policy_files_read_alike_by_every_command(data: tuple[bytes, str], command: str) -> None:
    text, suffix = data

    def run(directory: Path) -> None:
        policy = str(directory / f"policy.{suffix}")
        (directory / f"policy.{suffix}").write_bytes(text)
        (directory / "cases.jsonl").write_bytes(ONE_CASE)
        (directory / "s.jsonl").write_bytes(ONE_SESSION)
        shown = run_cli(["policies", "show", policy])
        arguments = {
            "select": ["select", "-", "--budget", "400", "--policy", policy],
            "explain": ["explain", "-", "--budget", "400", "--policy", policy],
            "sensitivity": ["sensitivity", "-", "--budget", "400", "--policy", policy, "--policy", "chat"],
            "eval": ["eval", str(directory / "cases.jsonl"), "--budget", "90", "--policy", policy],
            "replay": ["replay", str(directory / "s.jsonl"), "--jobs", "1", "--policy", policy],
        }[command]
        if command == "eval":
            arguments += ["--resamples", "0"]
        outcome = run_cli(arguments, ITEMS)
        if shown.code != 0:
            assert outcome.code == 2
            assert _policy_error(outcome.stderr, command) == _policy_error(shown.stderr, "policies")
        else:
            # Read alike: what `policies show` accepts, every command runs (1 only for selection errors).
            assert outcome.code in ((0, 1) if command in ("select", "explain") else (0,)), outcome.stderr

    in_directory(run)
