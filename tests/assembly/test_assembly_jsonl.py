"""The JSONL results format: parsing, error messages and round trips."""

from __future__ import annotations

import json
import pickle
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cupel.assembly import (
    Chunk,
    Document,
    ResultsFormatError,
    RetrievalResult,
    parse_results,
    read_results,
    result_to_dict,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag-results.jsonl"

GOOD = {
    "document": {"id": "d1", "path": "docs/a.md", "modified_at": "2024-05-02T09:30:00Z"},
    "chunk": {"id": "d1#0", "text": "Hello.", "sequence": 0, "byte_offset": 10},
    "score": 0.5,
    "semantic_score": 0.7,
}


def line(**changes: object) -> str:
    obj = json.loads(json.dumps(GOOD))
    for dotted, value in changes.items():
        *parents, leaf = dotted.split("__")
        node = obj
        for parent in parents:
            node = node[parent]
        if value is ...:
            del node[leaf]
        else:
            node[leaf] = value
    return json.dumps(obj)


def test_a_good_line() -> None:
    (parsed,) = parse_results(line() + "\n\n")
    assert parsed == RetrievalResult(
        Chunk("d1#0", "Hello.", 0, 10),
        Document("d1", "docs/a.md", datetime(2024, 5, 2, 9, 30, tzinfo=UTC)),
        0.5,
        semantic_score=0.7,
    )


def test_optional_fields_default() -> None:
    (parsed,) = parse_results([line(chunk__byte_offset=..., semantic_score=None, document__modified_at=...)])
    assert parsed.chunk.byte_offset == 0
    assert parsed.semantic_score is None and parsed.lexical_score is None
    assert parsed.document.modified_at is None


@pytest.mark.parametrize(
    ("text", "message", "field"),
    [
        (
            '{"score": 1,',
            "f.jsonl:2: invalid JSON at line 2, column 13: Expecting property name enclosed in double quotes",
            None,
        ),
        ("[1, 2]", "f.jsonl:2: expected a JSON object, got an array ([1, 2])", None),
        # The one strict reader (cupel._input): no NaN, Infinity or 1e400 anywhere on a line.
        (
            line(semantic_score=1).replace('"semantic_score": 1', '"semantic_score": NaN'),
            "f.jsonl:2: invalid JSON: NaN is not a JSON number",
            None,
        ),
        (
            line(score=1).replace('"score": 1', '"score": 1e400'),
            "f.jsonl:2: invalid JSON: number 1e400 is out of range",
            None,
        ),
        (line(chunk__text=...), "f.jsonl:2: missing field 'chunk.text'", "chunk.text"),
        (line(document=...), "f.jsonl:2: missing field 'document.id'", "document.id"),
        (
            line(document="d1"),
            "f.jsonl:2: field 'document' must be an object, got a string (\"d1\")",
            "document",
        ),
        (
            line(chunk__sequence="3"),
            "f.jsonl:2: field 'chunk.sequence' must be an integer, got a string",
            None,
        ),
        (
            line(chunk__sequence=1.5),
            "f.jsonl:2: field 'chunk.sequence' must be an integer, got a number",
            None,
        ),
        (
            line(chunk__sequence=-1),
            "f.jsonl:2: field 'chunk.sequence' must be >= 0, got -1",
            "chunk.sequence",
        ),
        (line(score=True), "f.jsonl:2: field 'score' must be a number, got a boolean (true)", "score"),
        (line(score=None), "f.jsonl:2: field 'score' must not be null", "score"),
        (line(chunk__id=""), "f.jsonl:2: field 'chunk.id' must not be empty", "chunk.id"),
        (
            line(document__modified_at="yesterday"),
            "f.jsonl:2: field 'document.modified_at' is not an ISO",
            None,
        ),
        (line(document__modified_at="2024-05-02T09:30:00"), "needs a UTC offset", "document.modified_at"),
        (line(score=float("nan")), "f.jsonl:2: invalid JSON: NaN is not a JSON number", None),
        (line(document__path="a\nb"), "f.jsonl:2: Document.path must not contain a line break", None),
        (line(document__path="other.md"), "f.jsonl:2: document 'd1' differs from line 1", "document"),
    ],
)
def test_errors_name_the_line_and_field(text: str, message: str, field: str | None) -> None:
    with pytest.raises(ResultsFormatError) as caught:
        parse_results([line(), text], source="f.jsonl")
    error = caught.value
    assert message in str(error)
    assert "\n" not in str(error)
    assert error.line == 2
    if field is not None:
        assert error.field == field


def test_error_is_a_value_error_and_pickles() -> None:
    error = ResultsFormatError("bad", source="f", line=3, column=4, field="score")
    assert isinstance(error, ValueError)
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == "f:3:4: bad" and copy.field == "score"


def test_round_trip_through_result_to_dict() -> None:
    results = read_results(EXAMPLE)
    again = parse_results(json.dumps(result_to_dict(r)) for r in results)
    assert again == results


def test_read_results_reports_bad_utf8_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(line().encode() + b"\n" + b'{"x": "\xff"}\n')
    with pytest.raises(ResultsFormatError, match=r"r.jsonl:2: not valid UTF-8"):
        read_results(path)


def test_read_results_accepts_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + line().encode() + b"\r\n")
    assert len(read_results(path)) == 1


def test_the_example_file_is_valid() -> None:
    results = read_results(EXAMPLE)
    assert 12 <= len(results) <= 16
    assert 4 <= len({r.document.id for r in results}) <= 5
