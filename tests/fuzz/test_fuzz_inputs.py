"""Fuzzing every reader through the command line (and the report reader through the Python API).

Inputs are the examples, mutated byte by byte with hostile fragments (lone surrogates, huge numbers, deep
nesting, control characters, invalid UTF-8, stray line breaks), and documents generated from scratch. Every
run must end with status 0, 1 or 2, print exactly one line on standard error when it fails, never a
traceback or an "unexpected" error, and never change an output file that existed before a failed run.

Most runs go through ``cupel.cli.main`` in-process (fast); a few go through the real console script.
The normal suite runs a bounded number of examples; set ``CUPEL_FUZZ_EXAMPLES`` (e.g. 5000) for a deeper
run (docs/testing.md).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cupel import (
    ContextBudget,
    ContextItem,
    CupelError,
    GreedySlice,
    Pipeline,
    ReflexiveScorer,
    UShapedPlacer,
)
from cupel._wire_format import _ITEM_KEYS
from cupel.cli import main
from cupel.diagnostics.report import SelectionReport

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
VECTORS = ROOT.parent / "shared" / "conformance" / "required"

#: Examples per in-process target; CUPEL_FUZZ_EXAMPLES raises it for a deeper run.
EXAMPLES_PER_TARGET = int(os.environ.get("CUPEL_FUZZ_EXAMPLES", "40"))


def fuzz_settings(share: float = 1.0) -> Any:
    return settings(
        max_examples=max(3, int(EXAMPLES_PER_TARGET * share)),
        deadline=None,
        derandomize=not os.environ.get("CUPEL_FUZZ_EXAMPLES"),
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
        database=None,
    )


# ---- inputs ------------------------------------------------------------------------------------------

HOSTILE = [
    b"\\ud800",
    b"\\udce9",
    b"\\ud83d\\ude00",
    b"1e400",
    b"-1e400",
    b"NaN",
    b"Infinity",
    b"9" * 400,
    b"9" * 5000,
    b"[" * 300,
    b"{" * 50,
    b"\x00",
    b"\x01",
    b"\xff",
    b"\xc3",
    b"\xef\xbb\xbf",
    b"\x1b[31m",
    b"\x1b]0;title\x07",
    "\u202e".encode(),
    "日本語".encode(),
    "\u2028".encode(),
    b"\n",
    b"\r\n",
    b"\n\n",
    b'"',
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"null",
    b"true",
    b"-1",
    b"0",
    b"1e-09",
    b"0.5",
    b'""',
    b"[]",
    b"{}",
    b'"1000000000d"',
    b'"1e23s"',
    b"1e23",
    b'"2026-13-45T99:00:00Z"',
    b'"2026-01-01T00:00:00"',
    b"\\u0000",
    b'"tokens"',
    b'"content"',
    b'"pinned": true',
    b'"role"',
    b'"tool_calls"',
    b'"type"',
    b"=",
    b"[[scorers]]",
]


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """``seed`` with a few random edits: hostile fragments inserted, bytes replaced, cut or repeated."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 6))):
        where = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["insert", "replace", "delete", "truncate", "repeat", "byte"]))
        if action == "insert":
            data[where:where] = draw(st.sampled_from(HOSTILE))
        elif action == "replace":
            data[where : where + draw(st.integers(1, 20))] = draw(st.sampled_from(HOSTILE))
        elif action == "delete":
            del data[where : where + draw(st.integers(1, 40))]
        elif action == "truncate":
            del data[where:]
        elif action == "repeat":
            data[where:where] = data[where : where + draw(st.integers(1, 200))]
        else:
            data[where:where] = bytes([draw(st.integers(0, 255))])
    return bytes(data)


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**300, max_value=10**420),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["", " ", "Message", "SystemPrompt", "2026-01-01T00:00:00Z", "NaN", "0.5"]),
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
# Every spelling the item reader knows, and one it does not.
ITEM_KEYS = st.sampled_from([*_ITEM_KEYS, "other"])


@st.composite
def generated_items(draw: st.DrawFn) -> bytes:
    """A JSON array (or JSON Lines) of item-like objects with arbitrary values in the item fields."""
    records = []
    for _ in range(draw(st.integers(0, 6))):
        record: dict[str, Any] = {"content": draw(st.text(max_size=30)), "tokens": draw(st.integers(-5, 60))}
        record.update(draw(st.dictionaries(ITEM_KEYS, JSON_VALUES, max_size=4)))
        if draw(st.booleans()):
            record["metadata"] = {"cupel:trust": draw(SCALARS)}
        records.append(record)
    if draw(st.booleans()):
        return "\n".join(json.dumps(record) for record in records).encode()
    return json.dumps(records, ensure_ascii=draw(st.booleans())).encode()


@st.composite
def generated_messages(draw: st.DrawFn) -> bytes:
    """A chat transcript with arbitrary roles, contents and tool calls."""
    roles = st.sampled_from(["system", "user", "assistant", "tool", "developer", "", "bot"])
    messages = []
    for index in range(draw(st.integers(1, 6))):
        message: dict[str, Any] = {
            "role": draw(roles),
            "content": draw(st.one_of(st.text(max_size=20), JSON_VALUES)),
        }
        if draw(st.booleans()):
            message["tool_calls"] = [
                {
                    "id": f"c{index}",
                    "type": "function",
                    "function": {"name": "f", "arguments": draw(st.text(max_size=5))},
                }
            ]
        if draw(st.booleans()):
            message["tool_call_id"] = draw(st.sampled_from([f"c{index}", "c0", "zz"]))
        messages.append(message)
    return json.dumps(messages).encode()


# ---- running and checking ----------------------------------------------------------------------------


class Outcome:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr


def run_cli(args: list[str], stdin: bytes = b"") -> Outcome:
    """``cupel ARGS`` in-process with ``stdin`` as raw bytes; the promises every run must keep."""
    out, err = io.BytesIO(), io.StringIO()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    wrapper = io.TextIOWrapper(out, encoding="utf-8", write_through=True)  # assemble writes bytes
    sys.stdout, sys.stderr = wrapper, err
    try:
        code = main(args)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    finally:
        wrapper.flush()
        sys.stdin, sys.stdout, sys.stderr = saved
    outcome = Outcome(code, out.getvalue().decode("utf-8"), err.getvalue())
    wrapper.detach()
    check(outcome, args)
    return outcome


def check(outcome: Outcome, args: list[str]) -> None:
    assert outcome.code in (0, 1, 2), (args, outcome.code, outcome.stderr)
    assert "Traceback" not in outcome.stderr
    assert "unexpected" not in outcome.stderr, outcome.stderr
    lines = outcome.stderr.splitlines()
    if outcome.code == 0:
        return
    if outcome.code == 1 and ("--batch" in args or args[0] == "conformance"):
        assert not lines, outcome.stderr  # failed lines and vectors are reported in the output
    else:
        assert len(lines) == 1, outcome.stderr
    # The output must be encodable: no lone surrogate may reach standard output or error.
    outcome.stdout.encode("utf-8")
    outcome.stderr.encode("utf-8")


def in_directory(run: Callable[[Path], None]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        run(Path(directory))


SESSION = (EXAMPLES / "agent-session.json").read_bytes()
CONVERSATION = (EXAMPLES / "agent-conversation.json").read_bytes()
POLICY = (EXAMPLES / "agent-policy.toml").read_bytes()
RESULTS = b"\n".join((EXAMPLES / "rag-results.jsonl").read_bytes().splitlines()[:6]) + b"\n"


def small(seed: bytes, count: int = 6) -> bytes:
    """The first ``count`` records of a JSON array example, to keep each run fast."""
    return json.dumps(json.loads(seed)[:count], indent=1).encode()


# ---- targets ---------------------------------------------------------------------------------------------


@fuzz_settings(1.5)
@given(
    data=st.one_of(mutated(small(SESSION)), generated_items()),
    command=st.sampled_from(["select", "explain", "sensitivity"]),
    form=st.sampled_from(["json", "jsonl", "text"]),
    from_stdin=st.booleans(),
)
def test_fuzz_items(data: bytes, command: str, form: str, from_stdin: bool) -> None:
    def run(directory: Path) -> None:
        source = "-"
        if not from_stdin:
            (directory / "items.json").write_bytes(data)
            source = str(directory / "items.json")
        args = [command, source, "--budget", "300:200"]
        report = directory / "report.html"
        if command == "select":
            args += ["--format", form, "--policy", "debugging"]
        elif command == "explain":
            report.write_text("OLD")
            args += ["--html", str(report), "--policy", "rag"]
        else:
            args += ["--policy", "chat", "--policy", "rag"]
        outcome = run_cli(args, data if from_stdin else b"")
        if command == "explain":
            if outcome.code == 0:
                assert report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
                assert "\x1b" not in outcome.stdout and "\x00" not in outcome.stdout
            else:
                assert report.read_text() == "OLD"
            assert sorted(path.name for path in directory.iterdir()) == sorted(
                ["report.html"] + ([] if from_stdin else ["items.json"])
            )

    in_directory(run)


@fuzz_settings(0.75)
@given(
    data=st.one_of(mutated(CONVERSATION), generated_messages()),
    command=st.sampled_from(["select", "explain"]),
)
def test_fuzz_chat_transcripts(data: bytes, command: str) -> None:
    args = [command, "-", "--budget", "200"] + (["--format", "text"] if command == "select" else [])
    run_cli(args, data)


@fuzz_settings(0.75)
@given(
    data=st.one_of(
        mutated(POLICY).map(lambda text: (text, "toml")),
        mutated(
            b'{"extends": "chat", "scorers": [{"type": "decay", "curve": {"type": "window", '
            b'"max_age": "2h"}, "weight": 2}, {"type": "priority", "weight": 1e308}], "slicer": "greedy"}'
        ).map(lambda text: (text, "json")),
    ),
    command=st.sampled_from(["show", "select"]),
)
def test_fuzz_policy_files(data: tuple[bytes, str], command: str) -> None:
    text, suffix = data

    def run(directory: Path) -> None:
        policy = directory / f"policy.{suffix}"
        policy.write_bytes(text)
        if command == "show":
            run_cli(["policies", "show", str(policy), "--format", "json"])
        else:
            run_cli(["select", "-", "--budget", "400", "--policy", str(policy)], small(SESSION, 8))

    in_directory(run)


@fuzz_settings(0.5)
@given(data=mutated(RESULTS), strategy=st.sampled_from(["greedy", "sequential", "score_ordered"]))
def test_fuzz_rag_results(data: bytes, strategy: str) -> None:
    run_cli(["assemble", "-", "--budget", "2000", "--strategy", strategy, "--summary"], data)


def _vector_seeds() -> list[bytes]:
    if not VECTORS.is_dir():
        return [b'[test]\nname = "x"\nstage = "scoring"\n']
    paths = sorted(VECTORS.rglob("*.toml"))
    return [paths[index].read_bytes() for index in range(0, len(paths), max(1, len(paths) // 6))]


@fuzz_settings(0.5)
@given(data=st.sampled_from(_vector_seeds()).flatmap(mutated))
def test_fuzz_conformance_vectors(data: bytes) -> None:
    def run(directory: Path) -> None:
        (directory / "vector.toml").write_bytes(data)
        outcome = run_cli(["conformance", str(directory)])
        assert outcome.code == 0 or outcome.stdout.startswith("FAIL") or "no vectors" in outcome.stderr

    in_directory(run)


@fuzz_settings(0.75)
@given(
    data=mutated(b"\n".join(b'{"items": ' + small(SESSION, 3).replace(b"\n", b"") + b"}" for _ in range(3))),
    jobs=st.sampled_from(["1", "2"]),
)
def test_fuzz_batch_keeps_one_output_line_per_input_line(data: bytes, jobs: str) -> None:
    def run(directory: Path) -> None:
        batch = directory / "sets.jsonl"
        batch.write_bytes(data)
        outcome = run_cli(["select", "--batch", str(batch), "--budget", "300", "--jobs", jobs])
        if outcome.code == 2:  # only a file-level problem: unreadable, empty, oversized
            assert outcome.stdout == ""
            return
        lines = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        outputs = [json.loads(line) for line in outcome.stdout.split("\n")[:-1]]
        assert len(outputs) == len(lines)
        for number, output in enumerate(outputs, start=1):
            assert ("error" in output) == (output.get("line") == number)
        assert (outcome.code == 1) == any("error" in output for output in outputs)

    if jobs == "1" or EXAMPLES_PER_TARGET > 40:  # worker pools are slow to start; few in the normal run
        in_directory(run)


REPORT = Pipeline(ReflexiveScorer(), GreedySlice(), UShapedPlacer()).dry_run(
    [ContextItem(f"item {n}", 10 * n, kind="Document", future_relevance_hint=n / 10) for n in range(6)]
    + [ContextItem("same", 5), ContextItem("same", 5)],
    ContextBudget(60, 40),
)


@fuzz_settings(2.0)
@given(data=mutated(REPORT.to_json(indent=1).encode()))
def test_fuzz_selection_report_json(data: bytes) -> None:
    try:
        report = SelectionReport.from_json(data)
    except CupelError:
        return
    # Items compare by identity, so compare the wire forms: what was read writes back and reads back alike.
    assert SelectionReport.from_json(report.to_json()).to_dict() == report.to_dict()


# ---- through the real console script -----------------------------------------------------------------------

CONSOLE_CASES = [
    (["select", "-", "--budget", "100"], b'[{"content": "\\ud800", "tokens": 1}]'),
    (["select", "-", "--budget", "100", "--format", "text"], b'[{"content": "\x1b[2Jhi", "tokens": 1}]'),
    (["explain", "-", "--budget", "100"], b"[" * 5000),
    (["select", "-", "--budget", "100"], b"\xef\xbb\xbf" + small(CONVERSATION, 4)),
    (["assemble", "-", "--budget", "900"], b"\xff\xfe" + RESULTS),
]


@pytest.mark.parametrize(("args", "stdin"), CONSOLE_CASES)
def test_console_script_keeps_the_promises(args: list[str], stdin: bytes) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cupel", *args], input=stdin, capture_output=True, check=False, timeout=60
    )
    outcome = Outcome(result.returncode, result.stdout.decode("utf-8"), result.stderr.decode("utf-8"))
    check(outcome, args)
    assert "\x1b" not in outcome.stdout


@fuzz_settings(3.0)
@given(
    fields=st.dictionaries(ITEM_KEYS, JSON_VALUES, max_size=6),
    budget=st.dictionaries(
        st.sampled_from(["maxTokens", "targetTokens", "outputReserve", "reservedSlots"]),
        JSON_VALUES,
        max_size=4,
    ),
)
def test_fuzz_item_and_budget_readers_raise_only_cupel_errors(
    fields: dict[str, Any], budget: dict[str, Any]
) -> None:
    from cupel import wire

    for read, data in ((wire.item_from_dict, fields), (wire.budget_from_dict, budget)):
        with contextlib.suppress(CupelError):
            read(data)
