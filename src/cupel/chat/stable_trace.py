"""The tracing hook of :class:`~cupel.chat.StableWindow`: one ``cupel.stable_window`` span per turn.

Inside ``cupel.otel.tracing()``, each turn of a window is reported as one operation (as
``cupel.assembly`` is) carrying the budget, the strategy, the outcome and whether the turn appended or
compacted; a compaction's own selection (its ``cupel.chat`` span) is the turn span's child.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from cupel.diagnostics.hooks import active_sink, current_attributes, start_operation
from cupel.model import ContextBudget

__all__ = ["SPAN_NAME", "traced_turn"]

SPAN_NAME = "cupel.stable_window"


@contextmanager
def traced_turn(budget: ContextBudget, strategy: str) -> Iterator[Callable[[Any], None]]:
    """Time one window turn; call the yielded function with the turn's ``StableSelection``."""
    sink = active_sink()
    outcome: dict[str, object] = {}

    def record(selection: Any) -> None:
        outcome["cupel.result.tokens"] = selection.tokens
        outcome["cupel.stable_window.message_count"] = len(selection.messages)
        outcome["cupel.stable_window.prefix"] = selection.prefix
        outcome["cupel.stable_window.compacted"] = selection.compacted

    if sink is None:
        yield record
        return
    attributes: dict[str, object] = {
        "cupel.budget.max_tokens": budget.max_tokens,
        "cupel.budget.target_tokens": budget.target_tokens,
        "cupel.chat.strategy": strategy,
        **current_attributes(),
    }
    operation = start_operation(sink, SPAN_NAME, attributes)
    try:
        yield record
    except BaseException as error:
        operation.finish(outcome, [], error)
        raise
    operation.finish(outcome, [], None)
