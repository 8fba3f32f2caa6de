"""The async API: Pipeline.arun/adry_run and aselect_messages, with async counters and async sources."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from cupel import (
    ChronologicalPlacer,
    ContextBudget,
    ContextItem,
    CupelError,
    CupelTypeError,
    DiagnosticTraceCollector,
    GreedySlice,
    InvalidConfigurationError,
    Pipeline,
    ReflexiveScorer,
    _async,
)
from cupel.chat import aselect_messages, select_messages
from cupel.tokens.asynchronous import is_async_counter


def pipeline() -> Pipeline:
    return Pipeline(ReflexiveScorer(), GreedySlice(), ChronologicalPlacer())


ITEMS = [ContextItem(f"item {index}", 10 + index, future_relevance_hint=index / 20) for index in range(20)]
BUDGET = ContextBudget(100, 80)
TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    *(
        {"role": "user" if index % 2 == 0 else "assistant", "content": f"turn {index} " + "word " * index}
        for index in range(12)
    ),
]


async def stream(values: Sequence[Any]) -> AsyncIterator[Any]:
    for value in values:
        await asyncio.sleep(0)
        yield value


def words(text: str) -> int:
    return len(text.split())


async def async_words(text: str) -> int:
    await asyncio.sleep(0)
    return len(text.split())


class BatchCounter:
    """An async counter with acount_many, recording every batch it is asked for."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def acount_many(self, texts: Sequence[str]) -> list[int]:
        self.batches.append(list(texts))
        return [len(text.split()) for text in texts]


def test_arun_and_adry_run_match_the_synchronous_calls() -> None:
    assert asyncio.run(pipeline().arun(ITEMS, BUDGET)) == pipeline().run(ITEMS, BUDGET)
    report = asyncio.run(pipeline().adry_run(ITEMS, BUDGET))
    assert report.items == pipeline().dry_run(ITEMS, BUDGET).items
    assert len(report.excluded) == len(ITEMS) - len(report.items)


def test_arun_drains_an_async_source_and_selects_the_same_items() -> None:
    assert asyncio.run(pipeline().arun(stream(ITEMS), BUDGET)) == pipeline().run(ITEMS, BUDGET)
    report = asyncio.run(pipeline().adry_run(stream(ITEMS), BUDGET))
    assert report.items == pipeline().run(ITEMS, BUDGET)


def test_arun_with_a_collector_traces_the_run() -> None:
    collector = DiagnosticTraceCollector()
    selected = asyncio.run(pipeline().arun(ITEMS, BUDGET, collector))
    assert collector.build_report().items == selected


def test_small_inputs_run_on_the_loop_thread_and_large_ones_in_a_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads: list[str] = []

    class Recording(ReflexiveScorer):
        def score_all(self, items: Sequence[ContextItem]) -> list[float]:
            threads.append(threading.current_thread().name)
            return super().score_all(items)

    recording = Pipeline(Recording(), GreedySlice(), ChronologicalPlacer())
    asyncio.run(recording.arun(ITEMS, BUDGET))
    monkeypatch.setattr(_async, "THREAD_THRESHOLD", len(ITEMS))
    asyncio.run(recording.arun(ITEMS, BUDGET))
    assert threads[0] == "MainThread"
    assert threads[1] != "MainThread"


def test_arun_rejects_a_non_iterable_and_a_string() -> None:
    with pytest.raises(CupelTypeError, match="items must be a sequence, an iterable or an async iterable"):
        asyncio.run(pipeline().arun(42, BUDGET))  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match="got str"):
        asyncio.run(pipeline().arun("abc", BUDGET))  # type: ignore[arg-type]


@pytest.mark.parametrize("counter", [async_words, BatchCounter()], ids=["async-function", "acount_many"])
def test_aselect_messages_awaits_an_async_counter(counter: Any) -> None:
    assert is_async_counter(counter)
    expected = select_messages(TRANSCRIPT, 60, counter=words)
    selection = asyncio.run(aselect_messages(TRANSCRIPT, 60, counter=counter))
    assert selection.messages == expected.messages
    assert selection.tokens == expected.tokens
    assert selection.messages[0] is TRANSCRIPT[0]


def test_aselect_messages_counts_each_distinct_text_once_in_one_batch() -> None:
    counter = BatchCounter()
    asyncio.run(aselect_messages([*TRANSCRIPT, dict(TRANSCRIPT[1])], 60, counter=counter))
    [batch] = counter.batches
    assert len(batch) == len(set(batch))
    assert "turn 0 " in batch


def test_aselect_messages_reads_an_async_message_stream() -> None:
    selection = asyncio.run(aselect_messages(stream(TRANSCRIPT), 60, counter=async_words))
    assert selection.messages == select_messages(TRANSCRIPT, 60, counter=words).messages


def test_aselect_messages_takes_a_synchronous_counter_unchanged() -> None:
    selection = asyncio.run(aselect_messages(TRANSCRIPT, 60, counter=words))
    assert selection.messages == select_messages(TRANSCRIPT, 60, counter=words).messages


def test_a_bad_async_count_names_the_counter_and_the_text() -> None:
    async def negative(text: str) -> int:
        return -1

    async def floating(text: str) -> Any:
        return 1.5

    with pytest.raises(InvalidConfigurationError, match="negative returned -1 for text #0"):
        asyncio.run(aselect_messages(TRANSCRIPT, 60, counter=negative))
    with pytest.raises(CupelTypeError, match=r"floating returned 1\.5"):
        asyncio.run(aselect_messages(TRANSCRIPT, 60, counter=floating))

    class Short:
        async def acount_many(self, texts: Sequence[str]) -> list[int]:
            return [1]

    with pytest.raises(CupelError, match="acount_many returned 1 counts"):
        asyncio.run(aselect_messages(TRANSCRIPT, 60, counter=Short()))


def test_synchronous_counters_are_not_async() -> None:
    assert not is_async_counter(words)
    assert not is_async_counter(None)
    assert not is_async_counter(len)
