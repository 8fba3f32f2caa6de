"""terminal_safe escapes exactly what the regular expression it replaced matched."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from cupel.cli._terminal import one_line, terminal_safe

# The reference: the expressions terminal_safe used before it became a translation table.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_UNSAFE_WITH_BREAKS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _reference(text: str, keep_line_breaks: bool) -> str:
    return (_UNSAFE if keep_line_breaks else _UNSAFE_WITH_BREAKS).sub(_escape, text)


def test_every_character_up_to_the_isolates_is_escaped_as_before() -> None:
    for code in range(0x2100):
        for text in (f"a{chr(code)}b", f"a{chr(code)}\n"):
            for keep in (True, False):
                assert terminal_safe(text, keep_line_breaks=keep) == _reference(text, keep), hex(code)


@given(st.text(), st.booleans())
def test_any_text_is_escaped_as_the_reference_does(text: str, keep: bool) -> None:
    assert terminal_safe(text, keep_line_breaks=keep) == _reference(text, keep)


def test_escapes_read_as_before() -> None:
    assert terminal_safe("\x1b[31mred\u202e\t\n") == "\\x1b[31mred\\u202e\\x09\\x0a"
    assert terminal_safe("a\tb\nc\r", keep_line_breaks=True) == "a\tb\nc\\x0d"
    assert one_line("first\r\nsecond\x00") == "first | second\\x00"
