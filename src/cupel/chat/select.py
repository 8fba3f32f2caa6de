"""select_messages: trim a transcript to a budget in one call, keeping tool-call units whole."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, Union

from cupel.chat.convert import messages_to_items, to_messages
from cupel.chat.options import ChatOptions
from cupel.diagnostics.hooks import run_attributes
from cupel.diagnostics.report import SelectionReport
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextBudget, ContextItem
from cupel.pipeline import Pipeline
from cupel.tokens.base import CounterLike

if TYPE_CHECKING:
    from cupel.policy import Policy

__all__ = ["ChatPolicy", "ChatSelection", "chat_pipeline", "resolve_budget", "select_messages"]

M = TypeVar("M")
MessageT = TypeVar("MessageT", bound=Mapping[str, Any])

ChatPolicy = Union["Pipeline", "Policy", str, None]
"""What ``policy`` accepts: ``None`` (the chat preset), a preset name, a Policy or a Pipeline."""


@dataclass(frozen=True, slots=True)
class ChatSelection(Generic[M]):
    """The trimmed transcript and the report explaining it."""

    messages: tuple[M, ...]
    report: SelectionReport

    @property
    def tokens(self) -> int:
        """Tokens of the kept messages, as charged during selection."""
        return self.report.included_tokens

    @property
    def excluded_messages(self) -> tuple[M, ...]:
        """The dropped messages, in transcript order."""
        return tuple(to_messages([entry.item for entry in self.report.excluded], system_first=False))


def chat_pipeline() -> Pipeline:
    """The ``chat`` preset: recency (weight 3) and kind (weight 1), greedy slicing, chronological order."""
    from cupel.policy import chat

    return Pipeline.from_policy(chat())


def _resolve_pipeline(policy: object) -> Pipeline:
    """The one place a ``policy`` argument becomes a pipeline: None, a Pipeline, a Policy or a preset name."""
    from cupel.policy import Policy, get_preset

    if policy is None:
        return chat_pipeline()
    if isinstance(policy, Pipeline):
        return policy
    if isinstance(policy, Policy):
        return Pipeline.from_policy(policy)
    if isinstance(policy, str):
        return Pipeline.from_policy(get_preset(policy))
    raise CupelTypeError(
        f"policy must be None, a preset name, a cupel.Policy or a cupel.Pipeline, got {policy!r}"
    )


def resolve_budget(budget: ContextBudget | int) -> ContextBudget:
    """A :class:`ContextBudget`, or an int ``n`` meaning ``ContextBudget(n, n)``."""
    if isinstance(budget, ContextBudget):
        return budget
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise CupelTypeError(f"budget must be a ContextBudget or an int, got {budget!r}")
    if budget < 0:
        raise InvalidConfigurationError(f"budget must be >= 0, got {budget}")
    return ContextBudget(budget, budget)


def select_items(
    items: Sequence[ContextItem], budget: ContextBudget | int, policy: object
) -> tuple[list[Any], SelectionReport]:
    """Run the policy's pipeline over chat items and expand the selection back into messages."""
    pipeline = _resolve_pipeline(policy)
    # Traced runs (cupel.otel.tracing) name the preset they ran, when it is one.
    name = "chat" if policy is None else policy if isinstance(policy, str) else None
    with run_attributes({"cupel.policy.name": name}):
        report = pipeline.dry_run(items, resolve_budget(budget))
    return to_messages(report.items), report


def select_messages(
    messages: Sequence[MessageT],
    budget: ContextBudget | int,
    policy: ChatPolicy = None,
    counter: CounterLike | None = None,
    *,
    options: ChatOptions | None = None,
) -> ChatSelection[MessageT]:
    """Trim ``messages`` to ``budget`` tokens; tool calls and their results stay or go together.

    ``policy`` is ``None`` for :func:`chat_pipeline` or a :class:`~cupel.Pipeline`; ``counter``
    defaults to ``HeuristicCounter()``. Returns the kept messages (the same dict objects, in transcript
    order, system messages first) and the pipeline's :class:`~cupel.SelectionReport`.
    """
    items = messages_to_items(messages, counter=counter, options=options)
    kept, report = select_items(items, budget, policy)
    return ChatSelection(tuple(kept), report)
