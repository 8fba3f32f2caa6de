"""What needs no cluster: reading sessions, one partition's rows, the summary, the CLI."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks._sessions import session_lines
from hypothesis import given, settings
from hypothesis import strategies as st

from cupel.cli import main
from cupel.distributed import MalformedSession, parse_session, policy_documents, replay
from cupel.distributed.partition import RawSession, ReplayPlan, replay_records
from cupel.distributed.sessions import session_record
from cupel.distributed.summary import finish_summary, merge_partials, partial_summary, render_summary
from cupel.policy import get_preset, loads_policy, policy_to_dict
from tests.profiles import examples

PLAN = ReplayPlan(policy_documents(["chat", "rag"]), (("session", None), ("900", {"maxTokens": 900})))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("[1, 2]", "expected a JSON object with 'items' or 'messages', got an array"),
        ('{"budget": {"maxTokens": 10}}', "expected a JSON object with 'items' or 'messages'"),
        ('{"items": {"a": 1}}', "items: expected an array of items, got an object"),
        ('{"items": [{"content": "x"}]}', "items[0]: missing required field 'tokens'"),
        ('{"items": [], "budget": {"maxTokens": -1}}', "budget:"),
        ('{"messages": [{"content": "no role"}]}', "messages: expected an array of {role, content} objects"),
        ('{"id": true, "items": []}', "id: expected a non-empty string or a whole number, got True"),
        ('{"items": [{"id": "a", "content": "x", "tokens": 1}], "gold": ["b"]}', "no item id 'b'"),
    ],
)
def test_a_malformed_session_names_the_field(raw: str, message: str) -> None:
    with pytest.raises(MalformedSession, match=message.replace("[", r"\[").replace("{", r"\{")):
        parse_session(session_record(raw), "s")


def test_item_ids_come_from_the_item_then_its_metadata_then_its_position() -> None:
    record = session_record(
        '{"items": [{"id": "a", "content": "x", "tokens": 1}, '
        '{"content": "y", "tokens": 1, "metadata": {"id": 7}}, {"content": "z", "tokens": 1}]}'
    )
    assert parse_session(record, "s").item_ids == ("a", "7", "2")


def test_every_session_gets_one_row_per_policy_and_budget_and_errors_do_not_stop_the_rest() -> None:
    lines = [*session_lines(5), "oops", '{"items": []}']
    rows = replay_records([RawSession("f", n, line) for n, line in enumerate(lines, start=1)], PLAN)
    assert len(rows) == len(lines) * 4
    keys = [(row["session_id"], row["policy"], row["budget"]) for row in rows]
    assert len(set(keys)) == len(keys) and keys == sorted(keys)
    oops = [row for row in rows if row["session_id"] == "f:6"]
    assert {row["error_kind"] for row in oops} == {"malformed"}
    missing = [row for row in rows if row["session_id"] == "f:7" and row["budget"] == "session"]
    assert [row["error"] for row in missing] == [
        "budget: missing; give 'budget' on the line or a replay budget"
    ] * 2


def test_pinned_items_over_the_budget_are_counted_as_pinned_overflow() -> None:
    line = json.dumps({"id": "p", "items": [{"content": "x", "tokens": 500, "pinned": True}]})
    rows = replay_records([RawSession("f", 1, line)], PLAN)
    assert [row["error_kind"] for row in rows if row["budget"] == "900"] == [None, None]
    small = ReplayPlan(PLAN.policies, (("100", {"maxTokens": 100}),))
    rows = replay_records([RawSession("f", 1, line)], small)
    assert {row["error_kind"] for row in rows} == {"pinned_overflow"}
    summary = finish_summary(merge_partials([partial_summary(rows)]))
    assert [run["pinned_overflow"] for run in summary["runs"]] == [1, 1]


def test_policies_travel_as_documents_that_read_back_equal() -> None:
    (name, document), *_ = policy_documents({"mine": get_preset("rag")})
    assert name == "mine"
    assert policy_to_dict(loads_policy(document)) == policy_to_dict(get_preset("rag"))
    with pytest.raises(Exception, match="duplicate policy name 'chat'"):
        policy_documents(["chat", "chat"])


ROWS = replay_records(
    [RawSession("f", n, line) for n, line in enumerate([*session_lines(30, seed=5), "x"], start=1)], PLAN
)


def _stable(summary: dict[str, object]) -> str:
    return json.dumps(summary, sort_keys=True, default=str)


@settings(max_examples=examples(15), deadline=None)
@given(st.permutations(range(len(ROWS))), st.lists(st.integers(0, len(ROWS)), max_size=6))
def test_the_summary_does_not_depend_on_row_order_or_partitioning(order: list[int], cuts: list[int]) -> None:
    whole = finish_summary(merge_partials([partial_summary(ROWS)]))
    shuffled = [ROWS[index] for index in order]
    bounds = [0, *sorted(cuts), len(shuffled)]
    parts = [partial_summary(shuffled[a:b]) for a, b in itertools.pairwise(bounds)]
    merged = finish_summary(merge_partials(reversed(parts)))
    for left, right in zip(whole["runs"], merged["runs"], strict=True):
        assert _stable(left) == _stable(right)


def test_summary_percentiles_are_true_of_the_rows() -> None:
    summary = finish_summary(merge_partials([partial_summary(ROWS)]))
    for run in summary["runs"]:
        uses = sorted(
            row["budget_use"]
            for row in ROWS
            if row["policy"] == run["policy"] and row["budget"] == run["budget"] and row["error"] is None
        )
        median = uses[math.ceil(len(uses) / 2) - 1]
        assert run["budget_use"]["p50"] - 0.05 < median <= run["budget_use"]["p50"]
        assert run["selection_ms"]["p99"] <= run["selection_ms"]["max"]
    for form in ("text", "json", "html"):
        assert "chat" in render_summary(summary, form)


def test_the_text_summary_counts_one_session_in_the_singular() -> None:
    (first,) = [row for row in ROWS if row["error"] is None][:1]
    one = [row for row in ROWS if row["session_id"] == first["session_id"]]
    text = render_summary(finish_summary(merge_partials([partial_summary(one)])), "text")
    assert f"@ budget {first['budget']}: 1 session\n" in text
    assert "eval means (1 session with gold)" in text
    assert "1 sessions" not in text
    many = render_summary(finish_summary(merge_partials([partial_summary(ROWS)])), "text")
    assert ": 31 sessions\n" in many


def test_replay_rejects_bad_arguments_with_one_line(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        replay([tmp_path / "missing.jsonl"], ["chat"])
    with pytest.raises(Exception, match="budgets: expected MAX or MAX:TARGET"):
        replay([tmp_path], ["chat"], ["lots"])
    with pytest.raises(TypeError, match="sessions: expected a Dask bag"):
        replay(42, ["chat"])


def test_cli_replay_writes_rows_and_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sessions = tmp_path / "s.jsonl"
    sessions.write_text("\n".join([*session_lines(12), "{bad"]) + "\n")
    out, summary = tmp_path / "rows.jsonl", tmp_path / "summary.json"
    options = ["-o", str(out), "--summary", str(summary), "--summary-format", "json"]
    code = main(
        # --jobs 1: Dask's synchronous scheduler; the rows and summary do not depend on worker processes.
        [
            "replay",
            str(sessions),
            "--jobs",
            "1",
            "--policy",
            "chat",
            "--policy",
            "rag",
            "--budget",
            "1500",
            *options,
        ]
    )
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 13 * 2
    assert next(row for row in rows if "error" in row)["line"] == 13
    runs = json.loads(summary.read_text())["runs"]
    assert [(run["policy"], run["budget"], run["sessions"], run["malformed"]) for run in runs] == [
        ("chat", "1500", 13, 1),
        ("rag", "1500", 13, 1),
    ]
    assert not [path for path in tmp_path.iterdir() if path.name.endswith(".tmp")]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--scheduler", "local:0"], "--scheduler: expected local:N"),
        (["--jobs", "0"], "--jobs must be at least 1"),
        (["--blocksize", "huge"], "--blocksize: expected a size"),
        (["--policy", "nope"], "--policy: unknown policy 'nope'"),
    ],
)
def test_cli_replay_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], message: str
) -> None:
    sessions = tmp_path / "s.jsonl"
    sessions.write_text(next(session_lines(1)) + "\n")
    assert main(["replay", str(sessions), *arguments]) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1


def test_without_dask_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from cupel.distributed._extra import require

    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ImportError, match=r"pip install 'pycupel\[dask\]'"):
        require("dask")


def test_importing_cupel_and_the_cli_does_not_import_dask() -> None:
    code = (
        "import sys, cupel, cupel.cli, cupel.distributed; cupel.cli.build_parser(); "
        "print('dask' in sys.modules)"
    )
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        == "False\n"
    )


def test_parquet_sessions_as_json_lines_or_as_columns_give_the_jsonl_rows(tmp_path: Path) -> None:
    import pandas as pd

    lines = list(session_lines(8, seed=2))
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + "\n")
    pd.DataFrame({"session": lines}).to_parquet(tmp_path / "lines.parquet")
    records = [json.loads(line) for line in lines]
    columns = pd.DataFrame(
        {
            "id": [record["id"] for record in records],
            "items": [record["items"] for record in records],  # nested values, read back as numpy arrays
            "budget": [json.dumps(record["budget"]) for record in records],  # JSON text
            "gold": [json.dumps(record.get("gold")) if "gold" in record else None for record in records],
        }
    )
    columns.to_parquet(tmp_path / "columns.parquet")

    def rows(path: Path) -> list[tuple[object, ...]]:
        frame = replay([path], ["chat"], scheduler="synchronous").to_pandas()
        return list(
            zip(
                frame.session_id,
                frame.selected,
                frame.error.isna(),
                frame.recall_items.round(12),
                strict=True,
            )
        )

    expected = rows(tmp_path / "s.jsonl")
    assert all(ok for _, _, ok, _ in expected)
    assert rows(tmp_path / "lines.parquet") == expected
    assert rows(tmp_path / "columns.parquet") == expected
