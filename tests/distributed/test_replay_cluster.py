"""replay on a real dask.distributed LocalCluster (2 worker processes): same rows as the local path and as
sequential ``cupel select``, for several partitionings, and complete output after a worker is killed."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dask.bag as db
import dask.dataframe as dd
import pandas as pd
import pytest
from benchmarks._sessions import session_lines

from cupel.cli import main
from cupel.distributed import replay, write_results
from distributed import Client, LocalCluster

POLICIES = ["chat", "rag"]
BUDGETS = [None, 1500]
#: Everything but the timing, which differs run to run.
STABLE = [
    "session_id",
    "source",
    "line",
    "policy",
    "budget",
    "error",
    "error_kind",
    "selected",
    "included_tokens",
    "budget_use",
    "exclusions",
    "recall_items",
    "recall_tokens",
    "all_gold",
    "middle_exposure",
]


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as connected,
    ):
        yield connected


@pytest.fixture(scope="module")
def lines() -> list[str]:
    lines = list(session_lines(60, seed=3))
    lines.insert(7, '{"id": "broken", "items": [{"content": "x"}]}')  # no tokens: malformed
    lines.insert(20, "{not json")
    return lines


@pytest.fixture(scope="module")
def sessions_file(tmp_path_factory: pytest.TempPathFactory, lines: list[str]) -> Path:
    path = tmp_path_factory.mktemp("replay") / "sessions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def stable(frame: pd.DataFrame) -> list[dict[str, Any]]:
    rows = frame[STABLE].astype(object).where(frame[STABLE].notna(), None).to_dict(orient="records")
    return [
        {key: (round(value, 12) if isinstance(value, float) else value) for key, value in row.items()}
        for row in rows
    ]


@pytest.fixture(scope="module")
def local_rows(sessions_file: Path) -> list[dict[str, Any]]:
    """The local path: one process, Dask's synchronous scheduler."""
    return stable(replay([sessions_file], POLICIES, BUDGETS, scheduler="synchronous").to_pandas())


@pytest.fixture(scope="module")
def cluster_result(client: Client, sessions_file: Path) -> Any:
    """One replay on the cluster, in several partitions, read by the tests that only inspect its output."""
    return replay([sessions_file], POLICIES, BUDGETS, client=client, blocksize=50_000)


@pytest.mark.parametrize("blocksize", [20_000, 10**9])
def test_cluster_rows_equal_the_local_path_for_any_file_partitioning(
    client: Client, sessions_file: Path, local_rows: list[dict[str, Any]], blocksize: int
) -> None:
    result = replay([sessions_file], POLICIES, BUDGETS, client=client, blocksize=blocksize)
    assert stable(result.to_pandas()) == local_rows
    assert result.results.npartitions >= (2 if blocksize < 10**6 else 1)


def test_bag_and_dataframe_inputs_give_the_same_rows_whatever_their_partitions(
    client: Client, lines: list[str], local_rows: list[dict[str, Any]]
) -> None:
    def without_source(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # A session without an id is named source:line, and an error names its source: only the source
        # differs between inputs.
        renamed = [
            {
                **row,
                "session_id": row["session_id"].split(":")[-1],
                "source": None,
                "error": row["error"] and row["error"].removeprefix(f"{row['source']}: "),
            }
            for row in rows
        ]
        return sorted(renamed, key=lambda row: (row["session_id"], row["policy"], row["budget"]))

    expected = without_source(local_rows)
    for npartitions in (1, 5):
        bag = db.from_sequence(lines, npartitions=npartitions)
        assert without_source(stable(replay(bag, POLICIES, BUDGETS, client=client).to_pandas())) == expected
    frame = dd.from_pandas(pd.DataFrame({"session": lines}), npartitions=4)
    assert without_source(stable(replay(frame, POLICIES, BUDGETS, client=client).to_pandas())) == expected


def test_selected_ids_equal_sequential_cupel_select(
    client: Client, lines: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `select --batch` refuses a file with a line that is not JSON, so that line is left out here.
    sessions_file = tmp_path / "parseable.jsonl"
    sessions_file.write_text("\n".join(line for line in lines if line != "{not json") + "\n")
    rows = replay([sessions_file], ["rag"], [None], client=client, blocksize=50_000).to_pandas()
    assert main(["select", "--batch", str(sessions_file), "--policy", "rag"]) == 1  # the malformed line
    outputs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    inputs = [json.loads(line) for line in sessions_file.read_text().splitlines()]
    by_line = {int(row.line): row for row in rows.itertuples()}
    assert sorted(by_line) == list(range(1, len(outputs) + 1))
    for number, output in enumerate(outputs, start=1):
        row = by_line[number]
        if "error" in output:
            assert isinstance(row.error, str)
            continue
        ids = {item["content"]: item["id"] for item in inputs[number - 1]["items"]}
        assert json.loads(row.selected) == [ids[item["content"]] for item in output["items"]]
        assert row.included_tokens == sum(item["tokens"] for item in output["items"])


def test_malformed_sessions_are_error_rows_and_the_summary_counts_them(cluster_result: Any) -> None:
    result = cluster_result
    rows = result.to_pandas()
    broken = rows[rows.error_kind == "malformed"]
    assert sorted(set(broken.session_id)) == ["broken", "sessions.jsonl:21"]
    assert "items[0]" in broken[broken.session_id == "broken"].error.iloc[0]
    for run in result.summary["runs"]:
        assert run["sessions"] == 62
        assert run["malformed"] == 2
        assert run["selected"] + run["pinned_overflow"] + run["selection_failed"] == 60
        assert run["eval"]["sessions_with_gold"] == run["selected"]


def test_output_files_are_sorted_and_complete(cluster_result: Any, tmp_path: Path) -> None:
    result = cluster_result
    assert write_results(result, tmp_path / "rows.jsonl") == 62 * 4
    records = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    keys = [(r["session_id"], r["source"], r["line"], r["policy"], r["budget"]) for r in records]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    errors = [r for r in records if "error" in r]
    assert errors and all(
        set(r) == {"session_id", "policy", "budget", "error", "error_kind", "source", "line"} for r in errors
    )
    assert write_results(result, tmp_path / "rows.parquet") == 62 * 4
    table = pd.read_parquet(tmp_path / "rows.parquet")
    assert list(table.session_id) == [key[0] for key in keys]


def test_a_worker_killed_mid_run_still_gives_complete_duplicate_free_rows(
    client: Client, tmp_path: Path, local_rows: list[dict[str, Any]], sessions_file: Path
) -> None:
    # Many small partitions, so that the kill lands while tasks are queued or running.
    lines = list(session_lines(200, seed=11))
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pids = client.run(os.getpid)
    outcome: dict[str, Any] = {}

    def run() -> None:
        outcome["result"] = replay([path], POLICIES, BUDGETS, client=client, blocksize=30_000)

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 30
    victim = None
    while victim is None and time.monotonic() < deadline:
        busy = [address for address, tasks in client.processing().items() if tasks]
        if busy:
            victim = busy[0]
            os.kill(pids[victim], signal.SIGKILL)
        else:
            time.sleep(0.005)
    worker.join(timeout=120)
    assert victim is not None, "no task was seen running"
    assert not worker.is_alive()
    rows = outcome["result"].to_pandas()
    keys = list(zip(rows.session_id, rows.policy, rows.budget, strict=True))
    assert len(keys) == len(set(keys)) == 200 * 4
    assert sorted({key[0] for key in keys}) == [f"s{index:08d}" for index in range(200)]
    assert sum(run["sessions"] for run in outcome["result"].summary["runs"]) == 200 * 4
    expected = stable(replay([path], POLICIES, BUDGETS, scheduler="synchronous").to_pandas())
    assert stable(rows) == expected
    client.wait_for_workers(2, timeout=60)
    assert stable(replay([sessions_file], POLICIES, BUDGETS, client=client).to_pandas()) == local_rows
