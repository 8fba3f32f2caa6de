"""Writing replay rows to one JSONL or Parquet file, atomically and in session order.

Rows are written by the client after the whole replay has finished, partition by partition of the
sorted result, into a temporary file beside the target that replaces it only when complete. Tasks
never write, so a task Dask reruns after losing a worker cannot leave partial or duplicate output.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from cupel._atomic import atomic_path
from cupel.distributed._extra import require
from cupel.distributed.replay import SORT_KEY, ReplayResult

__all__ = ["output_format", "result_records", "write_results"]

#: The keys of an error row, after the ``cupel select --batch`` convention ``{"error": ..., "line": ...}``.
ERROR_KEYS = ("session_id", "policy", "budget", "error", "error_kind", "source", "line")


def output_format(path: str | os.PathLike[str]) -> str:
    """``parquet`` for ``.parquet``/``.pq`` files, else ``jsonl``."""
    return "parquet" if Path(path).suffix.lower() in (".parquet", ".pq") else "jsonl"


def _sorted_partitions(result: ReplayResult) -> Iterator[Any]:
    """The rows sorted by session id (Dask sorts across workers), one pandas partition at a time."""
    frame = result.results
    if frame.npartitions > 1:
        frame = frame.sort_values(SORT_KEY)
        # Sorted once and kept on the workers, then fetched one partition at a time.
        if hasattr(result.scheduler, "persist"):
            frame = result.scheduler.persist(frame)
        else:
            (frame,) = require("dask").persist(frame, scheduler=result.scheduler)
    for index in range(frame.npartitions):
        part = frame.get_partition(index).compute(scheduler=result.scheduler)
        yield part.sort_values(SORT_KEY, kind="stable")


def result_records(result: ReplayResult) -> Iterator[dict[str, Any]]:
    """Every row as a JSON-ready dict in session order; error rows keep only :data:`ERROR_KEYS`."""
    for part in _sorted_partitions(result):
        for row in part.to_dict(orient="records"):
            yield _record(row)


def _record(row: Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(row["error"], str):
        return {key: row[key] for key in ERROR_KEYS}
    record = {
        key: (None if isinstance(value, float) and math.isnan(value) else value) for key, value in row.items()
    }
    record["selected"] = json.loads(row["selected"])
    record["exclusions"] = json.loads(row["exclusions"])
    del record["error"], record["error_kind"]
    return record


def write_results(result: ReplayResult, path: str | os.PathLike[str], format: str | None = None) -> int:
    """Write all rows to ``path`` (JSONL or Parquet, by suffix unless ``format``); returns the row count."""
    chosen = format or output_format(path)
    with atomic_path(path) as temporary:
        return _write_parquet(result, temporary) if chosen == "parquet" else _write_jsonl(result, temporary)


def _write_jsonl(result: ReplayResult, temporary: str) -> int:
    count = 0
    with open(temporary, "w", encoding="utf-8") as stream:
        for record in result_records(result):
            stream.write(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")
            count += 1
    return count


def _write_parquet(result: ReplayResult, temporary: str) -> int:
    pyarrow = require("pyarrow")
    parquet = require("pyarrow.parquet")
    writer = None
    count = 0
    try:
        for part in _sorted_partitions(result):
            if part.empty:
                continue
            table = pyarrow.Table.from_pandas(part.reset_index(drop=True), preserve_index=False)
            if writer is None:
                writer = parquet.ParquetWriter(temporary, table.schema)
            writer.write_table(table.cast(writer.schema))
            count += len(part)
    finally:
        if writer is not None:
            writer.close()
    if writer is None:
        empty = result.results._meta  # the columns and dtypes of a result with no rows
        parquet.write_table(pyarrow.Table.from_pandas(empty, preserve_index=False), temporary)
    return count
