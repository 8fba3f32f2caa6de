"""The column-built parts of the ``"turns"`` report: renderings, per-position stamps, shared reasons."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from cupel.chat import select_messages
from cupel.chat._columns import _RENDERED
from cupel.chat._parse import render_plain
from cupel.chat.convert import INDICES_KEY, SYNTHETIC_EPOCH
from cupel.diagnostics.reasons import BudgetExceeded
from cupel.model import epoch_microseconds


@given(st.integers(0, 10**6), st.sampled_from(["user", "assistant", "system"]), st.text(min_size=1))
def test_the_one_pass_rendering_is_render_plain(index: int, role: str, content: str) -> None:
    assert _RENDERED.format(index, role, content) == render_plain(index, role, content)


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
