"""Where sessions come from: a Dask bag, a Dask dataframe, or JSONL/Parquet files read by Dask.

Every input becomes a list of delayed partitions, each a list of :class:`RawSession` numbered by its
position in the input, so that a session's fallback id (``source:line``) is the same whatever the
partitioning. JSONL files are one partition per file (their ``line`` is the line in the file); Parquet
files are read by ``dask.dataframe.read_parquet`` (one partition per row group or file); bags and
dataframes keep their own partitions. A partition is the unit of memory on a worker: see
docs/replay.md for sizing.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from typing import Any

from cupel import _input
from cupel.distributed._extra import require
from cupel.distributed.partition import RawSession
from cupel.distributed.sessions import OversizedLine

__all__ = ["SessionsLike", "session_partitions"]

SessionsLike = Any
"""A Dask bag, a Dask dataframe, a path or glob, or a sequence of paths and globs."""

_PARQUET = (".parquet", ".pq")


#: Bytes of JSONL per partition unless told otherwise.
DEFAULT_BLOCKSIZE = 32 * 2**20


def session_partitions(
    sessions: SessionsLike, scheduler: Any = None, blocksize: int = DEFAULT_BLOCKSIZE
) -> list[Any]:
    """Delayed partitions (each a ``list[RawSession]``) for any supported input."""
    if isinstance(sessions, str | os.PathLike):
        sessions = [sessions]
    if _is_bag(sessions):
        return _numbered(sessions.to_delayed(), "bag", _records_of_bag, scheduler)
    if _is_dataframe(sessions):
        return _numbered(sessions.to_delayed(), "dataframe", _records_of_frame, scheduler)
    if isinstance(sessions, Sequence) and all(isinstance(entry, str | os.PathLike) for entry in sessions):
        paths = _expand(sessions)
        jsonl = [path for path in paths if not path.lower().endswith(_PARQUET)]
        parquet = [path for path in paths if path.lower().endswith(_PARQUET)]
        partitions: list[Any] = []
        if jsonl:
            partitions.extend(_jsonl_blocks(jsonl, blocksize, scheduler))
        if parquet:
            frame = require("dask.dataframe").read_parquet(parquet)
            partitions.extend(_numbered(frame.to_delayed(), "parquet", _records_of_frame, scheduler))
        return partitions
    raise TypeError(
        "sessions: expected a Dask bag, a Dask dataframe, or JSONL/Parquet paths, "
        f"got {type(sessions).__name__}"
    )


def _is_bag(value: object) -> bool:
    return type(value).__module__.startswith("dask.bag") and hasattr(value, "to_delayed")


def _is_dataframe(value: object) -> bool:
    module = type(value).__module__
    return module.startswith(("dask.dataframe", "dask_expr")) and hasattr(value, "to_delayed")


def _expand(entries: Sequence[str | os.PathLike[str]]) -> list[str]:
    paths: list[str] = []
    for entry in entries:
        text = os.fspath(entry)
        if glob.has_magic(text):
            matched = sorted(glob.glob(text, recursive=True))
            if not matched:
                raise FileNotFoundError(f"sessions: no file matches {text!r}")
            paths.extend(matched)
        elif os.path.isdir(text):
            matched = sorted(
                os.path.join(text, name)
                for name in os.listdir(text)
                if name.lower().endswith((".jsonl", ".json", *_PARQUET))
            )
            if not matched:
                raise FileNotFoundError(f"sessions: {text}: no .jsonl or .parquet files in the directory")
            paths.extend(matched)
        elif os.path.isfile(text):
            paths.append(text)
        else:
            raise FileNotFoundError(f"sessions: {text}: no such file")
    return paths


def _jsonl_blocks(paths: list[str], blocksize: int, scheduler: Any) -> list[Any]:
    """Each file cut into blocks of about ``blocksize`` bytes at line starts; lines counted first."""
    dask = require("dask")
    if blocksize < 1:
        raise ValueError(f"blocksize: expected a positive number of bytes, got {blocksize}")
    blocks: list[tuple[str, int, int]] = []
    for path in paths:
        size = os.path.getsize(path)
        blocks.extend(
            (path, start, min(start + blocksize, size)) for start in range(0, max(size, 1), blocksize)
        )
    counts = dask.compute(
        *[dask.delayed(_count_lines, pure=True)(*block) for block in blocks], scheduler=scheduler
    )
    partitions = []
    first = 1
    for index, (block, count) in enumerate(zip(blocks, counts, strict=True)):
        if index and block[0] != blocks[index - 1][0]:
            first = 1
        partitions.append(dask.delayed(_read_block, pure=True)(*block, first))
        first += count
    return partitions


def _block_lines(path: str, start: int, end: int) -> list[bytes | OversizedLine]:
    """The lines that start at a byte offset in ``[start, end)``; a line over the input cap is not kept."""
    limit = _input.max_input_bytes()
    lines: list[bytes | OversizedLine] = []
    with open(path, "rb") as stream:
        if start > 0:
            stream.seek(start - 1)
            _skip_line(stream)  # the rest of the line that began before ``start`` belongs to the block before
        position = stream.tell()
        while position < end:
            line = stream.readline(limit + 1)
            if not line:
                break
            size = len(line)
            if size > limit and not line.endswith(b"\n"):
                size += _skip_line(stream)
                lines.append(OversizedLine(size, limit))
            else:
                lines.append(line)
            position += size
    return lines


def _skip_line(stream: Any) -> int:
    """Read up to the end of the current line in bounded chunks; returns the bytes read."""
    skipped = 0
    while True:
        chunk = stream.readline(1 << 20)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped


def _count_lines(path: str, start: int, end: int) -> int:
    return len(_block_lines(path, start, end))


def _read_block(path: str, start: int, end: int, first: int) -> list[RawSession]:
    """The block's sessions numbered from ``first``; blank lines are skipped but counted."""
    name = os.path.basename(path)
    return [
        RawSession(name, number, line)  # bytes: decoded strictly where the session is read
        for number, line in enumerate(_block_lines(path, start, end), start=first)
        if isinstance(line, OversizedLine) or line.strip()
    ]


def _records_of_bag(part: list[Any]) -> list[Any]:
    return list(part)


def _records_of_frame(frame: Any) -> list[Any]:
    """A dataframe partition's rows as dicts (a ``session`` text column is taken as the JSON line)."""
    if list(frame.columns) == ["session"]:
        return list(frame["session"])
    return frame.to_dict(orient="records")  # type: ignore[no-any-return]


def _numbered(parts: list[Any], source: str, records: Any, scheduler: Any) -> list[Any]:
    """Partitions numbered by global position: the lengths are counted first (one cheap pass)."""
    dask = require("dask")
    lengths = dask.compute(
        *[dask.delayed(_length, pure=True)(part, records) for part in parts], scheduler=scheduler
    )
    offsets = [0]
    for length in lengths[:-1]:
        offsets.append(offsets[-1] + length)
    return [
        dask.delayed(_number, pure=True)(part, records, source, offset)
        for part, offset in zip(parts, offsets, strict=True)
    ]


def _length(part: Any, records: Any) -> int:
    return len(records(part))


def _number(part: Any, records: Any, source: str, offset: int) -> list[RawSession]:
    return [RawSession(source, offset + index, raw) for index, raw in enumerate(records(part), start=1)]
