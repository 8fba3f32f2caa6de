"""Replaying one partition of sessions: the task every worker runs.

The task is a pure function of its inputs (the partition's sessions, the policy documents and the
budgets): it builds each policy's pipeline once, selects every session under every policy × budget and
returns one row per (session, policy, budget). It writes nothing, so when Dask reruns it after losing a
worker, the rerun replaces the lost result; rows can neither go missing nor appear twice.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cupel.distributed.sessions import (
    MalformedSession,
    Session,
    parse_session,
    session_id_of,
    session_record,
)
from cupel.errors import CupelError, PinnedItemsExceedBudgetError
from cupel.model import ContextBudget
from cupel.pipeline import Pipeline
from cupel.policy import loads_policy
from cupel.tokens import HeuristicCounter

__all__ = ["COLUMNS", "RawSession", "ReplayPlan", "replay_records"]

#: The per-session result columns, in order; see docs/replay.md.
COLUMNS: dict[str, str] = {
    "session_id": "string",
    "source": "string",
    "line": "int64",
    "policy": "string",
    "budget": "string",
    "error": "string",
    "error_kind": "string",
    "selected": "string",
    "selected_count": "int64",
    "candidates": "int64",
    "included_tokens": "int64",
    "budget_tokens": "int64",
    "budget_use": "float64",
    "exclusions": "string",
    "elapsed_ms": "float64",
    "recall_items": "float64",
    "recall_tokens": "float64",
    "all_gold": "float64",
    "middle_exposure": "float64",
}

#: ``error_kind`` values.
MALFORMED = "malformed"
PINNED_OVERFLOW = "pinned_overflow"
SELECTION_FAILED = "selection"


@dataclass(frozen=True, slots=True)
class RawSession:
    """A session as read from the input: where it came from and its JSON line (or record)."""

    source: str
    line: int
    raw: Any


@dataclass(frozen=True, slots=True)
class ReplayPlan:
    """What every partition replays: policy documents, and budgets as wire dicts (``None``: the session's)."""

    policies: tuple[tuple[str, str], ...]
    budgets: tuple[tuple[str, Mapping[str, Any] | None], ...]
    counter: Any = None


def replay_records(sessions: Iterable[RawSession], plan: ReplayPlan) -> list[dict[str, Any]]:
    """One row per session × policy × budget, sorted by session id, source, line, policy, budget."""
    pipelines = [(name, loads_policy(document).build_pipeline()) for name, document in plan.policies]
    budgets = [
        (label, None if data is None else ContextBudget.from_dict(data)) for label, data in plan.budgets
    ]
    counter = plan.counter if plan.counter is not None else HeuristicCounter()
    rows: list[dict[str, Any]] = []
    for raw in sessions:
        base = {"source": raw.source, "line": raw.line}
        try:
            record = session_record(raw.raw, raw.source, raw.line)
            session_id = session_id_of(record, f"{raw.source}:{raw.line}")
            session: Session | None = parse_session(record, session_id)
            failure = ""
        except MalformedSession as error:
            session_id = _fallback_id(raw)
            session, failure = None, str(error)
        base["session_id"] = session_id
        for policy_name, pipeline in pipelines:
            for budget_label, budget in budgets:
                row = {**base, "policy": policy_name, "budget": budget_label}
                if session is None:
                    rows.append(_error_row(row, failure, MALFORMED))
                else:
                    rows.append(_replay_one(row, session, pipeline, budget, counter))
    rows.sort(key=_row_order)
    return rows


def _fallback_id(raw: RawSession) -> str:
    """A malformed session keeps its ``id`` when one can be read, else ``source:line``."""
    try:
        return session_id_of(session_record(raw.raw, raw.source, raw.line), f"{raw.source}:{raw.line}")
    except MalformedSession:
        return f"{raw.source}:{raw.line}"


def _row_order(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return (row["session_id"], row["source"], row["line"], row["policy"], row["budget"])


def _error_row(row: dict[str, Any], message: str, kind: str) -> dict[str, Any]:
    row.update(
        error=message,
        error_kind=kind,
        selected="[]",
        selected_count=0,
        candidates=0,
        included_tokens=0,
        budget_tokens=0,
        budget_use=float("nan"),
        exclusions="{}",
        elapsed_ms=float("nan"),
        **_NO_GOLD,
    )
    return row


def _replay_one(
    row: dict[str, Any],
    session: Session,
    pipeline: Pipeline,
    budget: ContextBudget | None,
    counter: Any,
) -> dict[str, Any]:
    chosen = budget if budget is not None else session.budget
    if chosen is None:
        return _error_row(row, "budget: missing; give 'budget' on the line or a replay budget", MALFORMED)
    started = time.perf_counter()
    try:
        if session.messages is not None:
            from cupel.chat import select_messages

            selection = select_messages(session.messages, chosen, policy=pipeline, counter=counter)
            report = selection.report
            positions = {id(message): index for index, message in enumerate(session.messages)}
            window = [positions[id(message)] for message in selection.messages]
            selected = [str(index) for index in window]
        else:
            assert session.items is not None
            report = pipeline.dry_run(session.items, chosen)
            positions = {id(item): index for index, item in enumerate(session.items)}
            window = [positions[id(entry.item)] for entry in report.included]
            selected = [session.item_ids[index] for index in window]
    except PinnedItemsExceedBudgetError as error:
        return _error_row(row, str(error), PINNED_OVERFLOW)
    except CupelError as error:
        return _error_row(row, str(error), SELECTION_FAILED)
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    available = chosen.max_tokens - chosen.output_reserve
    included = report.included_tokens
    exclusions: dict[str, Counter[str]] = {}
    for entry in report.excluded:
        exclusions.setdefault(str(entry.item.kind), Counter())[entry.reason.name] += 1
    quality = _gold_metrics(session, window, chosen, counter)
    row.update(
        error=None,
        error_kind=None,
        selected=json.dumps(selected, ensure_ascii=False),
        selected_count=len(selected),
        candidates=report.total_candidates,
        included_tokens=included,
        budget_tokens=available,
        budget_use=included / available if available > 0 else float("nan"),
        exclusions=json.dumps(
            {kind: dict(sorted(reasons.items())) for kind, reasons in sorted(exclusions.items())}
        ),
        elapsed_ms=elapsed_ms,
        **quality,
    )
    return row


#: The ``cupel eval`` metrics reported per row when the session has gold labels (docs/eval.md).
GOLD_METRICS = ("recall_items", "recall_tokens", "all_gold", "middle_exposure")
_NO_GOLD = dict.fromkeys(GOLD_METRICS, float("nan"))


def _gold_metrics(
    session: Session, window: Sequence[int], budget: ContextBudget, counter: Any
) -> dict[str, float]:
    """``cupel eval``'s per-case metrics for the kept elements, NaN without gold labels.

    Scored exactly as ``cupel eval`` scores them: identical elements are interchangeable.
    """
    if session.gold is None:
        return dict(_NO_GOLD)
    from cupel.eval.metrics import case_metrics, interchangeable

    elements: Sequence[Any]
    if session.messages is not None:
        from cupel.chat import message_token_counts

        elements = session.messages
        tokens = list(message_token_counts(session.messages, counter=counter))
    else:
        assert session.items is not None
        elements = session.items
        tokens = [item.tokens for item in session.items]
    canon, gold = interchangeable(elements, session.gold, chat=session.messages is not None)
    metrics = case_metrics([canon[element] for element in window], tokens, gold, budget.target_tokens)
    values = {name: metrics.value(name) for name in GOLD_METRICS}
    return {name: float("nan") if value is None else value for name, value in values.items()}
