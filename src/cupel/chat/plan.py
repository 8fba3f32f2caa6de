"""What wraps a selection: tool results cleared before anything is dropped, summaries of what was
dropped, and the traced run around it.

Clearing (:func:`clear_first`): only if the transcript does not fit, select it with its oldest
eligible tool results' content replaced by a placeholder. A summary is planned (:func:`plan_summary`):
select at the full budget; only if something was dropped, select again with ``summary_tokens``
reserved and place the summariser's text after the system messages. :class:`FirstLines` is the
offline summariser. Inside ``cupel.otel.tracing()`` a selection is one ``cupel.chat`` span
(:func:`run_planned`).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from cupel.chat.options import ChatOptions, OrphanedToolResult, Summarized, UnansweredToolCall, resolve_budget
from cupel.chat.parse import SYSTEM_ROLES, MessageView, view_of_mapping
from cupel.chat.read import INDICES_KEY, MESSAGES_KEY, ROLES_KEY
from cupel.chat.render import ChatSelection, attempted, replaced, sends_all, tool_results, with_cleared
from cupel.diagnostics.hooks import TraceSink, active_sink, current_attributes, start_operation
from cupel.diagnostics.identity import item_id
from cupel.diagnostics.reasons import InclusionReason
from cupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.model import ContextBudget, ContextItem, ContextKind, ContextSource
from cupel.policy.chat_settings import ToolResult, ToolResultClearing
from cupel.tokens.base import CounterLike
from cupel.tokens.resolve import resolve_counter

__all__ = [
    "SPAN_NAME",
    "SUMMARY_PREFIX",
    "FirstLines",
    "Summarizer",
    "SummaryPlan",
    "atraced_selection",
    "clear_first",
    "finish_plan",
    "message_text",
    "plan_summary",
    "run_planned",
    "run_planned_async",
    "traced_selection",
]


SPAN_NAME = "cupel.chat"

S = TypeVar("S", bound=ChatSelection[Any])


def _start(sink: TraceSink, budget: object, attributes: Mapping[str, object]) -> Any:
    opening: dict[str, object] = {**current_attributes()}
    opening.update((key, value) for key, value in attributes.items() if value is not None)
    try:
        resolved = resolve_budget(budget)  # type: ignore[arg-type]
    except CupelError:
        pass  # the selection raises this itself, and the span records it
    else:
        opening["cupel.budget.max_tokens"] = resolved.max_tokens
        opening["cupel.budget.target_tokens"] = resolved.target_tokens
    return start_operation(sink, SPAN_NAME, opening)


def outcome(selection: ChatSelection[Any], originals: Sequence[Any]) -> dict[str, object]:
    """The root span's result attributes: tokens and message counts of what was kept and dropped."""
    remaining = Counter(map(id, selection.messages))
    kept = 0
    for message in originals:
        if remaining[id(message)]:
            remaining[id(message)] -= 1
            kept += 1
    return {
        "cupel.chat.message_count": len(originals),
        "cupel.result.tokens": selection.tokens,
        "cupel.result.included_count": len(selection.messages),
        "cupel.result.excluded_count": len(originals) - kept,
        # Kept messages are the caller's own objects; anything else in the result is the summary.
        "cupel.chat.select": len(selection.messages) > kept,
    }


def exclusions(selection: ChatSelection[Any]) -> list[tuple[str, Mapping[str, object]]]:
    """One ``cupel.exclusion`` event per dropped unit (a tool call and its results travel together)."""
    excluded = selection.report.excluded  # built untraced: explanation, not selection
    return [
        (
            "cupel.exclusion",
            {
                "cupel.exclusion.reason": entry.reason.name,
                "cupel.exclusion.item_kind": str(entry.item.kind),
                "cupel.exclusion.item_tokens": entry.item.tokens,
                "cupel.exclusion.item_id": item_id(entry.item),
                "cupel.chat.message_count": len(entry.item.metadata.get(INDICES_KEY, ())),
            },
        )
        for entry in excluded
    ]


def _finished(operation: Any, selection: ChatSelection[Any], originals: Sequence[Any]) -> None:
    events = exclusions(selection) if operation.exclusions else []
    operation.finish(outcome(selection, originals), events, None)


def traced_selection(
    sink: TraceSink,
    originals: Sequence[Any],
    budget: object,
    attributes: Mapping[str, object],
    select: Callable[[], S],
) -> S:
    """``select()`` inside a ``cupel.chat`` span opened with ``attributes`` (``None`` values skipped)."""
    operation = _start(sink, budget, attributes)
    try:
        selection = select()
    except BaseException as error:
        operation.finish({}, [], error)
        raise
    _finished(operation, selection, originals)
    return selection


async def atraced_selection(
    sink: TraceSink,
    budget: object,
    attributes: Mapping[str, object],
    select: Callable[[], Awaitable[tuple[S, Sequence[Any]]]],
) -> S:
    """:func:`traced_selection` for async code; ``select`` also returns the transcript it drained."""
    operation = _start(sink, budget, attributes)
    try:
        selection, originals = await select()
    except BaseException as error:
        operation.finish({}, [], error)
        raise
    _finished(operation, selection, originals)
    return selection


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
                else ExcludedItem(entry.item, entry.score, Summarized(entry.reason.name), entry.relevance)
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
    ``attributes()`` name the policy and strategy (see :mod:`cupel.chat.render`).

    Callers on a hot path check :func:`~cupel.diagnostics.hooks.active_sink` first and call
    ``finish_plan`` directly when nothing traces."""
    sink = active_sink()
    if sink is None:
        return finish_plan(plan())
    pass

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
    pass

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


SUMMARY_PREFIX = "Earlier conversation, summarised:"


class Summarizer(Protocol):
    """Turns the dropped messages (transcript order) into a summary: text or a message, maybe awaited."""

    def __call__(self, dropped: Sequence[Any], /) -> str | Any | Awaitable[str | Any]: ...


def message_text(message: Any) -> tuple[str, str]:
    """A message's role and its text (text parts joined), for dicts and LangChain messages alike."""
    if isinstance(message, dict):
        view = view_of_mapping(message, 0)
        role, content = str(view.role), view.content
    else:
        role, content = getattr(message, "type", "message"), getattr(message, "content", "")
    if isinstance(content, str):
        return role, content
    parts = content if isinstance(content, list) else []
    texts = [
        part.get("text", "") for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]
    return role, " ".join(text for text in texts if text)


@dataclass(frozen=True, slots=True)
class FirstLines:
    """The offline summariser: one line per dropped turn (its first message's first line), cut to fit.

    ``max_tokens`` bounds the summary text as ``counter`` counts it (default ``HeuristicCounter()``).
    """

    max_tokens: int
    counter: CounterLike | None = None

    def __call__(self, dropped: Sequence[Any], /) -> str:
        count = resolve_counter(self.counter).count
        lines = [SUMMARY_PREFIX]
        opening = True
        for message in dropped:
            role, text = message_text(message)
            if role in ("user", "human"):
                opening = True
            if not opening or role in ("tool", "function"):
                continue
            first = next((line.strip() for line in text.splitlines() if line.strip()), "")
            if first:
                lines.append(f"- {role}: {first}")
                opening = False
        summary = "\n".join(lines)
        if count(summary) <= self.max_tokens:
            return summary
        # Cut at the longest prefix that fits (binary search on characters; counts grow with length).
        low, high = 0, len(summary)
        while low < high:
            middle = (low + high + 1) // 2
            if count(summary[:middle] + "…") <= self.max_tokens:
                low = middle
            else:
                high = middle - 1
        return summary[:low] + "…" if low else ""


SummaryCall = Callable[[Sequence[Any]], Any]


def clear_first(
    clearing: ToolResultClearing | None,
    view: Callable[[Any, int], MessageView],
    write: Callable[[Any, Mapping[str, str]], Any] | None,
    originals: list[Any],
    counter: CounterLike | None,
    options: ChatOptions | None,
    select: Callable[[list[Any]], ChatSelection[Any]],
    at_least: int = 0,
) -> tuple[ChatSelection[Any], list[Any], list[ToolResult]]:
    """``select(originals)``; with ``clearing``, when that drops a message, ``select`` of the transcript
    with its oldest eligible tool results cleared: the fewest that keep every message (and then enough
    to save ``at_least`` tokens), else all of them (and ``select`` drops units too). Also the
    transcript selected from and the results cleared in it."""
    if clearing is None:
        return select(originals), originals, []
    plain = attempted(select, originals)
    if plain is not None and sends_all(plain, originals):
        return plain, originals, []
    views = [view(message, index) for index, message in enumerate(originals)]
    results = tool_results(views, clearing.text, counter, options or ChatOptions())
    eligible = clearing.clearable(results)
    if write is None or not eligible:  # none to clear, or messages cupel cannot rewrite (said in a note)
        return with_cleared(plain or select(originals), [], originals, fitted=not eligible), originals, []
    found: dict[int, tuple[ChatSelection[Any], list[Any]]] = {}

    def fits(count: int) -> bool:
        transcript = replaced(originals, eligible[:count], clearing.text, write)
        attempt = attempted(select, transcript)
        if attempt is not None and sends_all(attempt, transcript):
            found[count] = (attempt, transcript)
        return count in found

    count = clearing.fewest(len(eligible), fits)
    if count is None:
        transcript = replaced(originals, eligible, clearing.text, write)
        return with_cleared(select(transcript), eligible, transcript, fitted=False), transcript, eligible
    saved = sum(result.tokens - result.placeholder_tokens for result in eligible[:count])
    more = count
    while saved < at_least and more < len(eligible):
        saved += eligible[more].tokens - eligible[more].placeholder_tokens
        more += 1
    count = more if more > count and fits(more) else count
    selection, transcript = found[count]
    return with_cleared(selection, eligible[:count], transcript, fitted=True), transcript, eligible[:count]
