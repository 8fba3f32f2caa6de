"""The shared input reader: its fast depth check against a plain recursive reference, and its rules."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cupel._input import MAX_JSON_DEPTH, InputError, decode_text, loads_json, read_stream


def reference_depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(reference_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(reference_depth, value.values()), default=0)
    return 0


TRICKY_TEXT = st.text(alphabet='[]{}"\\ab\n\u2028', max_size=8)


def nested(depth: int) -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.integers(), TRICKY_TEXT, st.none())
    if depth == 0:
        return leaves
    inner = nested(depth - 1)
    return st.one_of(
        leaves,
        st.lists(inner, max_size=3),
        st.dictionaries(TRICKY_TEXT, inner, max_size=3),
    )


@st.composite
def deep_documents(draw: st.DrawFn) -> Any:
    value = draw(nested(3))
    for _ in range(draw(st.integers(0, MAX_JSON_DEPTH + 3))):
        value = draw(st.sampled_from([[value], {"k[": value}, [1, "]]", value, "{"]]))
    return value


@given(deep_documents(), st.booleans())
def test_depth_check_agrees_with_the_reference(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    if reference_depth(value) > MAX_JSON_DEPTH:
        with pytest.raises(InputError, match="nested deeper than 128 levels"):
            loads_json(text, "doc")
    else:
        assert loads_json(text, "doc") == value


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("NaN", "invalid JSON: NaN is not a JSON number"),
        ("[-Infinity]", "invalid JSON: -Infinity is not a JSON number"),
        ("[1e400]", "invalid JSON: number 1e400 is out of range"),
        ('{"a": "\\udc00"}', "a: lone surrogate \\udc00 is not Unicode text"),
        ('{"\\ud800": 1}', "(a key): lone surrogate \\ud800"),
        ('["caf\udce9"]', "lone surrogate U+DCE9 at character 6 is not Unicode text"),
    ],
)
def test_json_rules(text: str, problem: str) -> None:
    with pytest.raises(InputError) as raised:
        loads_json(text, "doc")
    assert str(raised.value).startswith("doc: ") and problem in str(raised.value)


def test_decoding_and_the_cap() -> None:
    assert decode_text(b"\xef\xbb\xbf[1]", "doc") == "[1]"
    with pytest.raises(
        InputError, match=r"doc: not UTF-8 text \(invalid byte 0xff at line 2, byte offset 2\)"
    ):
        decode_text(b"1\n\xff", "doc")
    assert read_stream(io.BytesIO(b"x" * 10), "s", max_bytes=10) == b"x" * 10
    with pytest.raises(InputError, match="s: input is larger than 10 bytes"):
        read_stream(io.BytesIO(b"x" * 11), "s", max_bytes=10)
