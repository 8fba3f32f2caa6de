"""Fuzzing saved ``WindowState`` dictionaries: random mutations of real saved states.

A state given back to :class:`~cupel.chat.StableWindow` is advice (docs/spec-notes.md, "Saved windows
are advice"). Whatever a mutated state says, reading it either fails with a one-line cupel error naming
the field, or the resumed window's every turn stays within the budget it is resumed with and is a
valid transcript per ``validate_transcript``. The normal suite runs a bounded number of examples; set
``CUPEL_FUZZ_EXAMPLES`` (e.g. 1000) for a deeper run (docs/testing.md).
"""

from __future__ import annotations

import copy
import functools
import logging
import os
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cupel import CupelError
from cupel.chat import StableWindow, message_token_counts, validate_transcript
from cupel.chat.validate import RESUME_STAGE
from cupel.policy import ToolResultClearing

#: Examples per target; CUPEL_FUZZ_EXAMPLES raises it for a deeper run.
EXAMPLES = int(os.environ.get("CUPEL_FUZZ_EXAMPLES", "40"))
BUDGET = 900
#: How many turns each resumed window runs (each from the state the turn before saved).
TURNS = 5
STRATEGIES = ("turns", "last", "messages")


def session(steps: int) -> list[dict[str, Any]]:
    """A system prompt, a user task every third step, parallel tool calls with their results between."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful agent. " * 12}]
    for step in range(steps):
        if step % 3 == 0:
            messages.append(
                {"role": "user", "content": f"Step {step}: " + "check the logs " * (1 + step % 5)}
            )
            continue
        calls = [f"call_{step}_{n}" for n in range(1 + step % 2)]
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": call, "type": "function", "function": {"name": "grep", "arguments": "{}"}}
                    for call in calls
                ],
            }
        )
        messages.extend(
            {"role": "tool", "tool_call_id": call, "content": f"{call}: " + "line " * (8 + step % 13)}
            for call in calls
        )
    return messages


MESSAGES = session(90)
#: Transcript lengths after each complete step (every tool call answered).
SIZES = [
    size
    for size in range(1, len(MESSAGES) + 1)
    if MESSAGES[size - 1]["role"] != "assistant"
    and (size == len(MESSAGES) or MESSAGES[size]["role"] != "tool")
]


def window_settings(strategy: str, summarize: bool, clearing: bool) -> dict[str, Any]:
    chosen: dict[str, Any] = {"strategy": strategy}
    if summarize:
        chosen.update(summarize=True, summary_tokens=80)
    if clearing:
        chosen["clear_tool_results"] = ToolResultClearing(keep=1, clear_at_least=50)
    return chosen


@functools.cache
def saved_states(strategy: str, summarize: bool, clearing: bool) -> tuple[dict[str, Any], ...]:
    """The state saved after every turn of one window over the session."""
    window = StableWindow(BUDGET, **window_settings(strategy, summarize, clearing))
    states = []
    for size in SIZES:
        window.select(MESSAGES[:size])
        states.append(window.to_dict())
    return tuple(states)


INTS = st.one_of(
    st.integers(-3, 3),
    st.integers(0, 2000),
    st.sampled_from([10**12, 2**63, -(2**63), 1500, 900]),
)
MESSAGE_LIKE = st.one_of(
    st.none(),
    st.sampled_from(MESSAGES),
    st.builds(lambda text: {"role": "system", "content": text}, st.text(max_size=400)),
    st.builds(
        lambda call, text: {"role": "tool", "tool_call_id": call, "content": text},
        st.sampled_from(["call_1_0", "call_none", ""]),
        st.text(max_size=50),
    ),
    st.builds(
        lambda call: {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call, "type": "function", "function": {"name": "x", "arguments": "{}"}}],
        },
        st.sampled_from(["call_1_0", "call_new"]),
    ),
    st.just({"content": "no role"}),
    st.just("not a message"),
)


@st.composite
def ranges(draw: st.DrawFn, seen: int) -> list[Any]:
    """A kept list: runs of positions (mostly among the ``seen``), some overlapping or out of order."""
    bound = max(1, seen)
    pairs = draw(st.lists(st.tuples(st.integers(0, bound - 1), st.integers(1, bound)), max_size=6))
    kept: list[Any] = [[start, min(start + length, bound)] for start, length in pairs]
    if draw(st.integers(0, 9)) == 0:
        kept.append([draw(st.integers(-1, bound + 1)), draw(st.integers(-1, bound + 2))])
    if draw(st.integers(0, 9)) == 0:
        kept.append(draw(st.sampled_from([[1], "x", [1, 2, 3], [True, 2], None])))
    return kept


#: Each tool result of the session, as a saved state names a cleared one.
RESULTS = [
    [position, message["tool_call_id"]]
    for position, message in enumerate(MESSAGES)
    if message["role"] == "tool"
]


@st.composite
def clearings(draw: st.DrawFn, seen: int) -> list[Any]:
    """A cleared list: results among the ``seen`` messages (or not), now and then out of order or broken."""
    named = draw(st.lists(st.sampled_from([pair for pair in RESULTS if pair[0] < seen] or [[0, "x"]])))
    cleared: list[Any] = sorted({tuple(pair): pair for pair in named}.values())
    if draw(st.integers(0, 4)) == 0:
        cleared.append(draw(st.sampled_from([[1, "call_none"], [seen, "call_1_0"], [0, 0], "x", [2]])))
    if draw(st.integers(0, 9)) == 0:
        cleared.reverse()
    return cleared


RESUMABLE = [
    "limit",
    "tokens",
    "base",
    "summary_at",
    "compactions",
    "kept",
    "kept-edit",
    "summary",
    "appendable",
    "cleared",
]
REFUSABLE = ["seen", "digest", "config", "version", "drop", "extra"]


@st.composite
def mutated(draw: st.DrawFn, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with one to three fields changed the way a hostile or careless caller might."""
    state = copy.deepcopy(data)
    for _ in range(draw(st.integers(1, 3))):
        # The fields the resumed window reads most often; a broken type or a missing field now and then.
        field = draw(st.sampled_from([*RESUMABLE * 3, *REFUSABLE]))
        if field in ("limit", "tokens", "base", "seen", "summary_at", "compactions", "version"):
            # Mostly well-typed: those reach the resumed window; the rest must be refused when read.
            state[field] = draw(st.one_of(INTS, INTS, INTS, st.sampled_from([None, "7", 1.5, True])))
        elif field == "kept":
            state["kept"] = draw(ranges(data["seen"]))
        elif field == "kept-edit" and isinstance(state.get("kept"), list) and state["kept"]:
            index = draw(st.integers(0, len(state["kept"]) - 1))
            pair = state["kept"][index]
            if draw(st.booleans()) or not isinstance(pair, list) or len(pair) != 2:
                del state["kept"][index]
            else:
                state["kept"][index] = [
                    pair[0] + draw(st.integers(-2, 2)),
                    pair[1] + draw(st.integers(-2, 2)),
                ]
        elif field == "cleared":
            state["cleared"] = draw(clearings(data["seen"]))
        elif field == "summary":
            state["summary"] = draw(MESSAGE_LIKE)
        elif field == "appendable":
            state["appendable"] = draw(st.sampled_from([True, False, 1, None]))
        elif field in ("digest", "config"):
            state[field] = draw(st.sampled_from(["", "0" * 32, 7]))
        elif field == "drop":
            state.pop(draw(st.sampled_from(sorted(state))), None)
        elif field == "extra":
            state["extra"] = 1
    return state


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, Any], int, dict[str, Any]]:
    strategy = draw(st.sampled_from(STRATEGIES))
    summarize, clearing = draw(st.booleans()), draw(st.booleans())
    states = saved_states(strategy, summarize, clearing)
    turn = draw(st.integers(0, len(states) - 2))
    return draw(mutated(states[turn])), turn, window_settings(strategy, summarize, clearing)


@settings(
    max_examples=max(3, EXAMPLES),
    deadline=None,
    derandomize=not os.environ.get("CUPEL_FUZZ_EXAMPLES"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(cases())
def test_a_mutated_saved_state_never_overspends_nor_breaks_the_transcript(
    case: tuple[dict[str, Any], int, dict[str, Any]],
) -> None:
    data, turn, chosen = case
    logging.getLogger("cupel").disabled = True  # the dropped states' warnings are expected here
    try:
        for number, size in enumerate(SIZES[turn + 1 : turn + 1 + TURNS]):
            try:
                window = StableWindow(BUDGET, state=data, **chosen)
            except CupelError as error:
                assert "\n" not in str(error) and "WindowState" in str(error)
                event("refused when read")
                return
            selection = window.select(MESSAGES[:size])
            if number == 0:
                dropped = any(entry.stage == RESUME_STAGE for entry in selection.report.events)
                event("dropped with a report event" if dropped else "run without a report event")
            messages = list(selection.messages)
            assert sum(message_token_counts(messages)) <= BUDGET
            assert selection.tokens <= BUDGET
            assert validate_transcript(messages) == []
            saved = window.to_dict()
            assert saved is not None
            data = saved
    finally:
        logging.getLogger("cupel").disabled = False
