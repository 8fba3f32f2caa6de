"""A small TOML emitter for policy documents: top-level ``key = value`` lines and inline tables."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.policy._values import _BARE_KEY

_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_string(text: str) -> str:
    parts = ['"']
    for char in text:
        code = ord(char)
        if char in _TOML_ESCAPES:
            parts.append(_TOML_ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            parts.append(f"\\u{code:04X}")
        elif 0xD800 <= code <= 0xDFFF:
            raise InvalidConfigurationError(f"a policy file cannot hold a lone surrogate: {text!r}")
        else:
            parts.append(char)
    parts.append('"')
    return "".join(parts)


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)  # shortest round-trip form: "0.5", "1e-07", "3.0"
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        return (
            "{ " + ", ".join(f"{_toml_key(key)} = {_toml_value(item)}" for key, item in value.items()) + " }"
        )
    raise CupelTypeError(f"cannot write {value!r} ({type(value).__name__}) as TOML")


def toml_dumps(data: Mapping[str, Any]) -> str:
    """TOML for a table of plain values: top-level ``key = value`` lines, inline tables below them.

    A top-level array of tables is written one element per line. Covers everything policy documents
    hold: strings, booleans, integers, floats, arrays and tables.
    """
    lines: list[str] = []
    for key, value in data.items():
        if not isinstance(key, str):
            raise CupelTypeError(f"TOML keys must be strings, got {key!r}")
        if isinstance(value, list | tuple) and value and all(isinstance(item, Mapping) for item in value):
            lines.append(f"{_toml_key(key)} = [")
            lines.extend(f"    {_toml_value(item)}," for item in value)
            lines.append("]")
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"
