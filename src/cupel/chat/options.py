"""What a chat selection is configured with, and the reasons it reports.

:class:`ChatOptions` (token accounting and pinning); the ``policy`` argument resolved into a pipeline
and :class:`~cupel.policy.ChatSettings` (``chat_settings``); the keyword checks every front end
shares; the ``query`` a selection answers (``"auto"``: read from the transcript, bound into the
policy's scorer once per selection, docs/spec-notes.md "Relevance in chat"); and the exclusion
reasons beyond the spec's eight: :class:`IncompleteTurn`,
:class:`OrphanedToolResult` and :class:`UnansweredToolCall` (repair), :class:`Summarized` and
:class:`Compacted` (``StableWindow``), serialised as the others are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Union

from cupel.chat.session import ChatSession
from cupel.errors import CupelError, CupelTypeError, PinnedItemsExceedBudgetError
from cupel.pipeline import Pipeline, compute_effective_budget
from cupel.policy.chat_settings import ChatSettings

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from cupel.diagnostics.report import SelectionReport
    from cupel.policy import Policy

from typing import ClassVar

from cupel._frozen import dataclass, field
from cupel.diagnostics.reasons import ExclusionReason
from cupel.errors import (
    InvalidConfigurationError,
)
from cupel.model import ContextBudget, _ReadOnlyMap
from cupel.scorers._base import bind_query

__all__ = [
    "AUTO",
    "DEFAULT_PART_COST",
    "KEYWORD_DEFAULTS",
    "LOW_DETAIL_IMAGE_COST",
    "SETTING_KEYWORDS",
    "ChatOptions",
    "ChatPolicy",
    "Compacted",
    "IncompleteTurn",
    "OnInvalid",
    "OrphanedToolResult",
    "Summarized",
    "UnansweredToolCall",
    "answering",
    "auto_query",
    "available_tokens",
    "chat_pipeline",
    "chat_settings",
    "check_on_invalid",
    "check_query",
    "check_session",
    "explained",
    "policy_name",
    "resolve_budget",
    "resolve_query",
    "selection_attributes",
    "with_query",
]


@dataclass(frozen=True, slots=True)
class Compacted(ExclusionReason):
    """The unit was dropped when the window last compacted (toward its low-water mark of
    ``low_water_tokens``), and stays out so the turns since keep the same prompt prefix."""

    variant: ClassVar[str] = "Compacted"
    low_water_tokens: int

    def describe(self) -> str:
        return (
            "Compacted: dropped when the window last compacted (low-water mark "
            f"{self.low_water_tokens} tokens); it stays out so later turns keep the same prompt prefix"
        )


@dataclass(frozen=True, slots=True)
class IncompleteTurn(ExclusionReason):
    """The unit fitted, but the user message opening its turn did not: a reply never goes without it."""

    variant: ClassVar[str] = "IncompleteTurn"
    turn: int

    def describe(self) -> str:
        return f"IncompleteTurn: the user message of turn {self.turn} was not kept, so its replies go too"


@dataclass(frozen=True, slots=True)
class OrphanedToolResult(ExclusionReason):
    """Repair dropped a tool result that answers no tool call made before it."""

    variant: ClassVar[str] = "OrphanedToolResult"
    call_id: str

    def describe(self) -> str:
        return f"OrphanedToolResult: answers tool call {self.call_id!r}, which no earlier message made"


@dataclass(frozen=True, slots=True)
class UnansweredToolCall(ExclusionReason):
    """Repair dropped a tool call that never got its result (with the results of its sibling calls)."""

    variant: ClassVar[str] = "UnansweredToolCall"
    call_id: str

    def describe(self) -> str:
        return f"UnansweredToolCall: tool call {self.call_id!r} has no result in the transcript"


@dataclass(frozen=True, slots=True)
class Summarized(ExclusionReason):
    """Dropped for the budget, and told in the summary placed after the system messages instead."""

    variant: ClassVar[str] = "Summarized"
    dropped_because: str

    def describe(self) -> str:
        return f"Summarized: dropped ({self.dropped_because}) and told in the summary"


DEFAULT_PART_COST = 765
"""Tokens charged for one image or other non-text part: OpenAI's price of a 1024x1024 high-detail image."""

LOW_DETAIL_IMAGE_COST = 85
"""Tokens charged for an image part with ``"detail": "low"``: OpenAI's fixed low-detail price."""


def _check_count(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CupelTypeError(f"ChatOptions.{name} must be an int, got {value!r}")
    if value < 0:
        raise InvalidConfigurationError(f"ChatOptions.{name} must be >= 0, got {value}")


@dataclass(frozen=True, slots=True)
class ChatOptions:
    """Token accounting and pinning for chat conversion; every field has a documented default.

    A message costs ``message_overhead`` plus its counted text: content text parts, ``name`` (plus
    ``name_overhead``), ``refusal``, and each tool call's name and arguments (plus
    ``tool_call_overhead``). Each non-text part (image, audio, file, ...) costs
    ``low_detail_image_cost`` if it is an image marked ``"detail": "low"``, else
    ``part_costs.get(type, part_cost)``; a base64 payload's length never counts.

    ``pin_system`` pins system and developer messages; ``pin_last_user`` pins the unit holding the last
    user message, so trimming never drops the turn the model is asked to answer.
    """

    message_overhead: int = 4
    name_overhead: int = 1
    tool_call_overhead: int = 3
    part_cost: int = DEFAULT_PART_COST
    low_detail_image_cost: int = LOW_DETAIL_IMAGE_COST
    part_costs: Mapping[str, int] = field(default_factory=lambda: _ReadOnlyMap[str, int]())
    pin_system: bool = True
    pin_last_user: bool = True

    def __post_init__(self) -> None:
        for name in ("message_overhead", "name_overhead", "tool_call_overhead", "part_cost"):
            _check_count(name, getattr(self, name))
        _check_count("low_detail_image_cost", self.low_detail_image_cost)
        if not isinstance(self.part_costs, Mapping):
            raise CupelTypeError(
                f"ChatOptions.part_costs must be a mapping of part type to tokens, got {self.part_costs!r}"
            )
        costs: dict[str, int] = {}
        for part_type, cost in self.part_costs.items():
            if not isinstance(part_type, str):
                raise CupelTypeError(
                    f"ChatOptions.part_costs keys must be part type strings, got {part_type!r}"
                )
            _check_count(f"part_costs[{part_type!r}]", cost)
            costs[part_type] = cost
        object.__setattr__(self, "part_costs", _ReadOnlyMap(costs))
        for name in ("pin_system", "pin_last_user"):
            value: Any = getattr(self, name)
            if not isinstance(value, bool):
                raise CupelTypeError(f"ChatOptions.{name} must be a bool, got {value!r}")

    def cost_of_part(self, part_type: str, *, low_detail: bool = False) -> int:
        """Tokens charged for one non-text part of ``part_type``."""
        if low_detail:
            return self.low_detail_image_cost
        return self.part_costs.get(part_type, self.part_cost)


ChatPolicy = Union["Pipeline", "Policy", str, None]
"""What ``policy`` accepts: ``None`` (the chat preset), a preset name, a Policy or a Pipeline."""


def chat_pipeline() -> Pipeline:
    """The ``chat`` preset's pipeline (:func:`cupel.policy.chat`; its chat settings are not part of it)."""
    from cupel.policy import chat

    return Pipeline.from_policy(chat())


def _resolve_pipeline(policy: object) -> Pipeline:
    """The one place a ``policy`` argument becomes a pipeline: None, a Pipeline, a Policy or a preset name."""
    return _resolve(policy)[0]


def _resolve(policy: object) -> tuple[Pipeline, ChatSettings]:
    """The pipeline and chat settings of a ``policy`` argument (a Pipeline has the default settings)."""
    from cupel.policy import Policy, get_preset

    if policy is None:
        policy = "chat"  # the preset with its chat settings, as policy="chat" gives
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
    clear_tool_results: object = None,
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
            ("clear_tool_results", clear_tool_results),
        )
        if value is not None
    }
    return pipeline, dataclasses.replace(settings, **changes) if changes else settings


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


OnInvalid = Literal["error", "repair"]


SETTING_KEYWORDS = ("strategy", "keep_first_turn", "recent_share", "start_on", "clear_tool_results")
"""The keywords of :func:`select_messages` that override the policy's chat settings."""


def check_on_invalid(on_invalid: object) -> OnInvalid:
    """``on_invalid`` checked: ``"error"`` (raise on a broken history) or ``"repair"``."""
    if on_invalid not in ("error", "repair"):
        raise InvalidConfigurationError(f"on_invalid must be 'error' or 'repair', got {on_invalid!r}")
    return "repair" if on_invalid == "repair" else "error"


def check_session(session: object) -> ChatSession | None:
    """``session`` checked: ``None`` or a :class:`~cupel.chat.ChatSession`."""
    if session is not None and not isinstance(session, ChatSession):
        raise CupelTypeError(
            f"session must be a cupel.chat.ChatSession or None, got {type(session).__name__}"
        )
    return session


def resolve_budget(budget: ContextBudget | int) -> ContextBudget:
    """A :class:`ContextBudget`, or an int ``n`` meaning ``ContextBudget(n, n)``."""
    if isinstance(budget, ContextBudget):
        return budget
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise CupelTypeError(f"budget must be a ContextBudget or an int, got {budget!r}")
    if budget < 0:
        raise InvalidConfigurationError(f"budget must be >= 0, got {budget}")
    return ContextBudget(budget, budget)


def available_tokens(budget: ContextBudget, pinned_tokens: int) -> int:
    """Tokens left for unpinned units: the spec's effective target; pinned overflow raises as in Classify."""
    if pinned_tokens > budget.max_tokens - budget.output_reserve:
        raise PinnedItemsExceedBudgetError(pinned_tokens, budget.max_tokens - budget.output_reserve)
    return compute_effective_budget(budget, pinned_tokens).target_tokens


AUTO = "auto"
"""The default ``query``: read from the transcript."""


def check_query(query: object) -> str | None:
    """``query`` checked: ``"auto"``, ``None`` or a string."""
    if query is None or isinstance(query, str):
        return query
    raise CupelTypeError(f"query must be a string, 'auto' or None, got {type(query).__name__}")


def auto_query(count: int, parse: Callable[[int], Any]) -> str | None:
    """The ``"auto"`` query of a transcript of ``count`` messages; ``parse`` reads one by position into
    a :class:`~cupel.chat.parse.ParsedMessage` (typed ``Any``: parse imports this module).

    Read from the end back to the latest user message that answers no tool call. A message that does
    not parse is passed over: selection reads it too and raises on it there, in transcript order.
    """
    call: tuple[str, str] | None = None
    for index in range(count - 1, -1, -1):
        try:
            parsed = parse(index)
        except CupelError:
            continue
        if call is None and parsed.role == "assistant":
            call = parsed.last_call
        if parsed.role == "user" and not parsed.results:
            words = [text for text in parsed.texts[parsed.content_start :] if text]
            if call is not None:
                words.extend(call)
            return " ".join(words)
    return None


def resolve_query(query: object, count: int, parse: Callable[[int], Any]) -> str | None:
    """The query of one selection: :func:`auto_query` for ``"auto"``, else ``query`` as given."""
    checked = check_query(query)
    if checked == AUTO:
        return auto_query(count, parse)
    return checked


def answering(
    pipeline: Pipeline,
    query: object,
    messages: Sequence[Any],
    parse: Callable[[Any, int, ChatOptions], Any],
) -> Pipeline:
    """``pipeline`` answering the selection's query (:func:`resolve_query` of ``messages``, each read
    by ``parse``): the one place chat hands a query to the policy's scorer."""
    chosen = ChatOptions()
    query = resolve_query(query, len(messages), lambda index: parse(messages[index], index, chosen))
    return with_query(pipeline, query)


def with_query(pipeline: Pipeline, query: str | None) -> Pipeline:
    """``pipeline`` with ``query`` bound into its scorer; itself when nothing reads a query."""
    scorer = bind_query(pipeline.scorer, query)
    if scorer is pipeline.scorer:
        return pipeline
    return Pipeline(
        scorer,
        pipeline.slicer,
        pipeline.placer,
        deduplication=pipeline.deduplication,
        overflow_strategy=pipeline.overflow_strategy,
        on_overflow=pipeline.on_overflow,
    )


def explained(selection: Any, pipeline: Pipeline, strategy: str) -> Any:
    """``selection`` (a :class:`~cupel.chat.render.ChatSelection`) whose report adds a note on the
    query, when the pipeline's scorer has a relevance term; otherwise ``selection`` itself.

    Each entry already carries the relevance its choice used (the render stage reads it off the
    choice's scoring pass), so nothing is scored here. ``"messages"`` runs the pipeline's
    ``dry_run``, which explains relevance itself.
    """
    from cupel.scorers._relevance_report import find_relevance, relevance_note

    relevance = find_relevance(pipeline.scorer)
    if strategy == "messages" or relevance is None:
        return selection

    def report() -> SelectionReport:  # the note too is made when the report is read
        plain: SelectionReport = selection.report
        return dataclasses.replace(plain, notes=(*plain.notes, relevance_note(relevance)))

    return type(selection)(selection.messages, report, tokens=selection.tokens)


KEYWORD_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        "strategy": None,
        "keep_first_turn": None,
        "recent_share": None,
        "start_on": None,
        "clear_tool_results": None,
        "on_invalid": "error",
        "summarize": None,
        "summary_tokens": 0,
        "session": None,
        "query": AUTO,
        # StableWindow's compaction at its low-water mark: raise when the latest turn does not fit.
        "_strict_latest": False,
    }
)
