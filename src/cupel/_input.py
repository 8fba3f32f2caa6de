"""One reader for every text and JSON input, files and standard input alike.

Decisions (docs/spec-notes.md, "Hostile input"):

- Bytes are decoded as strict UTF-8; one leading byte-order mark is accepted and dropped.
- Inputs are capped at :data:`DEFAULT_MAX_INPUT_BYTES` (512 MiB); the ``CUPEL_MAX_INPUT_BYTES``
  environment variable (bytes, or a number with ``KiB``/``MiB``/``GiB``) or ``max_bytes=`` changes it.
- JSON is RFC 8259: ``NaN``/``Infinity`` and numbers beyond the double range (``1e400``) are rejected,
  arrays and objects may nest at most :data:`MAX_JSON_DEPTH` levels, and a ``\\uD800``-``\\uDFFF`` escape
  that is not half of a surrogate pair is rejected with the path of the string that holds it.

Every problem raises :class:`InputError`, one line that starts with the source's name.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

from cupel.errors import CupelError

__all__ = [
    "DEFAULT_MAX_INPUT_BYTES",
    "MAX_INPUT_ENV",
    "MAX_JSON_DEPTH",
    "SURROGATE_ESCAPE",
    "InputError",
    "check_depth",
    "check_unicode",
    "decode_text",
    "loads_json",
    "max_input_bytes",
    "read_bytes",
    "read_stream",
    "read_text",
]

#: The default input size cap: 512 MiB.
DEFAULT_MAX_INPUT_BYTES = 512 * 1024 * 1024
#: The environment variable that overrides the cap.
MAX_INPUT_ENV = "CUPEL_MAX_INPUT_BYTES"
#: Arrays and objects nested deeper than this are rejected.
MAX_JSON_DEPTH = 128

_CHUNK = 1 << 20
_UNITS = {"": 1, "b": 1, "k": 1024, "kib": 1024, "m": 1024**2, "mib": 1024**2, "g": 1024**3, "gib": 1024**3}
_SIZE = r"\s*(\d+)\s*([a-zA-Z]*)\s*"  # patterns compiled on first use (re caches them)


class InputError(CupelError, ValueError):
    """An input cannot be read: too large, not UTF-8, not valid JSON, nested too deep...

    ``str(error)`` is ``"{source}: {problem}"``; both parts are attributes.
    """

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}" if source else problem)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.source, self.problem))


def max_input_bytes(max_bytes: int | None = None) -> int:
    """The cap in force: ``max_bytes`` if given, else ``$CUPEL_MAX_INPUT_BYTES``, else 512 MiB."""
    if max_bytes is not None:
        return max_bytes
    raw = os.environ.get(MAX_INPUT_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_INPUT_BYTES
    match = re.fullmatch(_SIZE, raw)
    if match is None or match.group(2).lower() not in _UNITS or int(match.group(1)) <= 0:
        raise InputError(MAX_INPUT_ENV, f"expected a positive size such as 1073741824 or 1GiB, got {raw!r}")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def _describe_size(size: int) -> str:
    for unit, name in ((1024**3, "GiB"), (1024**2, "MiB"), (1024, "KiB")):
        if size >= unit and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} bytes"


def read_bytes(
    source: str | os.PathLike[str], *, max_bytes: int | None = None, stdin: BinaryIO | None = None
) -> bytes:
    """The bytes of a file, or of standard input for ``-``, at most the input cap."""
    limit = max_input_bytes(max_bytes)
    name = os.fspath(source)
    if name == "-":
        return read_stream(stdin if stdin is not None else sys.stdin.buffer, "<stdin>", max_bytes=limit)
    try:
        with open(name, "rb") as handle:
            return read_stream(handle, name, max_bytes=limit)
    except FileNotFoundError:
        raise InputError(name, "no such file") from None
    except IsADirectoryError:
        raise InputError(name, "is a directory, expected a file") from None
    except PermissionError:
        raise InputError(name, "permission denied") from None
    except OSError as error:
        raise InputError(name, f"cannot read ({error.strerror or error})") from None


def read_stream(handle: BinaryIO, name: str, *, max_bytes: int | None = None) -> bytes:
    """Everything ``handle`` holds, at most the input cap; ``OSError`` from the stream propagates."""
    limit = max_input_bytes(max_bytes)
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = handle.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise InputError(
                name,
                f"input is larger than {_describe_size(limit)}; "
                f"set {MAX_INPUT_ENV} to a larger size to read it",
            )


def decode_text(data: bytes, source: str, *, line: int | None = None) -> str:
    """Strict UTF-8, one leading byte-order mark dropped; errors give the line and byte offset.

    ``line`` is the physical line number of ``data`` in a JSON Lines input; the offset is then the line's.
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        byte = f"invalid byte 0x{data[error.start]:02x}"
        if line is not None:
            raise InputError(
                f"{source}: line {line}" if source else f"line {line}",
                f"not UTF-8 text ({byte} at byte offset {error.start} of the line)",
            ) from None
        row = data[: error.start].count(b"\n") + 1
        raise InputError(
            source, f"not UTF-8 text ({byte} at line {row}, byte offset {error.start})"
        ) from None


def read_text(
    source: str | os.PathLike[str], *, max_bytes: int | None = None, stdin: BinaryIO | None = None
) -> str:
    """:func:`read_bytes` then :func:`decode_text`."""
    name = os.fspath(source)
    return decode_text(
        read_bytes(source, max_bytes=max_bytes, stdin=stdin), "<stdin>" if name == "-" else name
    )


# ---- JSON -----------------------------------------------------------------------------------------

#: A JSON escape of a UTF-16 surrogate; text without one cannot decode to a lone surrogate.
SURROGATE_ESCAPE = r"\\u[dD][89abcdefABCDEF]"
_STRING = rb'"[^"]*"'
_NOT_STRUCTURE = bytes(byte for byte in range(256) if byte not in b'"[]{}')


def _reject_constant(name: str) -> Any:
    raise _JsonValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _JsonValueError(f"number {text} is out of range")
    return value


class _JsonValueError(Exception):
    """A JSON value that the grammar allows but cupel rejects (raised from the parse hooks)."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An ``object_pairs_hook`` for :func:`loads_json` that refuses a key given twice in one object
    (RFC 8259 leaves it open; keeping either value would silently drop the other)."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _JsonValueError(f"duplicate key {json.dumps(key, ensure_ascii=False)}")
        result[key] = value
    return result


def loads_json(
    text: str,
    source: str,
    *,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
    line: int | None = None,
) -> Any:
    """Parse one JSON document by the rules in this module's docstring.

    ``line`` is the physical line number of ``text`` in a JSON Lines input; messages then say
    ``source: line N, column C: ...``.
    """
    where = f"{source}: line {line}" if line is not None and source else source
    check_unicode(text, where)
    try:
        data = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            object_pairs_hook=object_pairs_hook,
        )
    except json.JSONDecodeError as error:
        row = error.lineno if line is None else line
        message = error.msg.removesuffix(" at")  # "Invalid control character at" reads as cut off
        if "control character" in message and error.pos < len(text):
            message += f" {_show_character(text[error.pos])}"
        raise InputError(source, f"invalid JSON at line {row}, column {error.colno}: {message}") from None
    except RecursionError:
        raise InputError(where, f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except _JsonValueError as error:
        raise InputError(where, f"invalid JSON: {error}") from None
    except CupelError:  # raised by object_pairs_hook, already in the caller's words
        raise
    except ValueError as error:  # integers beyond Python's digit limit
        raise InputError(where, f"invalid JSON: {_first_line(str(error))}") from None
    _check_depth(text, where)
    if "\\u" in text and re.search(SURROGATE_ESCAPE, text):
        _check_surrogates(data, where)
    return data


def _first_line(message: str) -> str:
    return message.split(";")[0].splitlines()[0] if message else "unreadable value"


def _show_character(character: str) -> str:
    return f"U+{ord(character):04X} (write it as \\u{ord(character):04x})"


def check_unicode(text: str, where: str) -> None:
    """Reject text holding a lone surrogate (only text built in Python can; decoded UTF-8 cannot)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InputError(
            where,
            f"lone surrogate U+{ord(text[error.start]):04X} at character {error.start + 1} "
            "is not Unicode text",
        ) from None


def _check_depth(text: str, where: str) -> None:
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return
    # The text is valid JSON here. Without its escaped backslashes and quotes, strings are plain
    # "..." runs; keep only quotes and brackets, drop the strings, and peel one nesting level per pass.
    data = text.encode("utf-8").replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = data.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    brackets = re.sub(_STRING, b"", structure)
    for _ in range(MAX_JSON_DEPTH):
        if not brackets:
            return
        brackets = brackets.replace(b"[]", b"\0").replace(b"{}", b"\0").replace(b"\0", b"")
    if brackets:
        raise InputError(where, f"JSON nested deeper than {MAX_JSON_DEPTH} levels")


def check_depth(data: Any, where: str, what: str = "JSON") -> int:
    """How deep lists and dicts nest in parsed ``data`` (a scalar is 0); deeper than the limit raises.

    The same limit as for JSON text, for documents parsed otherwise (TOML) or built in Python.
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            members: Any = value.values()
        elif isinstance(value, list | tuple):
            members = value
        else:
            continue
        if depth > MAX_JSON_DEPTH:
            raise InputError(where, f"{what} nested deeper than {MAX_JSON_DEPTH} levels")
        deepest = max(deepest, depth)
        stack.extend((member, depth + 1) for member in members)
    return deepest


def _check_surrogates(data: Any, where: str) -> None:
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            _check_string(value, path, where)
        elif isinstance(value, dict):
            for key, member in value.items():
                _check_string(key, f"{path} (a key)".strip(), where)
                stack.append((member, f"{path}.{key}" if path else str(key)))
        elif isinstance(value, list):
            stack.extend((member, f"{path}[{index}]") for index, member in enumerate(value))


def _check_string(value: str, path: str, where: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        place = f"{path}: " if path else ""
        raise InputError(
            where,
            f"{place}lone surrogate \\u{ord(value[error.start]):04x} is not Unicode text "
            "(a \\ud800-\\udfff escape must be half of a pair)",
        ) from None
