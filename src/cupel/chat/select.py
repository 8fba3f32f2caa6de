"""select_messages: trim a transcript to a budget in one call, keeping tool-call units whole."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Union

from cupel.chat._columns import read_columns
from cupel.chat._parse import (
    MessageView,
    ParsedMessage,
    parse_message,
    parse_plain,
    plain_columns,
    view_of_mapping,
)
from cupel.chat.convert import (
    INDICES_KEY,
    MESSAGES_KEY,
    ROLES_KEY,
    _as_list,
    _resolve_options,
    items_of_parsed,
    message_costs,
    messages_to_items,
    parsed_costs,
    to_messages,
)
from cupel.chat.last import scan_last, select_last
from cupel.chat.options import ChatOptions
from cupel.chat.repair import repair_links
from cupel.chat.selection import ChatSelection, resolve_budget
from cupel.chat.summarize import Summarizer
from cupel.chat.summarized import finish_plan, plan_summary, run_planned
from cupel.chat.turn_report import select_turns_fast
from cupel.chat.whole_turns import select_turns
from cupel.diagnostics.hooks import active_sink, run_attributes
from cupel.diagnostics.report import ExcludedItem, SelectionReport
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.model import ContextBudget, ContextItem, ContextSource
from cupel.pipeline import Pipeline
from cupel.policy.chat_settings import ChatSettings, ChatStrategy
from cupel.tokens.base import CounterLike

if TYPE_CHECKING:
    from cupel.policy import Policy

__all__ = [
    "SETTING_KEYWORDS",
    "ChatPolicy",
    "ChatSelection",
    "OnInvalid",
    "chat_pipeline",
    "chat_settings",
    "check_on_invalid",
    "plan_messages",
    "resolve_budget",
    "select_items",
    "select_messages",
    "select_repaired",
    "select_turns_fast",
    "select_window",
    "selection_attributes",
]

M = TypeVar("M")
MessageT = TypeVar("MessageT", bound=Mapping[str, Any])

ChatPolicy = Union["Pipeline", "Policy", str, None]
"""What ``policy`` accepts: ``None`` (the chat preset), a preset name, a Policy or a Pipeline."""


def chat_pipeline() -> Pipeline:
    """The ``chat`` preset: recency (weight 3) and kind (weight 1), greedy slicing, chronological order."""
    from cupel.policy import chat

    return Pipeline.from_policy(chat())


@functools.cache
def _default_pipeline() -> Pipeline:
    """The chat preset's pipeline, built once: selection only reads it."""
    return chat_pipeline()


def _resolve_pipeline(policy: object) -> Pipeline:
    """The one place a ``policy`` argument becomes a pipeline: None, a Pipeline, a Policy or a preset name."""
    return _resolve(policy)[0]


def _resolve(policy: object) -> tuple[Pipeline, ChatSettings]:
    """The pipeline and chat settings of a ``policy`` argument (a Pipeline has the default settings)."""
    from cupel.policy import Policy, get_preset

    if policy is None:
        return _default_pipeline(), ChatSettings()
    if isinstance(policy, Pipeline):
        return policy, ChatSettings()
    if isinstance(policy, str):
        policy = get_preset(policy)
    if isinstance(policy, Policy):
        return Pipeline.from_policy(policy), policy.chat or ChatSettings()
    raise CupelTypeError(
        f"policy must be None, a preset name, a cupel.Policy or a cupel.Pipeline, got {policy!r}"
    )


def chat_settings(
    policy: object,
    *,
    strategy: str | None = None,
    keep_first_turn: bool | None = None,
    recent_share: float | None = None,
    start_on: str | None = None,
) -> tuple[Pipeline, ChatSettings]:
    """The pipeline and settings a selection runs with: the policy's, overridden by the keywords given."""
    pipeline, settings = _resolve(policy)
    changes: dict[str, Any] = {
        name: value
        for name, value in (
            ("strategy", strategy),
            ("keep_first_turn", keep_first_turn),
            ("recent_share", recent_share),
            ("start_on", start_on),
        )
        if value is not None
    }
    return pipeline, dataclasses.replace(settings, **changes) if changes else settings


def select_items(
    items: Sequence[ContextItem], budget: ContextBudget | int, policy: object
) -> tuple[list[Any], SelectionReport]:
    """Run the policy's pipeline over chat items and expand the selection back into messages."""
    pipeline = _resolve_pipeline(policy)
    # Traced runs (cupel.otel.tracing) name the preset they ran, when it is one.
    with run_attributes({"cupel.policy.name": policy_name(policy)}):
        report = pipeline.dry_run(items, resolve_budget(budget))
    return to_messages(report.items), report


def policy_name(policy: object) -> str | None:
    """The preset a ``policy`` argument names, for traced runs (``None`` for other policies)."""
    return "chat" if policy is None else policy if isinstance(policy, str) else None


def selection_attributes(policy: object, keywords: Mapping[str, Any]) -> dict[str, object]:
    """A traced selection's policy name (when known) and strategy (when the arguments are valid)."""
    try:
        overrides = {name: keywords.get(name) for name in SETTING_KEYWORDS}
        strategy: str | None = chat_settings(policy, **overrides)[1].strategy
    except CupelError:
        strategy = None  # the selection raises this itself, and its span records it
    return {"cupel.policy.name": policy_name(policy), "cupel.chat.strategy": strategy}


def select_units(
    items: Sequence[ContextItem],
    budget: ContextBudget | int,
    policy: object,
    settings: ChatSettings | None = None,
) -> ChatSelection[Any]:
    """Select from chat items (one per unit, in transcript order) and expand the choice into messages."""
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
        system_first = False
    else:
        choice = select_turns(
            items,
            resolved,
            pipeline,
            keep_first_turn=settings.keep_first_turn,
            recent_share=settings.recent_share,
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
    kept = [originals[index] for index in window.pinned] + list(originals[window.start :])

    def report() -> SelectionReport:
        choice = select_last(to_items(), resolved, start_on=settings.start_on)
        return choice.report(pipeline.scorer)

    return ChatSelection(tuple(kept), report, tokens=window.tokens)


OnInvalid = Literal["error", "repair"]

SETTING_KEYWORDS = ("strategy", "keep_first_turn", "recent_share", "start_on")
"""The keywords of :func:`select_messages` that override the policy's chat settings."""


def select_repaired(
    parsed: Sequence[ParsedMessage],
    originals: Sequence[Any],
    budget: ContextBudget | int,
    pipeline: Pipeline,
    settings: ChatSettings,
    *,
    counter: CounterLike | None,
    options: ChatOptions,
) -> ChatSelection[Any]:
    """Repair the transcript's tool-call links, select from what remains, and report every repair."""
    alive, repairs = repair_links(parsed)
    items = items_of_parsed(alive, originals, counter=counter, options=options, timestamps=None)
    selection = select_units(items, budget, pipeline, settings)
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


def check_on_invalid(on_invalid: object) -> OnInvalid:
    """``on_invalid`` checked: ``"error"`` (raise on a broken history) or ``"repair"``."""
    if on_invalid not in ("error", "repair"):
        raise InvalidConfigurationError(f"on_invalid must be 'error' or 'repair', got {on_invalid!r}")
    return "repair" if on_invalid == "repair" else "error"


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
) -> ChatSelection[MessageT]:
    """Trim ``messages`` to ``budget`` tokens; tool calls and their results stay or go together.

    ``policy`` is ``None`` (the ``chat`` preset), a preset name, a :class:`~cupel.policy.Policy` or a
    :class:`~cupel.Pipeline`; ``counter`` defaults to ``HeuristicCounter()``. ``strategy`` is
    ``"turns"`` (the default: whole turns), ``"last"`` (a suffix of whole units, like LangChain's
    ``trim_messages``) or ``"messages"`` (units scored one by one); it and the other keywords override
    the policy's :class:`~cupel.policy.ChatSettings`. Returns the kept messages (the same objects, in
    transcript order; under ``"turns"`` and ``"messages"`` system messages first) and a
    :class:`~cupel.SelectionReport` built when first read. ``on_invalid="repair"`` drops orphaned tool
    results and tool calls without a result (see :mod:`cupel.chat.repair`) instead of raising, and
    reports each dropped message. ``summarize`` (a callable, or ``True`` for
    :class:`~cupel.chat.summarize.FirstLines`) summarises what was dropped in ``summary_tokens``
    reserved tokens, placed right after the system messages; nothing dropped, no summary.
    """
    keywords = locals()
    if active_sink() is None:  # untraced: no span, no closures
        return finish_plan(_plan(messages, budget, policy, counter, options, keywords))
    plan = functools.partial(_plan, messages, budget, policy, counter, options, keywords)
    return run_planned(plan, messages, budget, lambda: selection_attributes(policy, keywords))


_KEYWORD_DEFAULTS: dict[str, Any] = {
    "strategy": None,
    "keep_first_turn": None,
    "recent_share": None,
    "start_on": None,
    "on_invalid": "error",
    "summarize": None,
    "summary_tokens": 0,
}


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
    unknown = sorted(set(keywords) - set(_KEYWORD_DEFAULTS))
    if unknown:
        raise CupelTypeError(f"select_messages() got unexpected keyword arguments: {', '.join(unknown)}")
    return _plan(messages, budget, policy, counter, options, {**_KEYWORD_DEFAULTS, **keywords})


def _plan(
    messages: Sequence[Any],
    budget: ContextBudget | int,
    policy: object,
    counter: CounterLike | None,
    options: ChatOptions | None,
    keywords: Mapping[str, Any],
) -> ChatSelection[Any] | tuple[Any, Any]:
    pipeline, settings = chat_settings(policy, **{name: keywords[name] for name in SETTING_KEYWORDS})
    originals = _as_list(messages, "messages")
    on_invalid = check_on_invalid(keywords["on_invalid"])

    def run(resolved: ContextBudget) -> ChatSelection[Any]:
        attributes = {"cupel.policy.name": policy_name(policy), "cupel.chat.strategy": settings.strategy}
        with run_attributes(attributes):
            return _select_dicts(originals, resolved, pipeline, settings, counter, options, on_invalid)

    def cost_of(message: Any) -> int:
        return message_costs([view_of_mapping(message, 0)], counter, options)[0]

    final, plan, summarize = plan_summary(
        run,
        budget,
        keywords["summarize"],
        keywords["summary_tokens"],
        make_message=lambda text: {"role": "system", "content": text},
        cost_of=cost_of,
        role_of=lambda message: str(message.get("role")),
        counter=counter,
    )
    if final is not None:
        return final
    return plan, summarize


def _select_dicts(
    originals: list[Any],
    budget: ContextBudget,
    pipeline: Pipeline,
    settings: ChatSettings,
    counter: CounterLike | None,
    options: ChatOptions | None,
    on_invalid: OnInvalid,
) -> ChatSelection[Any]:
    """One selection over message dicts, by the settings' strategy."""
    if on_invalid == "repair":
        chosen = options or ChatOptions()
        parsed = [
            parse_plain(message, index, chosen)
            or parse_message(view_of_mapping(message, index), index, chosen)
            for index, message in enumerate(originals)
        ]
        return select_repaired(parsed, originals, budget, pipeline, settings, counter=counter, options=chosen)
    if settings.strategy == "last":
        return select_window(
            originals,
            lambda index: view_of_mapping(originals[index], index),
            budget,
            pipeline,
            settings,
            counter=counter,
            options=options,
            to_items=lambda: messages_to_items(originals, counter=counter, options=options),
            plain=lambda message, index, chosen: parse_plain(message, index, chosen, render=False),
        )
    if settings.strategy == "turns":
        chosen = _resolve_options(options)

        def parse(message: Any, index: int) -> ParsedMessage:
            return parse_message(view_of_mapping(message, index), index, chosen)

        columns = read_columns(originals, plain_columns, parse, counter=counter, options=chosen)
        return select_turns_fast(columns, originals, budget, pipeline, settings, options=chosen)
    items = messages_to_items(originals, counter=counter, options=options)
    return select_units(items, budget, pipeline, settings)
