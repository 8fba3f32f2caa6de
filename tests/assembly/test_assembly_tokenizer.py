"""SimpleTokenizer as CFS-021 §4 defines it, and the adapter for real token counters."""

from __future__ import annotations

import pytest

from cupel.assembly import CallableTokenizer, SimpleTokenizer, Tokenizer
from cupel.assembly.tokenizer import as_tokenizer
from cupel.errors import CupelTypeError, InvalidConfigurationError

SIMPLE = SimpleTokenizer()


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("x" * 400, 100), ("é", 1), ("日本語", 3), ("😀😀", 2)],
)
def test_simple_count_is_ceil_of_utf8_length_over_four(text: str, tokens: int) -> None:
    assert SIMPLE.count_tokens(text) == tokens


def test_simple_truncation_follows_the_spec() -> None:
    assert SIMPLE.truncate_to_tokens("short", 5) == "short"
    assert SIMPLE.truncate_to_tokens("abcdefgh", 2) == "abcdefgh"
    assert SIMPLE.truncate_to_tokens("abc defgh ijk", 2) == "abc defg..."
    # The cut is trimmed before the ellipsis is added.
    assert SIMPLE.truncate_to_tokens("abc     defgh", 1) == "abc..."
    assert SIMPLE.truncate_to_tokens("  abcdefgh", 1) == "ab..."
    # As in the spec, the ellipsis can take the result one token past the limit.
    assert SIMPLE.count_tokens(SIMPLE.truncate_to_tokens("x" * 100, 5)) == 6


def test_simple_truncation_never_splits_a_character() -> None:
    # "é" is two bytes; a four-byte cut falls inside the third one and drops it whole.
    assert SIMPLE.truncate_to_tokens("ééééé", 1) == "éé..."
    assert SIMPLE.truncate_to_tokens("日本語です", 1) == "日..."


def test_tokenizers_satisfy_the_protocol() -> None:
    assert isinstance(SIMPLE, Tokenizer)
    assert isinstance(CallableTokenizer(len), Tokenizer)


def words(text: str) -> int:
    return len(text.split())


def test_callable_tokenizer_counts_with_the_given_function() -> None:
    tokenizer = CallableTokenizer(words)
    assert tokenizer.count_tokens("one two three") == 3


def test_callable_tokenizer_truncates_within_the_limit_at_a_word_boundary() -> None:
    tokenizer = CallableTokenizer(words)
    text = "alpha beta gamma delta epsilon zeta"
    assert tokenizer.truncate_to_tokens(text, 10) == text
    cut = tokenizer.truncate_to_tokens(text, 3)
    assert cut == "alpha beta gamma..."
    assert tokenizer.count_tokens(cut) <= 3
    assert tokenizer.truncate_to_tokens(text, 0) == ""


def test_callable_tokenizer_with_character_counter() -> None:
    tokenizer = CallableTokenizer(len)
    cut = tokenizer.truncate_to_tokens("abcdefghij klmnop", 9)
    assert len(cut) <= 9 and cut.endswith("...")


def test_callable_tokenizer_rejects_bad_counts() -> None:
    with pytest.raises(CupelTypeError, match=r"token counter must return an int, got float 1\.5"):
        CallableTokenizer(lambda text: 1.5).count_tokens("x")  # type: ignore[arg-type,return-value]
    with pytest.raises(InvalidConfigurationError, match="token counter must return a count >= 0, got -1"):
        CallableTokenizer(lambda text: -1).count_tokens("x")
    with pytest.raises(CupelTypeError, match=r"CallableTokenizer\.counter must be callable"):
        CallableTokenizer(3)  # type: ignore[arg-type]


def test_as_tokenizer() -> None:
    assert as_tokenizer(None) == SimpleTokenizer()
    assert as_tokenizer(SIMPLE) is SIMPLE
    assert as_tokenizer(len) == CallableTokenizer(len)
    with pytest.raises(CupelTypeError, match="tokenizer must be a TokenCounter"):
        as_tokenizer(3)  # type: ignore[arg-type]
