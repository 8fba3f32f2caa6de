"""One logged session: the ``cupel select --batch`` JSON line, read into candidates, budget and gold ids.

A session is an object with ``items`` (context items) or ``messages`` (a chat transcript), and
optionally ``id`` (the session id) and ``budget`` (``{"maxTokens": ..., "targetTokens": ...}``). An
item's id is its own ``id`` key (the ``cupel eval`` case format), else its ``metadata["id"]`` when that
is a string or a whole number, else its position in ``items``; a message's id is its position in the
transcript. A session with ``gold`` labels is a ``cupel eval`` case and is read by
:func:`cupel.eval.case_from_dict` (gold ids or indices, optional weights). Anything that cannot be
read is a :class:`MalformedSession`, which becomes an error row.

Lines and JSON text fields are read by :mod:`cupel._input`, like every other input: strict UTF-8,
RFC 8259 JSON (no ``NaN``, ``Infinity`` or ``1e400``), at most 128 levels of nesting, and at most the
input size cap per line.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cupel import _input
from cupel.errors import CupelError
from cupel.model import ContextBudget, ContextItem

__all__ = ["MalformedSession", "OversizedLine", "Session", "parse_session"]


class MalformedSession(ValueError):
    """A session that cannot be read: the message names the field and the value."""


@dataclass(frozen=True, slots=True)
class OversizedLine:
    """A JSON line longer than the input size cap, read no further than the cap (``size``: its length)."""

    size: int
    limit: int


@dataclass(frozen=True, slots=True)
class Session:
    """A parsed session: exactly one of ``items`` and ``messages`` is set."""

    session_id: str
    items: tuple[ContextItem, ...] | None
    messages: tuple[Mapping[str, Any], ...] | None
    budget: ContextBudget | None
    #: Gold elements (item positions or message indices) and their weights, when labelled.
    gold: Mapping[int, float] | None
    #: The id of every candidate item, in input order (items only).
    item_ids: tuple[str, ...] = ()


def item_id(item: ContextItem, index: int) -> str:
    """``metadata["id"]`` when it is a string or a whole number, else the item's position."""
    given = item.metadata.get("id")
    if isinstance(given, str):
        return given
    if isinstance(given, int) and not isinstance(given, bool):
        return str(given)
    return str(index)


def _plain(value: Any) -> Any:
    """Nested values as JSON-like Python (Parquet gives numpy arrays for lists)."""
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(key): _plain(inner) for key, inner in value.items()}
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        value = tolist()
    if isinstance(value, list | tuple):
        return [_plain(inner) for inner in value]
    return value


def _strict_json(text: str | bytes, source: str, line: int | None = None) -> Any:
    """JSON text read by :mod:`cupel._input`; any problem is a :class:`MalformedSession` naming ``source``."""
    try:
        if isinstance(text, bytes):
            if line is not None and line > 1 and text.startswith(codecs.BOM_UTF8):
                # decode_text drops a leading mark; past the first line it is a stray U+FEFF, not JSON
                raise _input.InputError(
                    f"{source}: line {line}" if source else f"line {line}",
                    "invalid JSON: a byte-order mark is allowed only at the start of the file",
                )
            text = _input.decode_text(text, source, line=line)
        return _input.loads_json(text, source, line=line)
    except _input.InputError as error:
        raise MalformedSession(str(error)) from None


def _decoded(value: Any, field: str) -> Any:
    """A field given as JSON text (a Parquet string column) is parsed; anything else is taken as it is."""
    if isinstance(value, str | bytes) and field != "id":
        return _strict_json(value, field)
    # Lists and dicts came from JSON and are plain already; anything else (numpy arrays from Parquet) is not.
    return value if isinstance(value, list | dict) else _plain(value)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def session_record(raw: Any, source: str = "", line: int | None = None) -> dict[str, Any]:
    """A session's JSON line (bytes or text) or record (mapping) as a plain dict; malformed input raises.

    ``source`` and ``line`` (the physical line in a file) start the message of a line that cannot be read.
    """
    if isinstance(raw, OversizedLine):
        where = f"{source}: line {line}: " if source and line is not None else f"{source}: " if source else ""
        raise MalformedSession(
            f"{where}line of {raw.size} bytes is larger than the input size cap ({raw.limit} bytes); "
            f"set {_input.MAX_INPUT_ENV} to a larger size to read it"
        )
    if isinstance(raw, str | bytes):
        raw = _strict_json(raw, source, line)
    if not isinstance(raw, Mapping):
        raise MalformedSession(f"expected a JSON object with 'items' or 'messages', got {_json_type(raw)}")
    return {str(key): value for key, value in raw.items() if not _missing(value)}


def _json_type(value: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def session_id_of(record: Mapping[str, Any], default: str) -> str:
    """The record's ``id`` (a string or whole number) or ``default``."""
    given = record.get("id")
    if isinstance(given, str) and given:
        return given
    if isinstance(given, int) and not isinstance(given, bool):
        return str(given)
    return default


def parse_session(record: Mapping[str, Any], session_id: str) -> Session:
    """Read one session record (from :func:`session_record`); raises :class:`MalformedSession`."""
    if "id" in record and session_id_of(record, "") == "":
        raise MalformedSession(f"id: expected a non-empty string or a whole number, got {record['id']!r}")
    budget = _budget(record)
    if "gold" in record:
        return _labelled(record, session_id, budget)
    if "messages" in record:
        messages = _decoded(record["messages"], "messages")
        if not isinstance(messages, list) or not all(
            isinstance(message, Mapping) and isinstance(message.get("role"), str) for message in messages
        ):
            raise MalformedSession("messages: expected an array of {role, content} objects")
        return Session(session_id, None, tuple(messages), budget, None)
    if "items" not in record:
        raise MalformedSession("expected a JSON object with 'items' or 'messages'")
    data = _decoded(record["items"], "items")
    if not isinstance(data, list):
        raise MalformedSession(f"items: expected an array of items, got {_json_type(data)}")
    from cupel import wire

    items = []
    ids = []
    for index, entry in enumerate(data):
        given = entry.get("id") if isinstance(entry, Mapping) else None
        if isinstance(entry, Mapping) and "id" in entry:
            entry = {key: value for key, value in entry.items() if key != "id"}
        try:
            item = wire.item_from_dict(entry, f"items[{index}]")
        except CupelError as error:
            raise MalformedSession(str(error)) from None
        items.append(item)
        ids.append(
            str(given)
            if isinstance(given, str | int) and not isinstance(given, bool)
            else item_id(item, index)
        )
    return Session(session_id, tuple(items), None, budget, None, tuple(ids))


def _labelled(record: Mapping[str, Any], session_id: str, budget: ContextBudget | None) -> Session:
    """A session with gold labels, read as a ``cupel eval`` case (one source of truth for the format)."""
    from cupel.eval import case_from_dict

    case_record = {
        key: _decoded(value, key) if key in ("items", "messages", "gold") else _plain(value)
        for key, value in record.items()
        if key != "budget"
    }
    case_record["id"] = session_id
    try:
        case = case_from_dict(case_record, f"session {session_id}")
    except CupelError as error:
        raise MalformedSession(str(error)) from None
    if case.items is not None:
        return Session(session_id, case.items, None, budget, case.gold, case.item_ids)
    return Session(session_id, None, case.messages, budget, case.gold)


def _budget(record: Mapping[str, Any]) -> ContextBudget | None:
    if "budget" not in record:
        return None
    try:
        return ContextBudget.from_dict(_decoded(record["budget"], "budget"))
    except CupelError as error:
        message = str(error)
        raise MalformedSession(message if message.startswith("budget") else f"budget: {message}") from None
