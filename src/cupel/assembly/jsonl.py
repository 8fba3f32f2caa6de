"""Retrieval results as JSON Lines: one result per line (the ``cupel assemble`` input format).

Each non-blank line is a JSON object::

    {"document": {"id": "kb-17", "path": "docs/keys.md", "modified_at": "2024-05-02T09:30:00Z"},
     "chunk": {"id": "kb-17#2", "text": "Rotate keys every 90 days.", "sequence": 2, "byte_offset": 812},
     "score": 0.91, "semantic_score": 0.88, "lexical_score": 12.4}

Required: ``document.id``, ``document.path``, ``chunk.id``, ``chunk.text`` (strings), ``chunk.sequence`` (an
integer >= 0) and ``score`` (a number). Optional: ``chunk.byte_offset`` (integer >= 0, default 0),
``semantic_score`` and ``lexical_score`` (numbers or null), ``document.modified_at`` (an ISO 8601 timestamp
with a UTC offset, or null). Other keys are ignored. Lines that share a ``document.id`` must agree on the
document's path and timestamp.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from cupel import _input
from cupel.assembly._validate import lone_surrogate
from cupel.assembly.types import Chunk, Document, RetrievalResult
from cupel.errors import CupelError

__all__ = ["ResultsFormatError", "parse_results", "read_results", "result_to_dict"]


class ResultsFormatError(CupelError, ValueError):
    """A results file is not valid JSONL of the expected shape.

    The message is one line and starts with ``source:line[:column]:``; ``line``, ``column`` and ``field``
    are also available as attributes (``None`` where they do not apply).
    """

    def __init__(
        self,
        detail: str,
        *,
        source: str,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
    ) -> None:
        self.detail = detail
        self.source = source
        self.line = line
        self.column = column
        self.field = field
        location = source
        if line is not None:
            location += f":{line}"
            if column is not None:
                location += f":{column}"
        super().__init__(f"{location}: {detail}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (self.detail, self.source, self.line, self.column, self.field))


def _rebuild_error(
    detail: str, source: str, line: int | None, column: int | None, field: str | None
) -> ResultsFormatError:
    return ResultsFormatError(detail, source=source, line=line, column=column, field=field)


def _describe(value: object) -> str:
    if isinstance(value, bool):
        kind = "a boolean"
    elif value is None:
        return "null"
    elif isinstance(value, int | float):
        kind = "a number"
    elif isinstance(value, str):
        kind = "a string"
    elif isinstance(value, list):
        kind = "an array"
    else:
        kind = "an object"
    shown = json.dumps(value, ensure_ascii=False)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{kind} ({shown})"


class _Line:
    """Typed field access on one parsed line, with errors that name the line and the field."""

    __slots__ = ("line_number", "obj", "source")

    def __init__(self, obj: Mapping[str, Any], number: int, source: str) -> None:
        self.obj = obj
        self.line_number = number
        self.source = source

    def error(self, detail: str, field: str | None = None) -> ResultsFormatError:
        return ResultsFormatError(detail, source=self.source, line=self.line_number, field=field)

    def get(self, path: str, *, required: bool) -> Any:
        node: Any = self.obj
        walked: list[str] = []
        for part in path.split("."):
            if not isinstance(node, Mapping):
                where = ".".join(walked)
                raise self.error(f"field {where!r} must be an object, got {_describe(node)}", where)
            walked.append(part)
            if part not in node:
                if required:
                    raise self.error(f"missing field {path!r}", path)
                return None
            node = node[part]
        if node is None and required:
            raise self.error(f"field {path!r} must not be null", path)
        return node

    def string(self, path: str) -> str:
        value = self.get(path, required=True)
        if not isinstance(value, str):
            raise self.error(f"field {path!r} must be a string, got {_describe(value)}", path)
        if not value:
            raise self.error(f"field {path!r} must not be empty", path)
        position = lone_surrogate(value)
        if position is not None:
            raise self.error(
                f"field {path!r} contains a lone surrogate (U+{ord(value[position]):04X} at index "
                f"{position}), which is not valid Unicode text",
                path,
            )
        return value

    def integer(self, path: str, *, required: bool = True, default: int = 0) -> int:
        value = self.get(path, required=required)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"field {path!r} must be an integer, got {_describe(value)}", path)
        if value < 0:
            raise self.error(f"field {path!r} must be >= 0, got {value}", path)
        return value

    def number(self, path: str, *, required: bool = True) -> float | None:
        value = self.get(path, required=required)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(f"field {path!r} must be a number, got {_describe(value)}", path)
        # Python's json module accepts NaN and Infinity literals, and integers of any size; scores must be
        # finite floats.
        try:
            number = float(value)
        except OverflowError:
            raise self.error(
                f"field {path!r} must be a finite number, got an integer too large for a float", path
            ) from None
        if not math.isfinite(number):
            raise self.error(f"field {path!r} must be a finite number, got {value}", path)
        return number

    def timestamp(self, path: str) -> datetime | None:
        value = self.get(path, required=False)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.error(f"field {path!r} must be an ISO 8601 string, got {_describe(value)}", path)
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise self.error(f"field {path!r} is not an ISO 8601 timestamp: {value!r}", path) from None
        if moment.tzinfo is None:
            raise self.error(f"field {path!r} needs a UTC offset (e.g. 'Z' or '+02:00'): {value!r}", path)
        return moment


def _parse_line(line: _Line) -> RetrievalResult:
    document = Document(
        id=line.string("document.id"),
        path=line.string("document.path"),
        modified_at=line.timestamp("document.modified_at"),
    )
    chunk = Chunk(
        id=line.string("chunk.id"),
        text=line.string("chunk.text"),
        sequence=line.integer("chunk.sequence"),
        byte_offset=line.integer("chunk.byte_offset", required=False),
    )
    score = line.number("score")
    assert score is not None
    return RetrievalResult(
        chunk=chunk,
        document=document,
        score=score,
        semantic_score=line.number("semantic_score", required=False),
        lexical_score=line.number("lexical_score", required=False),
    )


def parse_results(lines: str | Iterable[str], *, source: str = "<input>") -> tuple[RetrievalResult, ...]:
    """Parse JSONL text (or its lines) into results, in input order; blank lines are skipped.

    Raises :class:`ResultsFormatError` naming ``source``, the 1-based line (and column for invalid JSON) and
    the offending field.
    """
    if isinstance(lines, str):
        # Split on "\n" only: str.splitlines() would also split on U+2028, which JSON strings may contain.
        lines = lines.split("\n")
    results: list[RetrievalResult] = []
    documents: dict[str, tuple[Document, int]] = {}
    for number, raw in enumerate(lines, start=1):
        text = raw.rstrip("\r\n")
        if not text.strip():
            continue
        try:
            # The one strict reader: RFC 8259 (no NaN, Infinity or 1e400), nesting limit, no lone surrogates.
            obj = _input.loads_json(text, source, line=number)
        except _input.InputError as error:
            raise ResultsFormatError(error.problem, source=source, line=number) from None
        if not isinstance(obj, dict):
            raise ResultsFormatError(
                f"expected a JSON object, got {_describe(obj)}", source=source, line=number
            )
        line = _Line(obj, number, source)
        try:
            result = _parse_line(line)
        except ResultsFormatError:
            raise
        except CupelError as error:
            raise line.error(str(error)) from None
        first = documents.setdefault(result.document.id, (result.document, number))
        if first[0] != result.document:
            raise line.error(
                f"document {result.document.id!r} differs from line {first[1]}: "
                f"{result.document!r} vs {first[0]!r}",
                "document",
            )
        results.append(result)
    return tuple(results)


def read_results(path: str | os.PathLike[str]) -> tuple[RetrievalResult, ...]:
    """Read a UTF-8 JSONL results file (a leading byte-order mark is allowed); see :func:`parse_results`.

    Raises ``OSError`` when the file cannot be read and :class:`ResultsFormatError` when it is not valid.
    """
    source = os.fspath(path)
    with open(path, "rb") as handle:  # OSError propagates, as documented
        data = _input.read_stream(handle, source)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ResultsFormatError(f"not valid UTF-8 (byte {error.start})", source=source, line=line) from None
    return parse_results(text, source=source)


def result_to_dict(result: RetrievalResult) -> dict[str, Any]:
    """``result`` in the JSONL shape; :func:`parse_results` reads it back to an equal result."""
    document: dict[str, Any] = {"id": result.document.id, "path": result.document.path}
    if result.document.modified_at is not None:
        document["modified_at"] = result.document.modified_at.isoformat()
    chunk = result.chunk
    line: dict[str, Any] = {
        "document": document,
        "chunk": {
            "id": chunk.id,
            "text": chunk.text,
            "sequence": chunk.sequence,
            "byte_offset": chunk.byte_offset,
        },
        "score": result.score,
    }
    if result.semantic_score is not None:
        line["semantic_score"] = result.semantic_score
    if result.lexical_score is not None:
        line["lexical_score"] = result.lexical_score
    return line
