"""Text for a terminal: control characters shown escaped, columns measured in display cells.

Item content is untrusted: an ANSI escape sequence, a NUL or a bidirectional override printed raw can
rewrite what the terminal shows. Everything the command line prints from an input goes through
:func:`terminal_safe`; column layouts use :func:`display_width` so that wide (CJK) characters line up.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["display_width", "fit", "ljust", "one_line", "terminal_safe"]

# C0 and C1 controls and DEL, line and paragraph separators, and the bidirectional embeddings,
# overrides and isolates. Tab and line feed are kept only where the caller allows them.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_UNSAFE_WITH_BREAKS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str, *, keep_line_breaks: bool = False) -> str:
    """``text`` with every control character written as a visible escape (``\\x1b``, ``\\u202e``).

    With ``keep_line_breaks`` tab and line feed stay as they are (multi-line content in
    ``select --format text``); otherwise they are escaped too.
    """
    pattern = _UNSAFE if keep_line_breaks else _UNSAFE_WITH_BREAKS
    return pattern.sub(_escape, text)


def one_line(message: str) -> str:
    """A message fit for one line of a terminal: line breaks and control characters escaped."""
    return terminal_safe(message.replace("\r\n", "\n").replace("\n", " | "))


def _cell_width(character: str) -> int:
    if unicodedata.combining(character) or unicodedata.category(character) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1


def display_width(text: str) -> int:
    """How many terminal cells ``text`` takes: wide (CJK) characters 2, combining marks 0."""
    if text.isascii():
        return len(text)
    return sum(_cell_width(character) for character in text)


def fit(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` cells, ending in ``…`` when it was cut."""
    if display_width(text) <= width:
        return text
    kept: list[str] = []
    used = 0
    for character in text:
        cells = _cell_width(character)
        if used + cells > width - 1:
            break
        kept.append(character)
        used += cells
    return "".join(kept) + "…"


def ljust(text: str, width: int) -> str:
    """Pad on the right to ``width`` cells."""
    return text + " " * max(0, width - display_width(text))
