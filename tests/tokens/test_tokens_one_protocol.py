"""One tokenizer protocol: every counter works in chat, assembly and the CLI; names resolve alike."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.assembly.helpers import exact_budget, result

from cupel import InvalidConfigurationError
from cupel.assembly import SimpleTokenizer, Tokenizer, pack_context
from cupel.assembly.tokenizer import as_tokenizer
from cupel.cli import main
from cupel.tokens import (
    FunctionCounter,
    HeuristicCounter,
    TokenCounter,
    TruncatingCounter,
    counter_from_name,
    resolve_counter,
)


class WordCounter:
    """A user's counter with the protocol's two methods only."""

    def count(self, text: str) -> int:
        return len(text.split())

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(text) for text in texts]


def test_one_heuristic_two_units() -> None:
    assert isinstance(SimpleTokenizer(), HeuristicCounter)
    text = "日本語です abc"
    assert HeuristicCounter().count(text) == 3  # 9 characters
    assert HeuristicCounter(unit="utf8_bytes").count(text) == SimpleTokenizer().count_tokens(text) == 5
    assert HeuristicCounter().truncate("abcdefghijkl", 2) == "abcdefgh..."
    with pytest.raises(InvalidConfigurationError, match="unit must be one of chars, utf8_bytes"):
        HeuristicCounter(unit="words")  # type: ignore[arg-type]


def test_builtin_counters_satisfy_both_protocols() -> None:
    for counter in (HeuristicCounter(), SimpleTokenizer(), FunctionCounter(len)):
        assert isinstance(counter, TokenCounter)
        assert isinstance(counter, TruncatingCounter)
        assert isinstance(counter, Tokenizer)
        assert counter.count_tokens("hello world") == counter.count("hello world")


def test_a_plain_token_counter_packs_a_context() -> None:
    words = WordCounter()
    tokenizer = as_tokenizer(words)
    assert tokenizer.count_tokens("one two three") == 3
    assert tokenizer.truncate_to_tokens("alpha beta gamma delta", 2) == "alpha beta..."
    results = [result("a.md", "a", "one two three four", 0.9), result("b.md", "b", "five six", 0.8)]
    context = pack_context(results, exact_budget(100), words)
    assert [chunk.tokens for chunk in context.chunks] == [4, 2]


def test_legacy_tokenizer_is_a_counter() -> None:
    counter = resolve_counter(SimpleTokenizer())
    assert counter.count_many(["abcd", "abcde"]) == [1, 2]


def test_counter_from_name() -> None:
    assert counter_from_name("heuristic") == HeuristicCounter()
    assert counter_from_name("bytes/4") == HeuristicCounter(unit="utf8_bytes")
    with pytest.raises(InvalidConfigurationError, match=r"unknown tokenizer 'nope'; use heuristic"):
        counter_from_name("nope")
    with pytest.raises(InvalidConfigurationError, match="no tokenizer file"):
        counter_from_name("missing/tokenizer.json")


def test_cli_assemble_accepts_the_same_tokenizer_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results.jsonl"
    line = {
        "document": {"id": "a", "path": "a.md"},
        "chunk": {"id": "a#0", "text": "日本語のテキスト " * 40, "sequence": 0, "byte_offset": 0},
        "score": 0.9,
    }
    lines = [line]
    results.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    common = [str(results), "--budget", "40", "--reserved-system", "0", "--reserved-query", "0"]
    common += ["--reserved-response", "0", "--per-doc-overhead", "0", "--summary"]
    assert main(["assemble", *common]) == 0
    spec_default = capsys.readouterr().out
    assert main(["assemble", *common, "--tokenizer", "bytes/4"]) == 0
    assert capsys.readouterr().out == spec_default
    assert main(["assemble", *common, "--tokenizer", "heuristic"]) == 0
    per_character = capsys.readouterr().out
    assert len(per_character) > len(spec_default)  # 40 tokens hold more CJK at 4 characters a token
    assert main(["assemble", *common, "--tokenizer", "nope"]) == 2
    assert "--tokenizer: unknown tokenizer 'nope'" in capsys.readouterr().err


def _word_tokenizer_file(folder: Path) -> Path:
    tokenizers = pytest.importorskip("tokenizers")
    vocabulary = {"[UNK]": 0, "user": 1, "assistant": 2}
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocabulary, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    path = folder / "tokenizer.json"
    tokenizer.save(str(path))
    return path


def test_cli_takes_a_tokenizer_json_and_model_names_in_every_subcommand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _word_tokenizer_file(tmp_path)
    transcript = tmp_path / "chat.json"
    messages = [{"role": "user", "content": f"question {i} " * 30} for i in range(6)]
    transcript.write_text(json.dumps(messages), encoding="utf-8")
    for tokenizer in (str(path), "gpt-4o", "o200k_harmony"):
        for command in ("select", "explain"):
            assert main([command, str(transcript), "--budget", "400", "--tokenizer", tokenizer]) == 0, (
                tokenizer
            )
    capsys.readouterr()
    assert main(["select", str(transcript), "--budget", "400", "--tokenizer", "claude-3"]) == 2
    assert "--tokenizer: unknown tokenizer 'claude-3'" in capsys.readouterr().err
