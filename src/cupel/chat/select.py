"""``select_messages``: one call through the stages read → units and turns → choose → render.

Every front end (dicts, LangChain messages, the framework integrations, ``StableWindow``'s
compactions, the async twin) comes through :func:`plan_selection` with its format's
:class:`~cupel.chat.read.Reader`; summaries and tracing wrap it (:mod:`cupel.chat.plan`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import AsyncIterable, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from cupel import _async
from cupel.chat.choose import select_turn_records
from cupel.chat.choose_units import (
    lacks_question,
    last_with_question,
    scan_last,
    select_last,
    select_turns,
    unit_roles,
)
from cupel.chat.options import (
    KEYWORD_DEFAULTS,
    SETTING_KEYWORDS,
    ChatOptions,
    ChatPolicy,
    OnInvalid,
    _resolve,
    _resolve_pipeline,
    answering,
    chat_settings,
    check_on_invalid,
    check_session,
    explained,
    policy_name,
    resolve_budget,
    selection_attributes,
)
from cupel.chat.parse import SYSTEM_ROLES, MessageView, ParsedMessage
from cupel.chat.plan import Summarizer, clear_first, finish_plan, plan_summary, run_planned, run_planned_async
from cupel.chat.read import (
    DICTS,
    INDICES_KEY,
    MESSAGES_KEY,
    ROLES_KEY,
    Reader,
    TranscriptColumns,
    _resolve_options,
    items_of_parsed,
    message_token_counts,
    parsed_costs,
    read_columns,
    repair_links,
)
from cupel.chat.render import ChatSelection, to_messages, turns_selection
from cupel.chat.session import ChatSession
from cupel.chat.units import turn_records
from cupel.diagnostics.hooks import active_sink, run_attributes
from cupel.diagnostics.report import ExcludedItem, SelectionReport
from cupel.errors import CupelTypeError
from cupel.model import ContextBudget, ContextItem, ContextSource
from cupel.pipeline import Pipeline
from cupel.policy.chat_settings import ChatSettings, ChatStrategy, ToolResultClearing
from cupel.tokens.asynchronous import AsyncCounterLike, counted_in_advance
from cupel.tokens.base import CounterLike

__all__ = [
    "aselect_messages",
    "plan_messages",
    "plan_selection",
    "select_messages",
    "select_repaired",
    "select_turns_fast",
    "select_window",
    "select_with",
]


MessageT = TypeVar("MessageT", bound=Mapping[str, Any])


def select_units(
    items: Sequence[ContextItem],
    budget: ContextBudget | int,
    policy: object,
    settings: ChatSettings | None = None,
    *,
    strict: bool = False,
) -> ChatSelection[Any]:
    """Select from chat items (one per unit, in transcript order) and expand the choice into messages.

    ``strict`` raises when the latest turn does not fit instead of applying the agent rule
    (:func:`~cupel.chat.choose.latest_overflow`)."""
    resolved = resolve_budget(budget)
    if settings is None:
        pipeline, settings = _resolve(policy)
    else:
        pipeline = _resolve_pipeline(policy)
    if settings.strategy == "messages":
        report = pipeline.dry_run(items, resolved)
        return ChatSelection(tuple(to_messages(report.items)), report)
    if settings.strategy == "last":
        choice = select_last(items, resolved, start_on=settings.start_on)
        lead = next(
            (p for p, item in enumerate(items) if not item.pinned or unit_roles(item)[0] not in SYSTEM_ROLES),
            len(items),
        )
        start = next((p for p in range(lead, len(items)) if choice.kept[p]), len(items))
        if lacks_question(lambda p: unit_roles(items[p])[0], len(items), start, lead):
            choice = last_with_question(items, resolved, pipeline.overflow_strategy)
        system_first = False
    else:
        choice = select_turns(
            items,
            resolved,
            pipeline,
            keep_first_turn=settings.keep_first_turn,
            recent_share=settings.recent_share,
            strict=strict,
        )
        system_first = True
    kept = choice.kept_items()
    messages = to_messages(kept, system_first=system_first)
    tokens = sum(item.tokens for item in kept)
    return ChatSelection(tuple(messages), lambda: choice.report(pipeline.scorer), tokens=tokens)


def select_window(
    originals: Sequence[Any],
    views: Callable[[int], MessageView],
    budget: ContextBudget | int,
    pipeline: Pipeline,
    settings: ChatSettings,
    *,
    counter: CounterLike | None,
    options: ChatOptions | None,
    to_items: Callable[[], list[ContextItem]],
    plain: Callable[[Any, int, ChatOptions], ParsedMessage | None],
) -> ChatSelection[Any]:
    """The ``"last"`` strategy read from the end of the transcript; the report converts it all, lazily.

    ``plain`` parses a text-only message without a view (or gives ``None`` for any other).
    """
    resolved = resolve_budget(budget)
    chosen = options or ChatOptions()

    def quick(index: int) -> ParsedMessage | None:
        return plain(originals[index], index, chosen)

    window = scan_last(
        views,
        len(originals),
        quick,
        resolved,
        counter=counter,
        options=chosen,
        start_on=settings.start_on,
    )
    if lacks_question(lambda index: views(index).role, len(originals), window.start, len(window.pinned)):
        return select_units(to_items(), resolved, pipeline, settings)  # never a window without a question
    kept = [originals[index] for index in window.pinned] + list(originals[window.start :])

    def report() -> SelectionReport:
        choice = select_last(to_items(), resolved, start_on=settings.start_on)
        return choice.report(pipeline.scorer)

    return ChatSelection(tuple(kept), report, tokens=window.tokens)


def select_repaired(
    parsed: Sequence[ParsedMessage],
    originals: Sequence[Any],
    budget: ContextBudget | int,
    pipeline: Pipeline,
    settings: ChatSettings,
    *,
    counter: CounterLike | None,
    options: ChatOptions,
    strict: bool = False,
) -> ChatSelection[Any]:
    """Repair the transcript's tool-call links, select from what remains, and report every repair."""
    alive, repairs = repair_links(parsed)
    items = items_of_parsed(alive, originals, counter=counter, options=options, timestamps=None)
    selection = select_units(items, budget, pipeline, settings, strict=strict)
    if not repairs:
        return selection
    costs = dict(zip((message.index for message in parsed), parsed_costs(parsed, counter), strict=True))
    by_index = {message.index: message for message in parsed}

    def report() -> SelectionReport:
        base = selection.report
        repaired = tuple(
            ExcludedItem(
                ContextItem(
                    by_index[repair.index].rendering,
                    costs[repair.index],
                    source=ContextSource.CHAT,
                    tags=(by_index[repair.index].role,),
                    metadata={
                        MESSAGES_KEY: (originals[repair.index],),
                        INDICES_KEY: (repair.index,),
                        ROLES_KEY: (by_index[repair.index].role,),
                    },
                ),
                0.0,
                repair.reason,
            )
            for repair in repairs
        )
        return dataclasses.replace(
            base,
            excluded=base.excluded + repaired,
            total_candidates=base.total_candidates + len(repaired),
            total_tokens_considered=base.total_tokens_considered + sum(e.item.tokens for e in repaired),
        )

    return ChatSelection(selection.messages, report, tokens=selection.tokens)


def select_turns_fast(
    columns: TranscriptColumns,
    originals: Sequence[Any],
    budget: ContextBudget,
    pipeline: Pipeline,
    settings: ChatSettings,
    *,
    options: ChatOptions,
    strict: bool = False,
) -> ChatSelection[Any]:
    """The ``"turns"`` strategy on a transcript read into columns: units and turns, choose, render."""
    records = turn_records(columns, originals, options)
    outcome = select_turn_records(
        records,
        budget,
        pipeline,
        keep_first_turn=settings.keep_first_turn,
        recent_share=settings.recent_share,
        strict=strict,
    )
    return turns_selection(records, outcome, budget, pipeline, settings)


def select_messages(
    messages: Sequence[MessageT],
    budget: ContextBudget | int,
    policy: ChatPolicy = None,
    counter: CounterLike | None = None,
    *,
    options: ChatOptions | None = None,
    strategy: ChatStrategy | None = None,
    keep_first_turn: bool | None = None,
    recent_share: float | None = None,
    start_on: Literal["user", "any"] | None = None,
    on_invalid: OnInvalid = "error",
    summarize: Summarizer | bool | None = None,
    summary_tokens: int = 0,
    session: ChatSession | None = None,
    query: str | None = "auto",
    clear_tool_results: ToolResultClearing | bool | None = None,
) -> ChatSelection[MessageT]:
    """Trim ``messages`` to ``budget`` tokens; tool calls and their results stay or go together.

    ``policy``: ``None`` (the ``chat`` preset), a preset name, a :class:`~cupel.policy.Policy` or a
    :class:`~cupel.Pipeline`; ``counter`` defaults to ``HeuristicCounter()``. ``strategy``: ``"turns"``
    (whole turns, the default), ``"last"`` (a suffix of whole units, like LangChain's ``trim_messages``)
    or ``"messages"`` (units scored one by one); it and the next keywords override the policy's
    :class:`~cupel.policy.ChatSettings`, of which ``clear_tool_results`` (``True`` or a
    :class:`~cupel.policy.ToolResultClearing`) clears older tool results before units are dropped.
    Returns the kept messages (in transcript order, system messages first but under ``"last"``) and a
    :class:`~cupel.SelectionReport` built when read. ``on_invalid="repair"`` drops and reports orphaned
    tool results and unanswered calls instead of raising. ``summarize`` (a callable, or ``True`` for
    :class:`~cupel.chat.plan.FirstLines`) summarises the dropped in ``summary_tokens`` tokens. ``session``:
    a :class:`~cupel.chat.ChatSession`. ``query``: ``"auto"`` (the latest user message and tool call).
    """
    return select_with(messages, budget, policy, counter, options, locals())


def select_with(
    messages: Sequence[Any],
    budget: ContextBudget | int,
    policy: object,
    counter: CounterLike | None,
    options: ChatOptions | None,
    keywords: Mapping[str, Any],
    reader: Reader = DICTS,
) -> ChatSelection[Any]:
    """:func:`select_messages` with its keywords as a mapping (every key of ``KEYWORD_DEFAULTS``)."""
    if active_sink() is None:  # untraced: no span, no closures
        return finish_plan(plan_selection(messages, budget, policy, counter, options, keywords, reader))
    plan = functools.partial(plan_selection, messages, budget, policy, counter, options, keywords, reader)
    return run_planned(plan, messages, budget, lambda: selection_attributes(policy, keywords))


def plan_messages(
    messages: Sequence[Any],
    budget: ContextBudget | int,
    policy: ChatPolicy = None,
    counter: CounterLike | None = None,
    *,
    options: ChatOptions | None = None,
    **keywords: Any,
) -> ChatSelection[Any] | tuple[Any, Any]:
    """:func:`select_messages` up to its summary: the final selection, or ``(plan, summarizer)``.

    The async front end awaits ``plan.run_async(summarizer)``, so an async summariser runs on the loop.
    """
    unknown = sorted(set(keywords) - set(KEYWORD_DEFAULTS))
    if unknown:
        raise CupelTypeError(f"select_messages() got unexpected keyword arguments: {', '.join(unknown)}")
    return plan_selection(messages, budget, policy, counter, options, {**KEYWORD_DEFAULTS, **keywords})


def plan_selection(
    messages: Sequence[Any],
    budget: ContextBudget | int,
    policy: object,
    counter: CounterLike | None,
    options: ChatOptions | None,
    keywords: Mapping[str, Any],
    reader: Reader = DICTS,
) -> ChatSelection[Any] | tuple[Any, Any]:
    """A selection of any message format (``reader`` reads it), planned up to its summary."""
    pipeline, settings = chat_settings(policy, **{name: keywords[name] for name in SETTING_KEYWORDS})
    originals = reader.checked(messages)
    on_invalid = check_on_invalid(keywords["on_invalid"])
    session = check_session(keywords.get("session"))
    strict = bool(keywords.get("_strict_latest", False))
    pipeline = answering(pipeline, keywords["query"], originals, reader.parse)

    def run(resolved: ContextBudget) -> ChatSelection[Any]:
        attributes = {"cupel.policy.name": policy_name(policy), "cupel.chat.strategy": settings.strategy}
        with run_attributes(attributes):
            rest = (resolved, pipeline, settings, counter, options, on_invalid, session, strict)
            clearing, view, write = settings.clear_tool_results, reader.view, reader.cleared
            selection = clear_first(
                clearing, view, write, originals, counter, options, lambda kept: _select(reader, kept, *rest)
            )[0]
            result: ChatSelection[Any] = explained(selection, pipeline, settings.strategy)
            return result

    final, plan, summarize = plan_summary(
        run,
        budget,
        keywords["summarize"],
        keywords["summary_tokens"],
        make_message=reader.system_message,
        cost_of=lambda message: reader.cost_of(message, counter, options),
        role_of=reader.role_of,
        counter=counter,
    )
    if final is not None:
        return final
    return plan, summarize


def _select(
    reader: Reader,
    originals: list[Any],
    budget: ContextBudget,
    pipeline: Pipeline,
    settings: ChatSettings,
    counter: CounterLike | None,
    options: ChatOptions | None,
    on_invalid: OnInvalid,
    session: ChatSession | None,
    strict: bool = False,
) -> ChatSelection[Any]:
    """One selection by the settings' strategy: read, units and turns, choose, render."""
    if on_invalid == "repair":
        chosen = options or ChatOptions()
        parsed = [reader.parse(message, index, chosen) for index, message in enumerate(originals)]
        return select_repaired(
            parsed, originals, budget, pipeline, settings, counter=counter, options=chosen, strict=strict
        )
    if settings.strategy == "last":
        return select_window(
            originals,
            lambda index: reader.view(originals[index], index),
            budget,
            pipeline,
            settings,
            counter=counter,
            options=options,
            to_items=lambda: reader.items(originals, counter, options),
            plain=reader.plain,
        )
    if settings.strategy == "turns":
        chosen = _resolve_options(options)
        columns = read_columns(
            originals,
            reader.plain_columns,
            lambda message, index: reader.parse(message, index, chosen),
            counter=counter,
            options=chosen,
            session=session,
        )
        return select_turns_fast(
            columns, originals, budget, pipeline, settings, options=chosen, strict=strict
        )
    items = reader.items(originals, counter, options)
    return select_units(items, budget, pipeline, settings, strict=strict)


async def aselect_messages(
    messages: Iterable[MessageT] | AsyncIterable[MessageT],
    budget: ContextBudget | int,
    policy: ChatPolicy = None,
    counter: AsyncCounterLike | None = None,
    *,
    options: ChatOptions | None = None,
    **select_options: Any,
) -> ChatSelection[MessageT]:
    """Async :func:`~cupel.chat.select_messages`: same arguments, same result.

    ``messages`` may be an async iterable (drained before selection starts); ``counter`` may be async
    (each distinct text awaited once, before selection). Other keyword arguments go to
    ``select_messages`` unchanged. Selection itself runs inline, or in a worker thread for long
    transcripts (see ``docs/python-api.md``, *Async*).
    """
    select = functools.partial(_aselect, messages, budget, policy, counter, options, select_options)
    return await run_planned_async(select, budget, lambda: selection_attributes(policy, select_options))


async def _aselect(
    messages: Iterable[MessageT] | AsyncIterable[MessageT],
    budget: ContextBudget | int,
    policy: ChatPolicy,
    counter: AsyncCounterLike | None,
    options: ChatOptions | None,
    select_options: dict[str, Any],
) -> tuple[ChatSelection[MessageT], list[MessageT]]:
    """The selection and the transcript it was made from (drained from ``messages``)."""
    collected: list[MessageT] = await _async.collect(messages, "messages")
    # Every message's texts, counted without linking tool calls: a broken history reaches selection,
    # which raises on it or (on_invalid="repair") repairs it.
    sync_counter = await counted_in_advance(
        lambda recorder: message_token_counts(collected, counter=recorder, options=options), counter
    )
    planned = await _async.run_cpu(
        lambda: plan_messages(collected, budget, policy, sync_counter, options=options, **select_options),
        len(collected),
    )
    if isinstance(planned, ChatSelection):
        return planned, collected
    # A summary is due: the summariser (maybe async) runs here, on the caller's loop.
    plan, summarize = planned
    return await plan.run_async(summarize), collected
