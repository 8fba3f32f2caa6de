"""EvalCase: one labelled selection problem -- candidates, the gold evidence, a question and tags.

A case holds either a chat transcript (``messages``; gold names message indices) or context items
(``items``, each with a string ``id``; gold names item ids). Gold entries may carry a weight (default 1).
The JSON Lines form is described by :data:`cupel.eval.schema.CASE_SCHEMA` and docs/eval.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cupel import _input
from cupel.errors import CupelError, InvalidConfigurationError
from cupel.model import ContextItem, _ReadOnlyMap
from cupel.tokens.base import CounterLike
from cupel.tokens.resolve import resolve_counter

__all__ = [
    "ITEM_ID_KEY",
    "PROVIDERS",
    "CaseFormatError",
    "EvalCase",
    "case_from_dict",
    "load_cases",
    "read_case_text",
    "read_cases",
    "write_cases",
]

PROVIDERS = ("openai", "anthropic")
"""Chat formats whose validity rules the evaluation checks."""

ITEM_ID_KEY = "cupel:eval.id"
"""Item metadata key holding the case's id for the item."""


class CaseFormatError(InvalidConfigurationError):
    """A case record does not follow the case format; the message names the case and the field."""


@dataclass(frozen=True, slots=True)
class EvalCase:
    """A labelled case. ``gold`` maps an element (message index or item position) to its weight.

    Build cases with :func:`case_from_dict` (or the loaders); the constructor checks the invariants.
    """

    id: str
    gold: Mapping[int, float]
    messages: tuple[Mapping[str, Any], ...] | None = None
    items: tuple[ContextItem, ...] | None = None
    question: str | None = None
    tags: tuple[str, ...] = ()
    provider: str = "openai"
    item_ids: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if (self.messages is None) == (self.items is None):
            raise CaseFormatError(f"case {self.id!r}: give exactly one of messages or items")
        size = self.size
        if size == 0:
            raise CaseFormatError(f"case {self.id!r}: no candidates")
        if not self.gold:
            raise CaseFormatError(f"case {self.id!r}: gold is empty")
        for element, weight in self.gold.items():
            if not 0 <= element < size:
                raise CaseFormatError(f"case {self.id!r}: gold element {element} out of range 0..{size - 1}")
            if not 0 < weight < math.inf:
                raise CaseFormatError(
                    f"case {self.id!r}: gold weight must be a finite number > 0, got {weight!r}"
                )
        if sum(self.gold.values()) == math.inf:  # recall divides by the total
            raise CaseFormatError(f"case {self.id!r}: gold weights add up to more than the largest float")
        if self.provider not in PROVIDERS:
            raise CaseFormatError(
                f"case {self.id!r}: provider must be one of {', '.join(PROVIDERS)}, got {self.provider!r}"
            )
        object.__setattr__(self, "gold", _ReadOnlyMap(dict(sorted(self.gold.items()))))

    @property
    def is_chat(self) -> bool:
        return self.messages is not None

    @property
    def size(self) -> int:
        """How many candidate elements (messages or items) the case has."""
        return len(self.messages) if self.messages is not None else len(self.items or ())

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (items keep their ids; gold is written as ids or indices)."""
        data: dict[str, Any] = {"id": self.id}
        if self.tags:
            data["tags"] = list(self.tags)
        if self.question is not None:
            data["question"] = self.question
        if self.provider != "openai":
            data["provider"] = self.provider
        if self.messages is not None:
            data["messages"] = [dict(message) for message in self.messages]
            names: Sequence[Any] = range(self.size)
        else:
            assert self.items is not None
            data["items"] = [
                {"id": name, **_item_dict(item)} for name, item in zip(self.item_ids, self.items, strict=True)
            ]
            names = self.item_ids
        data["gold"] = [
            names[element] if weight == 1 else {_ref_key(self): names[element], "weight": weight}
            for element, weight in self.gold.items()
        ]
        return data


def _ref_key(case: EvalCase) -> str:
    return "index" if case.is_chat else "id"


def _item_dict(item: ContextItem) -> dict[str, Any]:
    data = item.to_dict()
    metadata = {key: value for key, value in item.metadata.items() if key != ITEM_ID_KEY}
    if metadata:
        data["metadata"] = metadata
    else:
        data.pop("metadata", None)
    return data


def _fail(where: str, message: str) -> CaseFormatError:
    return CaseFormatError(f"{where}: {message}")


def _string(record: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = record.get(key)
    if value is None:
        if required:
            raise _fail(where, f"missing required field {key!r}")
        return None
    if not isinstance(value, str) or not value.strip():
        raise _fail(where, f"{key} must be a non-empty string, got {value!r}")
    return value


def _gold(entries: object, where: str, resolve: Mapping[Any, int], key: str) -> dict[int, float]:
    if not isinstance(entries, list) or not entries:
        raise _fail(where, f"gold must be a non-empty array, got {entries!r}")
    gold: dict[int, float] = {}
    for position, entry in enumerate(entries):
        weight: object = 1.0
        if isinstance(entry, Mapping):
            unknown = set(entry) - {key, "weight"}
            if unknown or key not in entry:
                raise _fail(where, f"gold[{position}] must be {{{key!r}, 'weight'}}, got {dict(entry)!r}")
            ref, weight = entry[key], entry.get("weight", 1.0)
        else:
            ref = entry
        if isinstance(ref, bool) or not isinstance(ref, int | str) or ref not in resolve:
            what = "message index" if key == "index" else "item id"
            raise _fail(where, f"gold[{position}]: no {what} {ref!r}")
        if (
            isinstance(weight, bool)
            or not isinstance(weight, int | float)
            or not 0 < _as_float(weight) < math.inf
        ):
            raise _fail(where, f"gold[{position}].weight must be a finite number > 0, got {weight!r}")
        element = resolve[ref]
        if element in gold:
            raise _fail(where, f"gold[{position}]: {ref!r} is listed twice")
        gold[element] = float(weight)
    return gold


def _as_float(number: float) -> float:
    try:
        return float(number)
    except OverflowError:  # an integer beyond the double range
        return math.inf


_CASE_KEYS = frozenset({"id", "tags", "question", "provider", "messages", "items", "gold", "answer"})


def case_from_dict(record: object, where: str = "case", counter: CounterLike | None = None) -> EvalCase:
    """Read one case object; items without ``tokens`` are counted with ``counter`` (chars/4 by default).

    A transcript chat selection cannot read (a message of an unknown role, a tool result without its
    call...) is refused here, with ``where`` and the case id, not later when it is evaluated.
    """
    return _case_from_dict(record, where, counter, check_transcript=True)


def _case_from_dict(
    record: object, where: str, counter: CounterLike | None, *, check_transcript: bool
) -> EvalCase:
    """:func:`case_from_dict`; loaders that build plain-text transcripts themselves skip the check."""
    from cupel import wire

    if not isinstance(record, Mapping):
        raise _fail(where, f"expected a JSON object, got {type(record).__name__}")
    case_id = _string(record, "id", where, required=True)
    assert case_id is not None
    where = f"{where} ({case_id})"
    unknown = sorted(set(record) - _CASE_KEYS)
    if unknown:
        raise _fail(where, f"unknown field(s) {', '.join(map(repr, unknown))}")
    tags = record.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) and tag for tag in tags):
        raise _fail(where, f"tags must be an array of non-empty strings, got {tags!r}")
    provider = _string(record, "provider", where) or "openai"
    question = _string(record, "question", where)
    has_messages, has_items = "messages" in record, "items" in record
    if has_messages == has_items:
        raise _fail(where, "give exactly one of 'messages' or 'items'")
    if has_messages:
        messages = record["messages"]
        if not isinstance(messages, list) or not messages:
            raise _fail(where, "messages must be a non-empty array")
        for index, message in enumerate(messages):
            if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
                raise _fail(where, f"messages[{index}] must be an object with a string 'role'")
        if check_transcript:
            _check_transcript(messages, where, counter)
        resolve = {index: index for index in range(len(messages))}
        gold = _gold(record.get("gold"), where, resolve, "index")
        return _build(
            where,
            id=case_id,
            gold=gold,
            messages=tuple(messages),
            question=question,
            tags=tuple(tags),
            provider=provider,
        )
    entries = record["items"]
    if not isinstance(entries, list) or not entries:
        raise _fail(where, "items must be a non-empty array")
    ids: list[str] = []
    items: list[ContextItem] = []
    resolver = resolve_counter(counter)
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise _fail(where, f"items[{index}] must be an object")
        item_id = entry.get("id")
        if not isinstance(item_id, str) or not item_id:
            raise _fail(where, f"items[{index}].id must be a non-empty string, got {item_id!r}")
        if item_id in ids:
            raise _fail(where, f"items[{index}].id {item_id!r} is not unique")
        fields = {key: value for key, value in entry.items() if key != "id"}
        if "tokens" not in fields and isinstance(fields.get("content"), str):
            fields["tokens"] = resolver.count(fields["content"])
        metadata = fields.get("metadata")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise _fail(where, f"items[{index}].metadata must be an object")
        fields["metadata"] = {**(metadata or {}), ITEM_ID_KEY: item_id}
        try:
            items.append(wire.item_from_dict(fields, f"items[{index}]"))
        except CupelError as error:
            raise _fail(where, str(error)) from None
        ids.append(item_id)
    gold = _gold(record.get("gold"), where, {name: n for n, name in enumerate(ids)}, "id")
    return _build(
        where,
        id=case_id,
        gold=gold,
        items=tuple(items),
        item_ids=tuple(ids),
        question=question,
        tags=tuple(tags),
        provider=provider,
    )


def _check_transcript(messages: Sequence[Mapping[str, Any]], where: str, counter: CounterLike | None) -> None:
    """A transcript chat selection cannot read is the case file's fault: say where it is, at read time."""
    from cupel.chat import messages_to_items

    try:
        messages_to_items(messages, counter=counter)
    except CupelError as error:
        raise _fail(where, str(error)) from None


def _build(where: str, **fields: Any) -> EvalCase:
    try:
        return EvalCase(**fields)
    except CaseFormatError as error:
        raise _fail(where, str(error).split(": ", 1)[-1]) from None


def read_cases(text: str, source: str = "cases", counter: CounterLike | None = None) -> list[EvalCase]:
    """Cases from JSON Lines text (blank lines and lines starting with ``//`` are skipped).

    Each line is read by :func:`cupel._input.loads_json` (RFC 8259, no ``NaN``/``Infinity``/``1e400``,
    nesting limit); lines end at ``\\n`` only, so errors name the physical line.
    """
    cases: list[EvalCase] = []
    seen: set[str] = set()
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        where = f"{source}: line {number}"
        try:
            record = _input.loads_json(stripped, source, line=number)
        except _input.InputError as error:
            raise CaseFormatError(str(error)) from None
        case = case_from_dict(record, where, counter)
        if case.id in seen:
            raise _fail(where, f"case id {case.id!r} is used twice")
        seen.add(case.id)
        cases.append(case)
    if not cases:
        raise _fail(source, "no cases")
    return cases


def load_cases(path: str | Path, counter: CounterLike | None = None) -> list[EvalCase]:
    """Cases from a JSON Lines file."""
    return read_cases(read_case_text(path), str(path), counter)


def read_case_text(path: str | Path) -> str:
    """A case file's text through :mod:`cupel._input` (strict UTF-8, size cap); problems are case errors."""
    try:
        return _input.read_text(path)
    except _input.InputError as error:
        raise CaseFormatError(str(error)) from None


def write_cases(path: str | Path, cases: Iterable[EvalCase]) -> None:
    """Write cases as JSON Lines, atomically."""
    from cupel._atomic import write_atomic

    write_atomic(Path(path), "".join(json.dumps(case.to_dict(), ensure_ascii=False) + "\n" for case in cases))
