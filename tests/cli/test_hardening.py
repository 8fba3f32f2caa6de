"""Hostile input: one regression test per defect of the hardening issue, run in-process through main()."""

from __future__ import annotations

import io
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cupel import (
    CompositeScorer,
    ContextBudget,
    ContextItem,
    CupelError,
    GreedySlice,
    MetadataTrustScorer,
    Pipeline,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    UShapedPlacer,
)
from cupel._atomic import atomic_path, write_atomic
from cupel._input import DEFAULT_MAX_INPUT_BYTES, MAX_INPUT_ENV, MAX_JSON_DEPTH
from cupel.cli import main
from cupel.cli._common import EXIT_STATUSES, SELECTION_ERRORS, exit_status_for
from cupel.cli._terminal import display_width, fit
from cupel.diagnostics.report import SelectionReport
from cupel.errors import (
    BudgetOverflowError,
    CupelTypeError,
    InvalidConfigurationError,
    PinnedItemsExceedBudgetError,
)
from cupel.policy import PolicyFileError, get_preset, loads_policy, save_policy

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "examples" / "agent-session.json"


class Run:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr

    @property
    def message(self) -> str:
        lines = self.stderr.strip().splitlines()
        assert len(lines) == 1, self.stderr
        return lines[0]


def run(*args: str | os.PathLike[str], stdin: bytes = b"", monkeypatch: pytest.MonkeyPatch) -> Run:
    """``cupel ARGS`` in-process, with ``stdin`` as raw bytes."""
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    try:
        code = main([os.fspath(arg) for arg in args])
    except SystemExit as exit_:  # argparse
        code = int(exit_.code or 0)
    result = Run(code, out.getvalue(), err.getvalue())
    assert "Traceback" not in result.stderr
    return result


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    yield lambda *args, stdin=b"": run(*args, stdin=stdin, monkeypatch=monkeypatch)


def items_json(*contents: str, **fields: Any) -> str:
    return json.dumps([{"content": content, "tokens": 5, **fields} for content in contents])


# ---- 1. data loss -------------------------------------------------------------------------------


def test_html_report_is_not_truncated_when_the_input_is_bad(cli: Any, tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    report.write_text("OLD")
    surrogate = tmp_path / "items.json"
    surrogate.write_text('[{"content": "caf\\udce9", "tokens": 5}]')
    assert cli("explain", surrogate, "--budget", "100", "--html", report).code == 2
    assert cli("explain", "-", "--budget", "100", "--html", report, stdin=b'[{"content": "\xff"}]').code == 2
    assert report.read_text() == "OLD"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["items.json", "report.html"]


def test_html_report_write_failure_keeps_the_old_file(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = tmp_path / "report.html"
    report.write_text("OLD")
    monkeypatch.setattr("cupel.cli.explain.render_html", lambda *args: "<p>caf\udce9</p>")
    result = cli("explain", SESSION, "--budget", "500", "--html", report)
    assert result.code == 2
    assert "--html" in result.message and "not valid Unicode" in result.message
    assert report.read_text() == "OLD"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_atomic_write_on_a_full_disk_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "policy.toml"
    target.write_text("OLD")

    def full(descriptor: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        write_atomic(target, "NEW" * 1000)
    with pytest.raises(OSError, match="No space"):
        save_policy(get_preset("chat"), target)
    assert target.read_text() == "OLD"
    assert [p.name for p in tmp_path.iterdir()] == ["policy.toml"]


def test_atomic_write_replaces_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.html"
    target.write_text("OLD")
    target.chmod(0o640)
    write_atomic(target, "NEW")
    assert target.read_text() == "NEW"
    assert target.stat().st_mode & 0o777 == 0o640
    with pytest.raises(UnicodeEncodeError):
        write_atomic(target, "caf\udce9")
    assert target.read_text() == "NEW"
    assert [p.name for p in tmp_path.iterdir()] == ["out.html"]


def test_streamed_atomic_write_replaces_on_success_and_keeps_the_old_file_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "rows.jsonl"
    target.write_text("OLD")
    target.chmod(0o640)
    with pytest.raises(RuntimeError, match="worker died"), atomic_path(target) as temporary:
        Path(temporary).write_text("half a row")
        raise RuntimeError("worker died")
    assert target.read_text() == "OLD"
    assert [p.name for p in tmp_path.iterdir()] == ["rows.jsonl"]
    with atomic_path(target) as temporary:
        assert Path(temporary).parent == tmp_path and Path(temporary).name != target.name
        Path(temporary).write_text("NEW")
    assert target.read_text() == "NEW"
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["rows.jsonl"]


# ---- 2. lone surrogates ---------------------------------------------------------------------------

SURROGATE = b'[{"content": "ok", "tokens": 1}, {"content": "\\ud800", "tokens": 5}]'


@pytest.mark.parametrize("command", ["select", "explain"])
def test_lone_surrogates_are_rejected_naming_the_item_and_field(cli: Any, command: str) -> None:
    result = cli(command, "-", "--budget", "100", stdin=SURROGATE)
    assert result.code == 2
    assert result.message == (
        f"cupel {command}: <stdin>: [1].content: lone surrogate \\ud800 is not Unicode text "
        "(a \\ud800-\\udfff escape must be half of a pair)"
    )


def test_surrogate_pairs_are_fine(cli: Any) -> None:
    result = cli("select", "-", "--budget", "100", stdin=b'[{"content": "\\ud83d\\ude00", "tokens": 1}]')
    assert result.code == 0 and json.loads(result.stdout)[0]["content"] == "😀"


def test_lone_surrogate_in_a_batch_line_is_that_line_error(cli: Any, tmp_path: Path) -> None:
    batch = tmp_path / "sets.jsonl"
    batch.write_bytes(
        b'{"items": [{"content": "a", "tokens": 1}]}\n{"items": [{"content": "\\udce9", "tokens": 1}]}\n'
    )
    result = cli("select", "--batch", batch, "--budget", "10")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.code == 1 and len(lines) == 2 and "items" in lines[0]
    assert lines[1]["line"] == 2 and "items[0].content: lone surrogate \\udce9" in lines[1]["error"]


def test_lone_surrogate_in_a_policy_json_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyFileError, match=r"extends: lone surrogate \\udce9"):
        loads_policy('{"extends": "caf\\udce9"}')


# ---- 3. one reader for stdin and files -----------------------------------------------------------


def test_stdin_and_files_are_decoded_alike(cli: Any, tmp_path: Path) -> None:
    data = b'[{"content": "caf\xe9", "tokens": 5}]'
    path = tmp_path / "latin1.json"
    path.write_bytes(data)
    from_file = cli("select", path, "--budget", "100")
    from_stdin = cli("select", "-", "--budget", "100", stdin=data)
    assert from_file.code == from_stdin.code == 2
    problem = "not UTF-8 text (invalid byte 0xe9 at line 1, byte offset 17)"
    assert from_file.message == f"cupel select: {path}: {problem}"
    assert from_stdin.message == f"cupel select: <stdin>: {problem}"


def test_a_byte_order_mark_is_accepted(cli: Any, tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf" + items_json("hello").encode()
    assert cli("select", "-", "--budget", "100", stdin=data).code == 0
    policy = tmp_path / "p.toml"
    policy.write_bytes(b'\xef\xbb\xbfextends = "chat"\n')
    assert cli("select", "-", "--budget", "100", "--policy", policy, stdin=data).code == 0


# ---- 4. unbounded input -----------------------------------------------------------------------------


def test_input_is_capped(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert DEFAULT_MAX_INPUT_BYTES == 512 * 1024 * 1024
    monkeypatch.setenv(MAX_INPUT_ENV, "1KiB")
    result = cli("select", "/dev/zero", "--budget", "10")
    assert result.code == 2
    assert result.message == (
        "cupel select: /dev/zero: input is larger than 1 KiB; "
        f"set {MAX_INPUT_ENV} to a larger size to read it"
    )
    assert cli("select", "-", "--budget", "10", stdin=b" " * 2000).code == 2
    monkeypatch.setenv(MAX_INPUT_ENV, "lots")
    assert (
        "CUPEL_MAX_INPUT_BYTES: expected a positive size" in cli("select", SESSION, "--budget", "9").message
    )


# ---- 5. one-line errors instead of tracebacks --------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ('"1000000000d"', 'is too long (at most 999,999,999 days), got "1000000000d"'),
        ("1e23", "is too long (at most 999,999,999 days), got 1e+23"),
        ('"1e23s"', 'must be a duration such as "30m"'),
        ("1e-09", "must be at least one microsecond (1us), got 1e-09"),
        ('"0s"', 'must be greater than zero, got "0s"'),
    ],
)
def test_decay_durations_out_of_range(cli: Any, tmp_path: Path, value: str, problem: str) -> None:
    text = (
        f'extends = "chat"\nscorers = [{{type = "decay", curve = {{type = "window", max_age = {value}}}}}]\n'
    )
    with pytest.raises(PolicyFileError) as raised:
        loads_policy(text, "toml")
    assert problem in str(raised.value)
    policy = tmp_path / "p.toml"
    policy.write_text(text)
    result = cli("select", SESSION, "--budget", "100", "--policy", policy)
    assert result.code == 2 and problem in result.message
    assert result.message.count("p.toml") == 1  # no doubled prefix


def test_deeply_nested_json(cli: Any, tmp_path: Path) -> None:
    deep = "[" * 1000 + "]" * 1000
    result = cli("select", "-", "--budget", "10", stdin=deep.encode())
    assert result.message == f"cupel select: <stdin>: JSON nested deeper than {MAX_JSON_DEPTH} levels"
    shallow_but_deep_metadata = json.dumps([{"content": "x", "tokens": 1, "metadata": {"a": [[[[[1]]]]]}}])
    assert cli("select", "-", "--budget", "10", stdin=shallow_but_deep_metadata.encode()).code == 0
    nested = '{"extends": "chat", "x": ' + "[" * 300 + "]" * 300 + "}"
    policy = tmp_path / "p.json"
    policy.write_text(nested)
    result = cli("select", SESSION, "--budget", "100", "--policy", policy)
    assert result.code == 2 and "nested deeper than" in result.message


def test_huge_integers(cli: Any) -> None:
    hint = json.dumps([{"content": "x", "tokens": 1, "futureRelevanceHint": 10**400}])
    result = cli("select", "-", "--budget", "10", stdin=hint.encode())
    assert result.message == (
        "cupel select: <stdin>: item 0: future_relevance_hint is beyond the float range, "
        "got an integer of 401 digits"
    )
    with pytest.raises(InvalidConfigurationError, match="future_relevance_hint"):
        ContextItem("x", 1, future_relevance_hint=10**400)
    # cupel:trust: an integer beyond the float range reads like its digits as a string (non-finite), which
    # the specification scores with the default.
    item = ContextItem("x", 1, metadata={"cupel:trust": 10**400})
    assert MetadataTrustScorer(0.25).score_all([item]) == [0.25]
    digits = b'[{"content": "x", "tokens": ' + b"9" * 5000 + b"}]"
    assert "Exceeds the limit" in cli("select", "-", "--budget", "10", stdin=digits).message


def test_mistyped_tags_are_a_one_line_error(cli: Any) -> None:
    # Found by fuzzing: "tags": false raised a bare TypeError.
    result = cli("select", "-", "--budget", "10", stdin=b'[{"content": "x", "tokens": 1, "tags": false}]')
    assert result.message == "cupel select: <stdin>: item 0: tags must be an iterable of strings, got False"


def test_raw_control_character_message_is_complete(cli: Any) -> None:
    result = cli("select", "-", "--budget", "10", stdin=b'[{"content": "a\x01b", "tokens": 1}]')
    assert result.message == (
        "cupel select: <stdin>: invalid JSON at line 1, column 16: "
        "Invalid control character U+0001 (write it as \\u0001)"
    )


# ---- 6. batch alignment ---------------------------------------------------------------------------


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_every_batch_line_gets_one_output_line(cli: Any, tmp_path: Path, jobs: str) -> None:
    good = b'{"items": [{"content": "a", "tokens": 1}]}'
    batch = tmp_path / "sets.jsonl"
    batch.write_bytes(b"\n".join([good, b"", b"{bad", b"   ", b"\xff\xfe", b"[1]", good]) + b"\n")
    result = cli("select", "--batch", batch, "--budget", "10", "--jobs", jobs)
    outputs = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.code == 1
    assert len(outputs) == 7
    assert "items" in outputs[0] and "items" in outputs[6]
    assert [entry.get("line") for entry in outputs] == [None, 2, 3, 4, 5, 6, None]
    assert outputs[1]["error"].startswith("line 2: blank line")
    assert outputs[2]["error"].startswith("line 3: invalid JSON at column 2")
    assert outputs[4]["error"].startswith("line 5: not UTF-8 text")
    assert outputs[5]["error"] == "line 6: expected a JSON object with 'items' or 'messages'"


def test_a_clean_batch_exits_0(cli: Any, tmp_path: Path) -> None:
    batch = tmp_path / "sets.jsonl"
    batch.write_text('{"items": [{"content": "a", "tokens": 1}]}\n' * 3)
    result = cli("select", "--batch", batch, "--budget", "10")
    assert result.code == 0 and len(result.stdout.splitlines()) == 3


def test_batch_budget_error_has_one_prefix(cli: Any, tmp_path: Path) -> None:
    batch = tmp_path / "sets.jsonl"
    batch.write_text('{"items": [], "budget": {"maxTokens": -1}}\n')
    output = json.loads(cli("select", "--batch", batch).stdout)
    assert output["error"].startswith("line 1: budget: ") and "budget: budget" not in output["error"]


# ---- 7. exit statuses -------------------------------------------------------------------------------


def test_exit_status_table_in_the_docs_matches_the_code() -> None:
    text = (ROOT / "docs" / "cli.md").read_text()
    section = text.split("## Errors and exit status", 1)[1]
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", section, re.MULTILINE)
    assert {int(code): meaning for code, meaning in rows} == EXIT_STATUSES


def test_exit_status_for_each_kind_of_error() -> None:
    assert exit_status_for(PinnedItemsExceedBudgetError(10, 5)) == 1
    assert exit_status_for(BudgetOverflowError(10, 5)) == 1
    assert all(exit_status_for(cls.__new__(cls)) == 1 for cls in SELECTION_ERRORS)
    assert exit_status_for(InvalidConfigurationError("x")) == 2
    assert exit_status_for(CupelTypeError("x")) == 2
    assert exit_status_for(PolicyFileError("x", "y")) == 2


def test_malformed_chat_transcript_exits_2(cli: Any) -> None:
    result = cli("select", "-", "--budget", "10", stdin=b'[{"role": "user", "content": 5}]')
    assert result.code == 2 and "messages[0].content" in result.message


def test_the_same_policy_twice_exits_2(cli: Any) -> None:
    result = cli("sensitivity", SESSION, "--budget", "100", "--policy", "chat", "--policy", "chat")
    assert result.code == 2
    assert result.message == (
        "cupel sensitivity: --policy chat is given more than once; compare different policies"
    )


def test_usage_errors_are_one_line(cli: Any) -> None:
    result = cli("select", SESSION, "--budget")
    assert result.code == 2
    assert (
        result.message == "cupel select: argument --budget: expected one argument (see cupel select --help)"
    )


# ---- 8. terminal injection -------------------------------------------------------------------------


def test_control_characters_are_escaped_in_terminal_output(cli: Any) -> None:
    hostile = items_json("\x1b[2J\x1b]0;pwned\x07 ok\x00 \u202egnp.exe", kind="\x1b[31mKind")
    explained = cli("explain", "-", "--budget", "100", stdin=hostile.encode())
    as_text = cli("select", "-", "--budget", "100", "--format", "text", stdin=hostile.encode())
    for output in (explained.stdout, as_text.stdout):
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u202e]", output)
        assert "\\x1b[2J" in output and "\\x00" in output and "\\u202e" in output
    assert json.loads(cli("select", "-", "--budget", "100", stdin=hostile.encode()).stdout)[0][
        "content"
    ].startswith("\x1b[2J")  # JSON output stays exact


def test_wide_characters_keep_columns(cli: Any) -> None:
    assert display_width("日本語") == 6 and display_width("e\u0301") == 1
    assert fit("日本語テキスト", 7) == "日本語…"
    data = json.dumps(
        [
            {"content": "日本語のテキスト" * 10, "tokens": 5, "kind": "日本語日本語日本語"},
            {"content": "plain text " * 10, "tokens": 5, "kind": "Message"},
        ]
    )
    output = cli("explain", "-", "--budget", "100", "--width", "20", stdin=data.encode()).stdout
    rows = [line for line in output.splitlines() if line.startswith("    1 ") or line.startswith("    2 ")]
    assert len(rows) == 2
    assert len({display_width(row[: row.index("Scored") + 6]) for row in rows}) == 1


# ---- 9. extreme weights -----------------------------------------------------------------------------


def test_huge_weights_normalise_like_equal_weights() -> None:
    items = [ContextItem(f"item {n}", 10, priority=n, future_relevance_hint=(n % 3) / 3) for n in range(12)]
    budget = ContextBudget(50, 50)
    huge = CompositeScorer([(PriorityScorer(), 1e308), (ReflexiveScorer(), 1e308)])
    equal = CompositeScorer([(PriorityScorer(), 1), (ReflexiveScorer(), 1)])
    assert huge.normalized_weights == equal.normalized_weights == (0.5, 0.5)
    assert huge.score_all(items) == equal.score_all(items)
    assert max(huge.score_all(items)) > 0
    placer = UShapedPlacer()
    assert Pipeline(huge, GreedySlice(), placer).run(items, budget) == Pipeline(
        equal, GreedySlice(), placer
    ).run(items, budget)
    mixed = CompositeScorer([(PriorityScorer(), 1e308), (RecencyScorer(), 1e300), (ReflexiveScorer(), 1e308)])
    assert all(math.isfinite(weight) and weight > 0 for weight in mixed.normalized_weights)
    with pytest.raises(InvalidConfigurationError, match="must be finite"):
        CompositeScorer([(PriorityScorer(), 10**400)])


# ---- 10. custom components ---------------------------------------------------------------------------


class TwiceSlicer:
    def slice(self, scored: Any, budget: Any) -> Any:
        return [scored[0].item, scored[0].item]


class NoneSlicer:
    def slice(self, scored: Any, budget: Any) -> Any:
        return None


class GeneratorSlicer:
    def slice(self, scored: Any, budget: Any) -> Any:
        return (entry.item for entry in scored)


class StringScorer:
    def __init__(self, value: object) -> None:
        self.value = value

    def score(self, item: Any, items: Any) -> Any:
        return self.value


ITEMS = [ContextItem("a", 1), ContextItem("b", 1)]
BUDGET = ContextBudget(10, 10)


@pytest.mark.parametrize(
    ("slicer", "message"),
    [
        (TwiceSlicer(), "slicer TwiceSlicer.slice returned the same item twice ('a')"),
        (NoneSlicer(), "slicer NoneSlicer.slice must return a list of items, got NoneType"),
        (GeneratorSlicer(), "slicer GeneratorSlicer.slice must return a list of items, got generator"),
    ],
)
def test_custom_slicer_output_is_checked(slicer: Any, message: str) -> None:
    for method in ("run", "dry_run"):
        with pytest.raises(CupelError) as raised:
            getattr(Pipeline(ReflexiveScorer(), slicer, UShapedPlacer()), method)(ITEMS, BUDGET)
        assert str(raised.value) == message


@pytest.mark.parametrize("value", ["0.5", None, [0.5], True])
def test_custom_scorer_must_return_numbers(value: object) -> None:
    with pytest.raises(CupelTypeError) as raised:
        Pipeline(StringScorer(value), GreedySlice(), UShapedPlacer()).run(ITEMS, BUDGET)
    assert str(raised.value) == (
        f"scorer StringScorer.score returned {value!r} for item 0 ('a'); a score must be a number"
    )


def test_custom_scorer_numbers_of_any_real_type_are_accepted() -> None:
    from fractions import Fraction

    selected = Pipeline(StringScorer(Fraction(1, 3)), GreedySlice(), UShapedPlacer()).run(ITEMS, BUDGET)
    assert len(selected) == 2


# ---- 11. NaN in reports ------------------------------------------------------------------------------


def test_reports_with_non_finite_scores_are_strict_json() -> None:
    scores = iter([math.nan, math.inf, -math.inf])

    class Odd:
        def score(self, item: Any, items: Any) -> float:
            return next(scores)

    items = [ContextItem("a", 1), ContextItem("b", 1), ContextItem("c", 100)]
    report = Pipeline(Odd(), GreedySlice(), UShapedPlacer()).dry_run(items, ContextBudget(50, 50))
    text = report.to_json()

    def reject(name: str) -> None:
        raise AssertionError(f"bare {name} in the JSON")

    data = json.loads(text, parse_constant=reject)
    written = sorted(str(entry["score"]) for entry in data["included"] + data["excluded"])
    assert written == ["-Infinity", "Infinity", "NaN"]
    again = SelectionReport.from_json(text)
    read = [entry.score for entry in again.included + again.excluded]
    assert sum(math.isnan(score) for score in read) == 1
    assert sorted(score for score in read if not math.isnan(score)) == [-math.inf, math.inf]
    with pytest.raises(CupelError, match="NaN is not a JSON number"):
        SelectionReport.from_json(text.replace('"NaN"', "NaN"))


def test_nan_in_metadata_is_a_clear_error() -> None:
    report = Pipeline(ReflexiveScorer(), GreedySlice(), UShapedPlacer()).dry_run(
        [ContextItem("a", 1, metadata={"x": math.nan})], BUDGET
    )
    with pytest.raises(CupelTypeError, match="value cannot be written as JSON"):
        report.to_json()


# ---- 12. cosmetics -------------------------------------------------------------------------------------


def test_policy_errors_name_the_file_once(cli: Any, tmp_path: Path) -> None:
    policy = tmp_path / "p.toml"
    policy.write_text("scorers = [")
    result = cli("select", SESSION, "--budget", "100", "--policy", policy)
    assert result.message.startswith(f"cupel select: --policy: {policy}: invalid TOML: ")
    assert result.message.count(str(policy)) == 1 and "<policy>" not in result.message


def test_policy_directory(cli: Any, tmp_path: Path) -> None:
    result = cli("select", SESSION, "--budget", "100", "--policy", tmp_path)
    assert result.message == f"cupel select: --policy: {tmp_path}: is a directory, expected a policy file"


def test_ignored_options_are_rejected(cli: Any, tmp_path: Path) -> None:
    assert cli("select", SESSION, "--budget", "100", "--jobs", "2").message == (
        "cupel select: --jobs applies only to --batch"
    )
    batch = tmp_path / "sets.jsonl"
    batch.write_text('{"items": []}\n')
    assert cli("select", "--batch", batch, "--budget", "9", "--format", "text").message == (
        "cupel select: --format does not apply to --batch, which always writes one JSON object per line"
    )


def test_conformance_without_vectors_exits_2(cli: Any, tmp_path: Path) -> None:
    result = cli("conformance", tmp_path)
    assert result.code == 2
    assert result.message == f"cupel conformance: no vectors (*.toml files) found in {tmp_path}"


def test_select_help_says_budget_is_required(cli: Any) -> None:
    assert "required, except with --batch" in " ".join(cli("select", "--help").stdout.split())


def test_console_script_never_shows_a_traceback(tmp_path: Path) -> None:
    """The same promises hold through the installed entry point, stdin included."""
    command = [sys.executable, "-m", "cupel", "select", "-", "--budget", "10"]
    result = subprocess.run(command, input=b"\xff" * 10, capture_output=True, check=False, timeout=60)
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr.decode() == (
        "cupel select: <stdin>: not UTF-8 text (invalid byte 0xff at line 1, byte offset 0)\n"
    )
