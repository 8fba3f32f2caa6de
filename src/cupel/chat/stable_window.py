"""StableWindow: a chat window whose prompt prefix stays the same from turn to turn.

Providers cache prompt prefixes (Anthropic prompt caching, OpenAI automatic prefix caching, Gemini
context caching, vLLM and SGLang prefix caching). A trimmer that drops the oldest message every turn
changes the prompt right after the system messages every turn, so nothing past them is ever cached.
A window instead *appends* between compactions: the messages it sent last turn are the first messages
it sends this turn, the very same objects in the same order. When the selection would outgrow
``high_water`` of the budget, it *compacts* once: the chat strategy chooses again at ``low_water`` of
the budget, and the next turns append again.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Literal, TypeVar

from cupel.chat.options import (
    KEYWORD_DEFAULTS,
    ChatOptions,
    ChatPolicy,
    chat_settings,
    check_query,
    resolve_budget,
)
from cupel.chat.parse import SYSTEM_ROLES, link_units, parse_message, parse_plain, view_of_mapping
from cupel.chat.plan import Summarizer, clear_first
from cupel.chat.read import DICTS, _as_list, parsed_costs
from cupel.chat.render import ChatSelection
from cupel.chat.select import aselect_messages, select_messages, select_with
from cupel.chat.session import ChatSession
from cupel.chat.validate import clearing_view, extend_digest, new_digest, resume_check, with_resume_event
from cupel.chat.window_state import (
    StableSelection,
    WindowState,
    appended_report,
    pinned_tokens,
    positions_of,
    ranges_of,
    selected_positions,
    share_of,
    traced_turn,
)
from cupel.diagnostics.report import SelectionReport
from cupel.errors import (
    BudgetOverflowError,
    CupelTypeError,
    InvalidConfigurationError,
    PinnedItemsExceedBudgetError,
)
from cupel.model import ContextBudget
from cupel.pipeline import compute_effective_budget
from cupel.policy.chat_settings import ChatStrategy, ToolResultClearing
from cupel.tokens.base import CounterLike

__all__ = [
    "DEFAULT_HIGH_WATER",
    "DEFAULT_LOW_WATER",
    "StableWindow",
]


MessageT = TypeVar("MessageT", bound=Mapping[str, Any])

# The latest turn (or the pinned messages) fit the budget but not its low-water mark: a compaction
# then selects at the full budget.
_TOO_SMALL = (BudgetOverflowError, PinnedItemsExceedBudgetError)

DEFAULT_HIGH_WATER = 1.0
"""Share of the budget's target the selection may grow to before the window compacts."""
DEFAULT_LOW_WATER = 0.6
"""Share of the budget's target a compaction selects down to, leaving room to append again."""


class StableWindow:
    """One conversation's context window, kept cache-stable across turns (see the module docstring).

    Call :meth:`select` once per turn with the whole transcript so far (message dicts). ``budget``,
    ``policy``, ``counter``, ``options`` and the strategy keywords mean what they mean for
    :func:`~cupel.chat.select_messages`, which chooses at each compaction. ``high_water`` and
    ``low_water`` are shares of the budget's target tokens (defaults 1.0 and 0.6). ``summarize`` and
    ``summary_tokens`` summarise what a compaction drops, as in ``select_messages``; the summary is
    kept (and sent unchanged) until the next compaction, which gets ``query`` too. ``state`` (a
    :class:`WindowState` or its ``to_dict()``) resumes a window saved with :meth:`to_dict`; resume it
    with the same settings and counter, else it starts afresh.
    """

    def __init__(
        self,
        budget: ContextBudget | int,
        policy: ChatPolicy = None,
        counter: CounterLike | None = None,
        *,
        options: ChatOptions | None = None,
        strategy: ChatStrategy | None = None,
        keep_first_turn: bool | None = None,
        recent_share: float | None = None,
        start_on: Literal["user", "any"] | None = None,
        high_water: float = DEFAULT_HIGH_WATER,
        low_water: float = DEFAULT_LOW_WATER,
        summarize: Summarizer | bool | None = None,
        summary_tokens: int = 0,
        state: WindowState | Mapping[str, Any] | None = None,
        query: str | None = "auto",
        clear_tool_results: ToolResultClearing | bool | None = None,
    ) -> None:
        self._budget = resolve_budget(budget)
        self._pipeline, self._settings = chat_settings(
            policy,
            strategy=strategy,
            keep_first_turn=keep_first_turn,
            recent_share=recent_share,
            start_on=start_on,
            clear_tool_results=clear_tool_results,
        )
        if options is not None and not isinstance(options, ChatOptions):
            raise CupelTypeError(f"options must be a ChatOptions or None, got {options!r}")
        self._options = options or ChatOptions()
        self._counter = counter
        self._query = check_query(query)
        self._high = share_of("high_water", high_water)
        self._low = share_of("low_water", low_water)
        if self._low > self._high:
            raise InvalidConfigurationError(
                f"low_water must be <= high_water ({self._high}), got {self._low}"
            )
        # The target scaled to the low-water mark, the hard limits kept.
        self._low_budget = self._budget.replace(
            target_tokens=math.floor(self._budget.target_tokens * self._low)
        )
        if isinstance(summary_tokens, bool) or not isinstance(summary_tokens, int) or summary_tokens < 0:
            raise InvalidConfigurationError(f"summary_tokens must be an int >= 0, got {summary_tokens!r}")
        self._summarize = summarize
        self._summary_tokens = summary_tokens
        described = "|".join(
            (
                repr(self._budget.to_dict()),
                repr(self._settings.to_dict()),
                repr(self._options),
                repr(self._pipeline),
                f"{self._high}/{self._low}/{summarize is not None}/{summary_tokens!r}",
            )
        )
        # Object addresses in a custom component's repr differ between processes: leave them out.
        described = re.sub(r" at 0x[0-9a-fA-F]+", "", described)
        import hashlib  # here, not at import: it loads OpenSSL, which ``cupel select`` never needs

        self._config = hashlib.blake2b(described.encode(), digest_size=8).hexdigest()
        if state is not None and not isinstance(state, WindowState):
            state = WindowState.from_dict(state)
        self._state: WindowState | None = state
        # A state given back is advice: checked against the transcript on the first turn (see
        # validate.resume_check); why it was dropped, until that turn's report carries it.
        self._advice = state is not None
        self._mismatch: str | None = None
        # In memory only: copies of the seen messages (an in-place edit shows as inequality) and the
        # running fingerprint. A window resumed from a state checks the fingerprint instead.
        self._copies = state is None
        self._snapshot: list[Any] | None = None
        self._digest: Any = None
        # The summary message object sent since the last compaction (the same object every turn).
        self._summary: Mapping[str, Any] | None = None if state is None else state.summary
        # Token counts and report items reused from one compaction to the next (see ChatSession).
        self._session = ChatSession()
        # The messages compactions cleared tool results in (state.cleared names the results), by
        # position, sent in their place each turn; a resumed window restores them from its state.
        self._cleared: dict[int, Any] = {}

    @property
    def state(self) -> WindowState | None:
        """What the window remembers between turns (``None`` before the first turn)."""
        return self._state

    def to_dict(self) -> dict[str, Any] | None:
        """The state as plain data (``None`` before the first turn); pass it back as ``state=``."""
        return None if self._state is None else self._state.to_dict()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], budget: ContextBudget | int, **settings: Any) -> StableWindow:
        """A window resumed from :meth:`to_dict`'s output, with the settings it was made with."""
        return cls(budget, state=WindowState.from_dict(data), **settings)

    def select(self, messages: Sequence[MessageT]) -> StableSelection[MessageT]:
        """This turn's selection: the previous one with the new messages appended, or a compaction.

        Raises as :func:`~cupel.chat.select_messages` does for a broken transcript or a latest turn
        that does not fit. An edited or deleted message already seen makes the window compact afresh.
        """
        with traced_turn(self._budget, self._settings.strategy) as record:
            selection = self._select(messages)
            record(selection)
        return selection

    def _select(self, messages: Sequence[Any]) -> StableSelection[Any]:
        step = self._step(messages)
        if isinstance(step, StableSelection):
            return step
        originals, previous = step
        return self._compact(originals, previous, *self._choose(originals, previous))

    def _choose(
        self, originals: list[Any], previous: WindowState | None
    ) -> tuple[ChatSelection[Any], list[Any], tuple[tuple[int, str], ...]]:
        """A compaction's selection (at the low-water mark, else the full budget), the transcript it
        chose from (with the results cleared so far, and any it clears, at least ``clear_at_least``
        tokens' worth) and the results it newly cleared, as ``(position, call id)``."""
        # Kept in step with the state: replaced only once the compaction has chosen (it may raise).
        so_far = self._cleared if previous is not None else {}
        read = clearing_view(previous.cleared if previous is not None else ())
        view = [so_far.get(index, message) for index, message in enumerate(originals)]
        clearing = self._settings.clear_tool_results
        keywords = {**KEYWORD_DEFAULTS, **self._keywords(strict=True)}
        policy, counter, options = (keywords.pop("policy"), keywords.pop("counter"), keywords.pop("options"))
        at_least = clearing.clear_at_least if clearing is not None else 0

        def low(kept: list[Any]) -> ChatSelection[Any]:
            return select_with(kept, self._low_budget, policy, counter, options, keywords)

        def full(kept: list[Any]) -> ChatSelection[Any]:
            return select_messages(kept, self._budget, **self._keywords())

        chosen_by = partial(clear_first, clearing, read, DICTS.cleared, view, counter, options)
        try:
            chosen, sent, cleared = chosen_by(low, at_least)
        except _TOO_SMALL:
            chosen, sent, cleared = chosen_by(full, at_least)
        self._cleared = {**so_far, **{result.index: sent[result.index] for result in cleared}}
        return chosen, sent, tuple((result.index, result.call_id) for result in cleared)

    async def aselect(self, messages: Sequence[MessageT]) -> StableSelection[MessageT]:
        """:meth:`select` for async code: a compaction runs :func:`~cupel.chat.aselect_messages`, so an
        async ``summarize`` is awaited on the running loop."""
        with traced_turn(self._budget, self._settings.strategy) as record:
            selection = await self._aselect(messages)
            record(selection)
        return selection

    async def _aselect(self, messages: Sequence[Any]) -> StableSelection[Any]:
        step = self._step(messages)
        if isinstance(step, StableSelection):
            return step
        originals, previous = step
        if self._settings.clear_tool_results is not None:  # clearing selects synchronously
            return self._compact(originals, previous, *self._choose(originals, previous))
        try:
            chosen = await aselect_messages(originals, self._low_budget, **self._keywords(strict=True))
        except _TOO_SMALL:
            chosen = await aselect_messages(originals, self._budget, **self._keywords())
        return self._compact(originals, previous, chosen, originals, ())

    def _step(self, messages: Sequence[Any]) -> StableSelection[Any] | tuple[list[Any], WindowState | None]:
        """The appended selection, or what a compaction needs: the transcript and the verified state."""
        originals = _as_list(messages, "messages")
        state = self._state
        unchanged = state is not None and state.config == self._config and self._unchanged(originals, state)
        if unchanged and state is not None and self._advice:
            ceiling = math.floor(self._budget.target_tokens * self._high)
            links_only = self._settings.strategy == "messages"
            clearing = self._settings.clear_tool_results
            self._mismatch, self._cleared = resume_check(
                state, originals, self._counter, self._options, ceiling, links_only, clearing
            )
            unchanged = self._mismatch is None
        self._advice = False
        if unchanged and state is not None and state.appendable:
            options = self._options
            new = [
                parse_plain(message, index, options, render=False)
                or parse_message(view_of_mapping(message, index), index, options)
                for index, message in enumerate(originals[state.seen :], start=state.seen)
            ]
            link_units(new)
            added = sum(parsed_costs(new, self._counter))
            # "turns" and "messages" put system messages first: a new one would change the prefix.
            lifted = self._settings.strategy != "last" and any(m.role in SYSTEM_ROLES for m in new)
            if not lifted and state.tokens + added <= state.limit:
                return self._append(originals, state, added)
        return originals, state if unchanged else None

    def _unchanged(self, originals: list[Any], state: WindowState) -> bool:
        """Whether the first ``state.seen`` messages are the ones seen before, content and order."""
        seen = state.seen
        if len(originals) < seen:
            return False
        if self._snapshot is not None and len(self._snapshot) == seen:
            return originals[:seen] == self._snapshot
        digest = new_digest()
        extend_digest(digest, originals[:seen])
        if digest.hexdigest() != state.digest:
            return False
        self._digest = digest
        return True

    def _remember(self, originals: list[Any], start: int) -> str:
        """Fingerprint (and, unless resumed, copy) the messages from ``start`` on; the new digest."""
        if start == 0 or self._digest is None:
            start = 0
            self._digest = new_digest()
            self._snapshot = [] if self._copies else None
        fresh = originals[start:]
        extend_digest(self._digest, fresh)
        if self._snapshot is not None:
            self._snapshot.extend(copy.deepcopy(fresh))
        hexdigest: str = self._digest.hexdigest()
        return hexdigest

    def _append(self, originals: list[Any], state: WindowState, added: int) -> StableSelection[Any]:
        count = len(originals)
        kept = list(state.kept)
        if count > state.seen:
            if kept and kept[-1][1] == state.seen:
                kept[-1] = (kept[-1][0], count)
            else:
                kept.append((state.seen, count))
        digest = self._remember(originals, state.seen) if count > state.seen else state.digest
        new_state = WindowState(
            config=self._config,
            seen=count,
            digest=digest,
            kept=tuple(kept),
            base=state.base,
            tokens=state.tokens + added,
            limit=state.limit,
            appendable=True,
            compactions=state.compactions,
            summary=state.summary,
            summary_at=state.summary_at,
            cleared=state.cleared,
        )
        previous = sum(stop - start for start, stop in state.kept) + (state.summary is not None)
        self._state = new_state
        positions = positions_of(new_state.kept)
        return self._selection(originals, new_state, positions, prefix=previous, compacted=False, report=None)

    def _keywords(self, *, strict: bool = False) -> dict[str, Any]:
        """What a compaction passes to ``select_messages`` besides the transcript and budget;
        ``strict`` (the low-water attempt) raises when the latest turn does not fit there, so the
        compaction selects at the full budget instead."""
        settings = self._settings
        keywords = {
            "policy": self._pipeline,
            "counter": self._counter,
            "options": self._options,
            "strategy": settings.strategy,
            "keep_first_turn": settings.keep_first_turn,
            "recent_share": settings.recent_share,
            "start_on": settings.start_on,
            "summarize": self._summarize,
            "summary_tokens": self._summary_tokens,
            "session": self._session,
            "query": self._query,
        }
        if strict:
            keywords["_strict_latest"] = True
        return keywords

    def _compact(
        self,
        originals: list[Any],
        previous: WindowState | None,
        chosen: ChatSelection[Any],
        sent: list[Any],
        fresh: tuple[tuple[int, str], ...],
    ) -> StableSelection[Any]:
        positions, summary, summary_at = selected_positions(chosen.messages, sent)
        count = len(originals)
        pinned = pinned_tokens(originals, positions, self._options, self._counter, self._settings.strategy)
        ceiling = pinned + compute_effective_budget(self._budget, pinned).target_tokens
        limit = min(math.floor(self._budget.target_tokens * self._high), ceiling)
        if previous is None:
            digest = self._remember(originals, 0)
        else:
            digest = self._remember(originals, previous.seen) if count > previous.seen else previous.digest
        prefix = 0
        changed = {position for position, _ in fresh}
        if previous is not None:
            for old, new in zip(positions_of(previous.kept), positions, strict=False):
                if old != new or new in changed:  # a result cleared now changes the prompt there
                    break
                prefix += 1
            # A summary is new at every compaction: the unchanged prefix ends where one sits.
            for made, slot in ((summary, summary_at), (previous.summary, previous.summary_at)):
                if made is not None:
                    prefix = min(prefix, slot)
        state = WindowState(
            config=self._config,
            seen=count,
            digest=digest,
            kept=ranges_of(positions),
            base=len(chosen.messages),
            tokens=chosen.tokens,
            limit=limit,
            appendable=count == 0 or (bool(positions) and positions[-1] == count - 1),
            compactions=(self._state.compactions + 1) if self._state is not None else 0,
            summary=summary,
            summary_at=summary_at,
            cleared=tuple(sorted((*previous.cleared, *fresh) if previous is not None else fresh)),
        )
        self._summary = summary
        self._state = state
        mismatch, self._mismatch = self._mismatch, None

        def report() -> SelectionReport:
            return with_resume_event(chosen.report, mismatch)

        return self._selection(originals, state, positions, prefix=prefix, compacted=True, report=report)

    def _selection(
        self,
        originals: list[Any],
        state: WindowState,
        positions: list[int],
        *,
        prefix: int,
        compacted: bool,
        report: Callable[[], SelectionReport] | None,
    ) -> StableSelection[Any]:
        kept = [self._cleared.get(position, originals[position]) for position in positions]
        system = 0
        while system < len(kept) and kept[system].get("role") in SYSTEM_ROLES:
            system += 1
        if state.summary is not None:
            system = state.summary_at
            kept.insert(system, self._summary)
        if report is None:
            report = appended_report(
                originals,
                set(positions),
                self._counter,
                self._options,
                self._pipeline.scorer,
                self._low_budget,
            )
        return StableSelection(
            tuple(kept),
            report,
            tokens=state.tokens,
            prefix=prefix,
            base=state.base,
            system=system,
            compacted=compacted,
        )
