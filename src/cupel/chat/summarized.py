"""Selection with a summary of what was dropped: reserve, select, summarise, place (sync or async)."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from cupel.chat._parse import SYSTEM_ROLES
from cupel.chat.convert import INDICES_KEY, MESSAGES_KEY, ROLES_KEY
from cupel.chat.reasons import OrphanedToolResult, Summarized, UnansweredToolCall
from cupel.chat.selection import ChatSelection, resolve_budget
from cupel.chat.summarize import FirstLines
from cupel.diagnostics.hooks import active_sink
from cupel.diagnostics.reasons import InclusionReason
from cupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextBudget, ContextItem, ContextKind, ContextSource
from cupel.tokens.base import CounterLike

__all__ = ["SummaryPlan", "finish_plan", "plan_summary", "run_planned", "run_planned_async"]

_REPAIRS = (OrphanedToolResult, UnansweredToolCall)


def _reserve(budget: ContextBudget, tokens: int) -> ContextBudget:
    if tokens > budget.target_tokens:
        raise InvalidConfigurationError(
            f"summary_tokens ({tokens}) exceeds the budget's target_tokens ({budget.target_tokens})"
        )
    return ContextBudget(
        max_tokens=budget.max_tokens - tokens,
        target_tokens=budget.target_tokens - tokens,
        output_reserve=min(budget.output_reserve, budget.max_tokens - tokens),
        reserved_slots={str(kind): tokens for kind, tokens in budget.reserved_slots.items()},
        estimation_safety_margin_percent=budget.estimation_safety_margin_percent,
    )


@dataclasses.dataclass(slots=True)
class SummaryPlan:
    """A selection made with the summary's tokens reserved, waiting for its summary."""

    selection: ChatSelection[Any]
    dropped: list[Any]
    summary_tokens: int
    make_message: Callable[[str], Any]
    cost_of: Callable[[Any], int]
    role_of: Callable[[Any], str]

    def finish(self, summary: Any) -> ChatSelection[Any]:
        """The selection with ``summary`` (text or a message) placed after the system messages."""
        message = self.make_message(summary) if isinstance(summary, str) else summary
        cost = self.cost_of(message)
        if cost > self.summary_tokens:
            raise InvalidConfigurationError(
                f"the summary costs {cost} tokens, more than summary_tokens={self.summary_tokens}"
            )
        kept = list(self.selection.messages)
        lead = 0
        while lead < len(kept) and self.role_of(kept[lead]) in SYSTEM_ROLES:
            lead += 1
        messages = (*kept[:lead], message, *kept[lead:])
        base = self.selection

        def report() -> SelectionReport:
            original = base.report
            item = ContextItem(
                str(summary) if isinstance(summary, str) else repr(message),
                cost,
                kind=ContextKind.MESSAGE,
                source=ContextSource.CHAT,
                tags=("summary",),
                metadata={MESSAGES_KEY: (message,), INDICES_KEY: (-1,), ROLES_KEY: ("system",)},
                pinned=True,
            )
            included = list(original.included)
            included.insert(
                sum(1 for entry in included if entry.item.metadata.get(ROLES_KEY, ("",))[0] in SYSTEM_ROLES),
                IncludedItem(item, 1.0, InclusionReason.PINNED),
            )
            excluded = tuple(
                entry
                if isinstance(entry.reason, _REPAIRS)
                else ExcludedItem(entry.item, entry.score, Summarized(entry.reason.name))
                for entry in original.excluded
            )
            return dataclasses.replace(
                original,
                included=tuple(included),
                excluded=excluded,
                total_candidates=original.total_candidates + 1,
                total_tokens_considered=original.total_tokens_considered + cost,
            )

        return ChatSelection(messages, report, tokens=base.tokens + cost)

    def run_sync(self, summarize: Callable[[Sequence[Any]], Any]) -> ChatSelection[Any]:
        result = summarize(self.dropped)
        if inspect.isawaitable(result):
            import asyncio  # only an async summarizer needs an event loop; the CLI never loads it

            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return self.finish(asyncio.run(_awaited(result)))
            raise CupelTypeError(
                "summarize returned an awaitable inside a running event loop; use "
                "'await aselect_messages(...)' there"
            )
        return self.finish(result)

    async def run_async(self, summarize: Callable[[Sequence[Any]], Any]) -> ChatSelection[Any]:
        result = summarize(self.dropped)
        if inspect.isawaitable(result):
            result = await result
        return self.finish(result)


async def _awaited(result: Any) -> Any:
    return await result


def finish_plan(plan: ChatSelection[Any] | tuple[SummaryPlan, Any]) -> ChatSelection[Any]:
    """A planned selection (see :func:`plan_summary`), with its summary, if one is due, written now."""
    if isinstance(plan, ChatSelection):
        return plan
    return plan[0].run_sync(plan[1])


def run_planned(
    plan: Callable[[], ChatSelection[Any] | tuple[SummaryPlan, Any]],
    messages: Sequence[Any],
    budget: object,
    attributes: Callable[[], Mapping[str, object]],
) -> ChatSelection[Any]:
    """``finish_plan(plan())``; inside ``cupel.otel.tracing()``, as one ``cupel.chat`` span whose
    ``attributes()`` name the policy and strategy (see :mod:`cupel.chat.select_trace`).

    Callers on a hot path check :func:`~cupel.diagnostics.hooks.active_sink` first and call
    ``finish_plan`` directly when nothing traces."""
    sink = active_sink()
    if sink is None:
        return finish_plan(plan())
    from cupel.chat.select_trace import traced_selection

    return traced_selection(sink, messages, budget, attributes(), lambda: finish_plan(plan()))


async def run_planned_async(
    select: Callable[[], Awaitable[tuple[ChatSelection[Any], Sequence[Any]]]],
    budget: object,
    attributes: Callable[[], Mapping[str, object]],
) -> ChatSelection[Any]:
    """:func:`run_planned` for async code: ``select`` gives the selection and the transcript it read."""
    sink = active_sink()
    if sink is None:
        return (await select())[0]
    from cupel.chat.select_trace import atraced_selection

    return await atraced_selection(sink, budget, attributes(), select)


def plan_summary(
    run: Callable[[ContextBudget], ChatSelection[Any]],
    budget: ContextBudget | int,
    summarize: object,
    summary_tokens: int,
    *,
    make_message: Callable[[str], Any],
    cost_of: Callable[[Any], int],
    role_of: Callable[[Any], str],
    counter: CounterLike | None,
) -> tuple[ChatSelection[Any] | None, SummaryPlan | None, Callable[[Sequence[Any]], Any] | None]:
    """Select; if anything was dropped, select again with ``summary_tokens`` reserved.

    Returns the final selection when no summary is due, else the plan and the summariser to run.
    """
    resolved = resolve_budget(budget)
    if isinstance(summary_tokens, bool) or not isinstance(summary_tokens, int) or summary_tokens < 0:
        raise InvalidConfigurationError(f"summary_tokens must be an int >= 0, got {summary_tokens!r}")
    if summarize is None:
        return run(resolved), None, None
    if summarize is True:
        # The text gets what the summary message's own overhead leaves.
        overhead = cost_of(make_message(""))
        summarize = FirstLines(max(0, summary_tokens - overhead), counter)
    if not callable(summarize):
        raise CupelTypeError(f"summarize must be a callable, True or None, got {summarize!r}")
    full = run(resolved)
    if not _dropped(full):
        return full, None, None
    selection = run(_reserve(resolved, summary_tokens))
    plan = SummaryPlan(selection, _dropped(selection), summary_tokens, make_message, cost_of, role_of)
    return None, plan, summarize


def _dropped(selection: ChatSelection[Any]) -> list[Any]:
    """The messages selection dropped for the budget (repairs aside), in transcript order."""
    entries = [entry for entry in selection.report.excluded if not isinstance(entry.reason, _REPAIRS)]
    pairs = [
        (index, message)
        for entry in entries
        for index, message in zip(
            entry.item.metadata[INDICES_KEY], entry.item.metadata[MESSAGES_KEY], strict=True
        )
    ]
    return [message for _, message in sorted(pairs, key=lambda pair: pair[0])]
