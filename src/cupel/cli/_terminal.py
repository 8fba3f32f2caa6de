"""Text for a terminal: control characters shown escaped, columns measured in display cells.

Item content is untrusted: an ANSI escape sequence, a NUL or a bidirectional override printed raw can
rewrite what the terminal shows. Everything the command line prints from an input goes through
:func:`terminal_safe`; column layouts use :func:`display_width` so that wide (CJK) characters line up.
"""

from __future__ import annotations

import unicodedata

__all__ = ["display_width", "fit", "ljust", "one_line", "terminal_safe"]

# C0 and C1 controls and DEL, line and paragraph separators, and the bidirectional embeddings,
# overrides and isolates. Tab and line feed are kept only where the caller allows them. A translation
# table rather than a regular expression: nothing to compile at start-up.
_UNSAFE_CODES = (
    *range(0x20),
    *range(0x7F, 0xA0),
    0x2028,
    0x2029,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
)
_ESCAPE_ALL = {code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" for code in _UNSAFE_CODES}
_ESCAPE_KEEPING_BREAKS = {code: escape for code, escape in _ESCAPE_ALL.items() if code not in (0x09, 0x0A)}


def terminal_safe(text: str, *, keep_line_breaks: bool = False) -> str:
    """``text`` with every control character written as a visible escape (``\\x1b``, ``\\u202e``).

    With ``keep_line_breaks`` tab and line feed stay as they are (multi-line content in
    ``select --format text``); otherwise they are escaped too.
    """
    if text.isprintable():  # every character escaped is a control, format or line/paragraph separator
        return text
    return text.translate(_ESCAPE_KEEPING_BREAKS if keep_line_breaks else _ESCAPE_ALL)


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
