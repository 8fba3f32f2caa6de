"""HuggingFaceCounter over small tokenizers built in the test (needs the tokenizers extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cupel import CupelTypeError, InvalidConfigurationError
from cupel.tokens import HuggingFaceCounter, TokenCounter

tokenizers = pytest.importorskip(
    "tokenizers", reason="optional extra not installed: pip install 'pycupel[tokenizers]'"
)


def word_level() -> Any:
    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "hello": 3, "world": 4, "!": 5}
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tokenizer.post_processor = tokenizers.processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
    )
    return tokenizer


def test_word_level_counts() -> None:
    counter = HuggingFaceCounter(word_level())
    assert isinstance(counter, TokenCounter)
    assert counter.count("hello world") == 2
    assert counter.count("hello world!") == 3
    assert counter.count("unknown words here") == 3
    assert counter.count("") == 0
    assert counter.count_many(["hello", "hello world !", ""]) == [1, 3, 0]
    assert counter.count_many([]) == []


def test_special_tokens_are_opt_in() -> None:
    counter = HuggingFaceCounter(word_level(), add_special_tokens=True)
    assert counter.count("hello world") == 4
    assert counter.count_many(["hello world", "hello"]) == [4, 3]


def test_loads_a_tokenizer_json_path(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    word_level().save(str(path))
    counter = HuggingFaceCounter(path)
    assert counter.source == str(path)
    assert counter.count("hello world !") == 3
    assert HuggingFaceCounter(str(path)).count("world") == 1


def test_trained_bpe_batch_matches_single() -> None:
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=60, special_tokens=["[UNK]"], show_progress=False)
    corpus = ["low lower lowest", "new newer newest", "wide wider widest"] * 20
    tokenizer.train_from_iterator(corpus, trainer=trainer)
    counter = HuggingFaceCounter(tokenizer)
    texts = ["lowest newest", "widest", "low", "zzz"]
    counts = counter.count_many(texts)
    assert counts == [counter.count(text) for text in texts]
    assert counts == [len(tokenizer.encode(text).ids) for text in texts]
    assert counter.count("low") == 1


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(InvalidConfigurationError, match="never downloads"):
        HuggingFaceCounter("bert-base-uncased")
    broken = tmp_path / "tokenizer.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidConfigurationError, match=r"not a readable tokenizer\.json"):
        HuggingFaceCounter(broken)
    with pytest.raises(CupelTypeError, match="tokenizer"):
        HuggingFaceCounter(42)
    with pytest.raises(CupelTypeError, match="add_special_tokens"):
        HuggingFaceCounter(word_level(), add_special_tokens="yes")  # type: ignore[arg-type]
