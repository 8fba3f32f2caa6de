"""The ``cupel.chat`` root span: one per select_messages/aselect_messages call, whatever the strategy.

Every attribute is checked against the truth computed here from the returned messages alone.
"""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the tracing tests need opentelemetry-sdk")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from cupel import ContextBudget
from cupel.chat import StableWindow, aselect_messages, message_token_counts, select_messages
from cupel.errors import CupelError
from cupel.otel import CupelVerbosity, tracing


def _call(call_id: str, result: str | None) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
            ],
        }
    ]
    if result is not None:
        messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    return messages


TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a careful release assistant."},
    {"role": "user", "content": "What broke in the nightly build? " * 6},
    *_call("call_1", "The sidecar image tag was wrong. " * 8),
    {"role": "assistant", "content": "The sidecar tag was wrong; I can fix it. " * 4},
    {"role": "user", "content": "Please open a pull request for it. " * 3},
    *_call("call_2", "PR #4833 opened."),
    {"role": "assistant", "content": "Opened PR #4833. " * 3},
    {"role": "user", "content": "Did the checks pass?"},
]

# Crashed runs: a call that never got its result, and a result whose call is gone.
BROKEN: list[dict[str, Any]] = [
    *TRANSCRIPT[:2],
    *_call("call_9", None),
    {"role": "tool", "tool_call_id": "call_lost", "content": "orphaned output"},
    *TRANSCRIPT[2:],
]

STRATEGIES = ["turns", "last", "messages"]
VARIANTS: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = {
    "plain": (TRANSCRIPT, {}),
    "summary": (TRANSCRIPT, {"summarize": True, "summary_tokens": 40}),
    "repair": (BROKEN, {"on_invalid": "repair"}),
}


def _content_id(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _kept_positions(transcript: Sequence[Any], returned: Sequence[Any]) -> list[int]:
    return [index for index, message in enumerate(transcript) if any(message is kept for kept in returned)]


def _traced(
    run: Callable[[], Any], verbosity: CupelVerbosity = CupelVerbosity.STAGE_AND_EXCLUSIONS
) -> tuple[Any, list[ReadableSpan]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with tracing(verbosity, provider):
        result = run()
    return result, list(exporter.get_finished_spans())


def _check_root(
    spans: list[ReadableSpan],
    transcript: list[dict[str, Any]],
    selection: Any,
    budget: ContextBudget,
    strategy: str,
) -> ReadableSpan:
    [root] = [span for span in spans if span.name == "cupel.chat"]
    assert root.parent is None
    for span in spans:
        if span.name == "cupel.pipeline":  # an internal run is a child, never a root
            assert span.parent is not None and span.parent.span_id == root.context.span_id
    attributes = dict(root.attributes or {})
    kept = _kept_positions(transcript, selection.messages)
    summaries = [message for message in selection.messages if not any(message is m for m in transcript)]
    assert attributes["cupel.chat.strategy"] == strategy
    assert attributes["cupel.policy.name"] == "chat"
    assert attributes["cupel.budget.max_tokens"] == budget.max_tokens
    assert attributes["cupel.budget.target_tokens"] == budget.target_tokens
    assert attributes["cupel.result.tokens"] == sum(message_token_counts(list(selection.messages)))
    assert attributes["cupel.result.included_count"] == len(kept) + len(summaries)
    assert attributes["cupel.result.excluded_count"] == len(transcript) - len(kept)
    assert attributes["cupel.chat.message_count"] == len(transcript)
    assert attributes["cupel.chat.select"] is bool(summaries)
    assert attributes["cupel.verbosity"] == "StageAndExclusions"
    # One event per dropped unit, identified by its content's hash; together they cover every drop.
    excluded = selection.report.excluded
    events = [dict(event.attributes or {}) for event in root.events]
    assert [event.name for event in root.events] == ["cupel.exclusion"] * len(excluded)
    assert sorted(str(e["cupel.exclusion.item_id"]) for e in events) == sorted(
        _content_id(entry.item.content) for entry in excluded
    )
    assert sorted(str(e["cupel.exclusion.reason"]) for e in events) == sorted(
        type(entry.reason).__name__ for entry in excluded
    )
    assert sum(int(str(e["cupel.chat.message_count"])) for e in events) == len(transcript) - len(kept)
    return root


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(
    "budget", [ContextBudget(150, 150), ContextBudget(400, 260), ContextBudget(2000, 2000)]
)
def test_one_root_span_per_call_tells_the_truth(strategy: str, variant: str, budget: ContextBudget) -> None:
    transcript, keywords = VARIANTS[variant]
    selection, spans = _traced(lambda: select_messages(transcript, budget, strategy=strategy, **keywords))
    assert selection.messages == select_messages(transcript, budget, strategy=strategy, **keywords).messages
    attributes = dict(_check_root(spans, transcript, selection, budget, strategy).attributes or {})
    if variant == "repair":  # the two broken messages are always dropped
        assert int(str(attributes["cupel.result.excluded_count"])) >= 2
    if variant == "summary":  # a summary exactly when something was dropped
        assert attributes["cupel.chat.select"] is (attributes["cupel.result.excluded_count"] != 0)
    if strategy == "last":
        assert [span.name for span in spans] == ["cupel.chat"]  # no pipeline runs under "last"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_async_calls_get_the_same_root_span(strategy: str) -> None:
    budget = ContextBudget(150, 150)

    async def summarize(dropped: Sequence[Any]) -> str:
        await asyncio.sleep(0)
        return f"{len(dropped)} earlier messages"

    async def source() -> Any:
        for message in TRANSCRIPT:
            yield message

    def run() -> Any:
        return asyncio.run(
            aselect_messages(source(), budget, strategy=strategy, summarize=summarize, summary_tokens=30)
        )

    selection, spans = _traced(run)
    _check_root(spans, TRANSCRIPT, selection, budget, strategy)
    assert dict(next(s for s in spans if s.name == "cupel.chat").attributes or {})["cupel.chat.select"]


def test_turns_root_shows_the_callers_budget_and_its_ranking_run_the_leftover() -> None:
    budget = ContextBudget(400, 260)
    selection, spans = _traced(
        lambda: select_messages(TRANSCRIPT, budget, strategy="turns", recent_share=0.1)
    )
    root = _check_root(spans, TRANSCRIPT, selection, budget, "turns")
    runs = [span for span in spans if span.name == "cupel.pipeline"]
    assert runs, "recent_share=0.1 leaves older turns to the policy's scorers"
    for run in runs:
        assert int(str((run.attributes or {})["cupel.budget.target_tokens"])) < budget.target_tokens
    assert dict(root.attributes or {})["cupel.result.tokens"] == selection.tokens


def test_stage_only_has_no_events_and_a_failed_selection_is_an_error_span() -> None:
    selection, spans = _traced(lambda: select_messages(TRANSCRIPT, 150), CupelVerbosity.STAGE_ONLY)
    [root] = [span for span in spans if span.name == "cupel.chat"]
    assert root.events == ()
    assert (root.attributes or {})["cupel.result.excluded_count"] == len(TRANSCRIPT) - len(selection.messages)

    def too_small() -> None:
        with pytest.raises(CupelError):
            select_messages(TRANSCRIPT, 5)

    _, spans = _traced(too_small)
    [root] = [span for span in spans if span.name == "cupel.chat"]
    assert root.status.status_code is StatusCode.ERROR
    assert "cupel.result.tokens" not in (root.attributes or {})
    assert (root.attributes or {})["cupel.budget.max_tokens"] == 5


def test_a_stable_window_compaction_nests_its_selection_under_the_turn() -> None:
    window = StableWindow(220, high_water=0.9, low_water=0.5)
    ends = [2, 4, 5, 6, 8, 9, 10]  # each prefix a complete transcript (every call answered)
    _, spans = _traced(lambda: [window.select(TRANSCRIPT[:end]) for end in ends])
    turns = {span.context.span_id: span for span in spans if span.name == "cupel.stable_window"}
    chats = [span for span in spans if span.name == "cupel.chat"]
    assert len(turns) == len(ends)
    assert chats, "the window compacts at least once"
    for chat in chats:
        assert chat.parent is not None and chat.parent.span_id in turns
        parent = turns[chat.parent.span_id]
        assert (parent.attributes or {})["cupel.stable_window.compacted"] is True


def test_untraced_selection_does_not_load_opentelemetry() -> None:
    # The span code lives beside the summary planning (cupel.chat.plan), loaded with every selection.

    code = (
        "import sys\n"
        "from cupel.chat import select_messages\n"
        "for strategy in ('turns', 'last', 'messages'):\n"
        "    select_messages([{'role': 'user', 'content': 'hi'}], 50, strategy=strategy)\n"
        "watched = ('opentelemetry',)\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(watched))\n"
        "print(loaded)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_langchain_selection_and_trimmer_get_the_root_span(strategy: str) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.messages import convert_to_messages

    from cupel.chat.langchain import aselect_messages as lc_aselect
    from cupel.chat.langchain import message_token_counts as lc_counts
    from cupel.chat.langchain import select_messages as lc_select
    from cupel.integrations.langchain import message_trimmer

    messages = convert_to_messages(TRANSCRIPT)
    budget = ContextBudget(150, 150)
    calls: dict[str, Callable[[], Any]] = {
        "select": lambda: lc_select(messages, budget, strategy=strategy).messages,
        "aselect": lambda: asyncio.run(lc_aselect(messages, budget, strategy=strategy)).messages,
        "invoke": lambda: message_trimmer(budget, strategy=strategy).invoke(messages),
        "ainvoke": lambda: asyncio.run(message_trimmer(budget, strategy=strategy).ainvoke(messages)),
    }
    for name, call in calls.items():
        kept, spans = _traced(call)
        [root] = [span for span in spans if span.name == "cupel.chat"]
        attributes = dict(root.attributes or {})
        assert attributes["cupel.chat.strategy"] == strategy, name
        assert attributes["cupel.budget.max_tokens"] == 150, name
        assert attributes["cupel.result.tokens"] == sum(lc_counts(list(kept))), name
        assert attributes["cupel.result.included_count"] == len(kept), name
        expected = len(messages) - len(_kept_positions(messages, kept))
        assert attributes["cupel.result.excluded_count"] == expected, name
        for span in spans:
            if span.name == "cupel.pipeline":
                assert span.parent is not None and span.parent.span_id == root.context.span_id


# Under "turns" the older turns compete for what the latest turn and the recent run (the chat preset's
# recent_share, 0.1) leave: 128 tokens, then 88 once the summary's 40 are reserved.
@pytest.mark.parametrize(("strategy", "runs"), [("turns", [128, 88]), ("last", []), ("messages", [150, 110])])
def test_children_are_the_selection_runs_only_and_reading_the_report_adds_none(
    strategy: str, runs: list[int]
) -> None:
    """A summary re-selects with its reserve (40 tokens) taken off; explaining re-runs nothing traced."""
    budget = ContextBudget(150, 150)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with tracing(CupelVerbosity.STAGE_ONLY, provider):
        selection = select_messages(
            TRANSCRIPT,
            budget,
            strategy=strategy,
            summarize=True,
            summary_tokens=40,  # type: ignore[arg-type]
        )
        before = len(exporter.get_finished_spans())
        assert selection.report.excluded
        assert len(exporter.get_finished_spans()) == before
    children = [span for span in exporter.get_finished_spans() if span.name == "cupel.pipeline"]
    assert [(span.attributes or {})["cupel.budget.target_tokens"] for span in children] == runs
