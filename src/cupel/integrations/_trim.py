"""Trimming one framework's transcript with the chat strategies: the trimmer every integration shares.

Selection goes through the chat strategies' entry points (:func:`cupel.chat.select.select_units`, and
:func:`~cupel.chat.select.select_repaired` with ``on_invalid="repair"``) and the summary planner of
:func:`cupel.chat.select_messages`, so a framework transcript is trimmed exactly as a list of message
dicts is: by default whole turns (``strategy="turns"``), so the model is sent a valid conversation.

Agent hooks (a model call in the middle of an agent loop) use :data:`AGENT_OVERFLOW` when no policy
is given: if the latest turn alone does not fit, the longest run of its units from its start that fits
is kept instead of raising (see ``docs/integrations.md``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cupel.chat.options import (
    ChatOptions,
    ChatPolicy,
    OnInvalid,
    answering,
    chat_settings,
    check_on_invalid,
    check_query,
    explained,
    policy_name,
)
from cupel.chat.parse import MessageView, parse_message
from cupel.chat.plan import Summarizer, clear_first, plan_summary, run_planned, run_planned_async
from cupel.chat.read import build_items, message_costs
from cupel.chat.render import ChatSelection
from cupel.chat.select import select_repaired, select_units
from cupel.diagnostics.hooks import run_attributes
from cupel.errors import CupelTypeError
from cupel.integrations._common import shrink_budget, tool_schema_tokens
from cupel.model import ContextBudget, ContextItem, OverflowStrategy
from cupel.policy.chat_settings import ChatStrategy
from cupel.tokens.asynchronous import AsyncCounterLike, counted_in_advance, is_async_counter
from cupel.tokens.base import CounterLike

if TYPE_CHECKING:
    from cupel.policy import Policy

__all__ = ["AGENT_OVERFLOW", "STRATEGY_ATTRIBUTE", "TrimSettings", "Trimmer", "ViewOf"]

ViewOf = Callable[[Any, int], MessageView]
"""How an integration reads one framework message: ``(message, index) -> MessageView``."""

AGENT_OVERFLOW = OverflowStrategy.TRUNCATE
"""What agent hooks do when the latest turn alone does not fit and no policy was given."""

STRATEGY_ATTRIBUTE = "cupel.chat.strategy"
"""The root-span attribute naming the chat strategy a traced selection ran."""


@dataclasses.dataclass(frozen=True, slots=True)
class TrimSettings:
    """The :func:`cupel.chat.select_messages` keywords an integration passes on, checked up front."""

    strategy: ChatStrategy | None = None
    on_invalid: OnInvalid = "error"
    summarize: Summarizer | bool | None = None
    summary_tokens: int = 0
    query: str | None = "auto"

    def __post_init__(self) -> None:
        check_on_invalid(self.on_invalid)
        check_query(self.query)
        chat_settings(None, strategy=self.strategy)  # an unknown strategy fails here, not per call
        if isinstance(self.summary_tokens, bool) or not isinstance(self.summary_tokens, int):
            raise CupelTypeError(f"summary_tokens must be an int, got {self.summary_tokens!r}")


@functools.cache
def _agent_default() -> Policy:
    """The chat preset, its chat settings included, with :data:`AGENT_OVERFLOW`."""
    from cupel.policy import chat

    return dataclasses.replace(chat(), overflow_strategy=AGENT_OVERFLOW)


def _agent_policy(policy: ChatPolicy) -> ChatPolicy:
    """The agent default when no policy is given; any other policy as it is."""
    return _agent_default() if policy is None else policy


class Trimmer:
    """Selects a framework transcript under a budget, tool schemas charged first; ``counter`` may be
    async (then only :meth:`aselect` works). ``summary_of`` makes the framework message a text
    summary is placed as; ``cleared`` the copy of a message with tool results cleared (``None``: the
    framework's messages are not rewritten, and units are dropped instead)."""

    __slots__ = (
        "budget",
        "cleared",
        "counter",
        "name",
        "options",
        "policy",
        "settings",
        "summary_of",
        "view_of",
    )

    def __init__(
        self,
        view_of: ViewOf,
        budget: ContextBudget | int,
        policy: ChatPolicy,
        counter: AsyncCounterLike | None,
        options: ChatOptions | None,
        *,
        settings: TrimSettings,
        summary_of: Callable[[str], Any],
        agent: bool = False,
        cleared: Callable[[Any, Mapping[str, str]], Any] | None = None,
    ) -> None:
        self.view_of = view_of
        self.cleared = cleared
        self.budget = budget
        self.name = policy_name(policy)
        self.policy = _agent_policy(policy) if agent else policy
        self.counter = counter
        self.options = options
        self.settings = settings
        self.summary_of = summary_of
        chat_settings(self.policy)  # a bad policy fails at construction
        if settings.summarize not in (None, False) and is_async_counter(counter):
            # A summary's text is only known after selection, when the async counts are already in.
            raise CupelTypeError("summarize= needs a synchronous counter; got an async one")

    def views(self, messages: Sequence[Any]) -> list[MessageView]:
        return [self.view_of(message, index) for index, message in enumerate(messages)]

    def items(self, messages: Sequence[Any], counter: CounterLike | None) -> list[ContextItem]:
        return build_items(
            self.views(messages), list(messages), counter=counter, options=self.options, timestamps=None
        )

    def _plan(
        self, messages: Sequence[Any], counter: CounterLike | None, schemas: Sequence[Any]
    ) -> ChatSelection[Any] | tuple[Any, Any]:
        originals = list(messages)
        budget = shrink_budget(self.budget, tool_schema_tokens(schemas, counter))
        pipeline, settings = chat_settings(self.policy, strategy=self.settings.strategy)
        attributes = {"cupel.policy.name": self.name, STRATEGY_ATTRIBUTE: settings.strategy}
        pipeline = answering(
            pipeline,
            self.settings.query,
            originals,
            lambda message, index, chosen: parse_message(self.view_of(message, index), index, chosen),
        )

        def select(kept: list[Any], resolved: ContextBudget) -> ChatSelection[Any]:
            if self.settings.on_invalid == "repair":
                chosen = self.options or ChatOptions()
                views = self.views(kept)
                parsed = [parse_message(view, index, chosen) for index, view in enumerate(views)]
                return select_repaired(
                    parsed, kept, resolved, pipeline, settings, counter=counter, options=chosen
                )
            return select_units(self.items(kept, counter), resolved, pipeline, settings)

        def run(resolved: ContextBudget) -> ChatSelection[Any]:
            with run_attributes(attributes):
                # Repaired or not, older tool results are cleared first, as select_messages does.
                selection = clear_first(
                    settings.clear_tool_results,
                    self.view_of,
                    self.cleared,
                    originals,
                    counter,
                    self.options,
                    lambda kept: select(kept, resolved),
                )[0]
                result: ChatSelection[Any] = explained(selection, pipeline, settings.strategy)
                return result

        final, plan, summarize = plan_summary(
            run,
            budget,
            self.settings.summarize,
            self.settings.summary_tokens,
            make_message=self.summary_of,
            cost_of=lambda message: message_costs([self.view_of(message, 0)], counter, self.options)[0],
            role_of=lambda message: str(self.view_of(message, 0).role),
            counter=counter,
        )
        if final is not None:
            return final
        return plan, summarize

    def select(self, messages: Sequence[Any], schemas: Sequence[Any] = ()) -> ChatSelection[Any]:
        """The :class:`~cupel.chat.ChatSelection` of ``messages``; ``schemas`` are tool schemas."""
        if is_async_counter(self.counter):
            raise CupelTypeError("an async counter needs the async call (ainvoke, abatch, astream)")
        counter: Any = self.counter  # not async: checked above
        plan = functools.partial(self._plan, messages, counter, schemas)
        return run_planned(plan, messages, self.budget, self._traced)

    async def aselect(self, messages: Sequence[Any], schemas: Sequence[Any] = ()) -> ChatSelection[Any]:
        """:meth:`select`, awaiting an async counter first (each distinct text once) and an async
        summariser on the caller's loop."""

        def record(recorder: CounterLike) -> None:
            self.items(messages, recorder)
            tool_schema_tokens(schemas, recorder)

        async def select() -> tuple[ChatSelection[Any], Sequence[Any]]:
            counter = await counted_in_advance(record, self.counter)
            planned = self._plan(messages, counter, schemas)
            if isinstance(planned, ChatSelection):
                return planned, messages
            return await planned[0].run_async(planned[1]), messages

        return await run_planned_async(select, self.budget, self._traced)

    def _traced(self) -> dict[str, object]:
        """A traced selection's root-span names: the policy's (when known) and the strategy."""
        strategy = chat_settings(self.policy, strategy=self.settings.strategy)[1].strategy
        return {"cupel.policy.name": self.name, STRATEGY_ATTRIBUTE: strategy}
