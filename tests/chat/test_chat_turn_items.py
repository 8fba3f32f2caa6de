"""The column-built parts of the ``"turns"`` report: renderings, per-position stamps, shared reasons."""

from __future__ import annotations

import pickle
from datetime import UTC, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from cupel.chat import select_messages, units
from cupel.chat.parse import SYSTEM_ROLES, render_plain
from cupel.chat.read import INDICES_KEY, MESSAGES_KEY, ROLES_KEY, SYNTHETIC_EPOCH, TranscriptColumns
from cupel.diagnostics.reasons import BudgetExceeded
from cupel.model import epoch_microseconds


@given(
    st.lists(st.tuples(st.sampled_from(["user", "assistant", "system"]), st.text(max_size=5)), max_size=30),
    st.integers(0, 40),
)
def test_the_column_renderings_are_render_plain(messages: list[tuple[str, str]], longer: int) -> None:
    # Openings kept from a longer transcript first (they are kept between calls), then this one's.
    longer_roles = ["user"] * longer
    TranscriptColumns(longer_roles, [0] * longer, ["x"] * longer, {}, None).renderings()
    roles = [role for role, _ in messages]
    contents: list[str | None] = [content for _, content in messages]
    columns = TranscriptColumns(roles, [0] * len(roles), contents, {}, None)
    expected = [render_plain(index, role, content) for index, (role, content) in enumerate(messages)]
    assert list(columns.renderings()) == expected


@given(st.lists(st.sampled_from(["user", "assistant", "system", "developer", "tool"]), max_size=40))
def test_the_system_positions_are_those_holding_a_system_role(roles: list[str]) -> None:
    assert units._positions_of(roles, SYSTEM_ROLES) == [
        p for p, role in enumerate(roles) if role in SYSTEM_ROLES
    ]


def _transcript(size: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for index in range(size - 1):
        role = "user" if index % 2 == 0 else "assistant"
        messages.append({"role": role, "content": f"{index}: " + "word " * (index % 7 + 1)})
    return messages


def test_stamps_kept_between_selections_are_each_position_s_own() -> None:
    for size in (40, 400, 12, 401):  # kept for a longer transcript, then read for shorter and longer
        report = select_messages(_transcript(size), 150, strategy="turns").report
        entries = [*report.included, *report.excluded]
        assert len(entries) == size
        for entry in entries:
            (position,) = entry.item.metadata[INDICES_KEY]
            stamp = SYNTHETIC_EPOCH + timedelta(seconds=position)
            assert entry.item.timestamp == stamp
            assert entry.item._timestamp_us == epoch_microseconds(stamp)


def test_equal_budget_reasons_of_older_turns_are_one_object() -> None:
    report = select_messages(_transcript(400), 150, strategy="turns").report
    reasons = [entry.reason for entry in report.excluded]
    assert reasons and all(isinstance(reason, BudgetExceeded) for reason in reasons)
    by_value: dict[BudgetExceeded, set[int]] = {}
    for reason in reasons:
        assert isinstance(reason, BudgetExceeded)
        by_value.setdefault(reason, set()).add(id(reason))
    assert all(len(ids) == 1 for ids in by_value.values())
    assert len(by_value) < len(reasons)  # shared, not one per unit


@given(st.integers(0, 300_000), st.integers(0, 40))
def test_the_column_microseconds_are_the_reference_stamps(start: int, size: int) -> None:
    # unit_item's stamp is SYNTHETIC_EPOCH + p seconds; a column-built item keeps it as microseconds.
    positions = range(start, start + size)
    expected = [SYNTHETIC_EPOCH + timedelta(seconds=position) for position in positions]
    assert list(units._micros(positions)) == list(map(epoch_microseconds, expected))


def test_a_column_built_item_makes_its_timestamp_and_metadata_when_first_read() -> None:
    messages = _transcript(30)
    report = select_messages(messages, 150, strategy="turns").report
    for entry in [*report.included, *report.excluded]:
        item = entry.item
        (position,) = item.metadata[INDICES_KEY]
        stamp = item.timestamp
        assert stamp == SYNTHETIC_EPOCH + timedelta(seconds=position) and stamp.tzinfo is UTC
        assert item.timestamp is stamp  # made once, then kept
        assert item.metadata[MESSAGES_KEY][0] is messages[position]
        assert item.metadata[ROLES_KEY] == (messages[position]["role"],)
        again = pickle.loads(pickle.dumps(item))
        assert (again.timestamp, dict(again.metadata)) == (stamp, dict(item.metadata))
