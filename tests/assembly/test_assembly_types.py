"""Construction-time validation of the assembly types, budget and config."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime

import pytest

from cupel.assembly import (
    AssembledContext,
    AssemblyConfig,
    Chunk,
    ContextChunk,
    ContextMetadata,
    Document,
    PackingStrategy,
    RetrievalResult,
    TokenBudget,
)
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError

DOC = Document("d1", "docs/a.md")
CHUNK = Chunk("c1", "text", 0)


def test_types_are_frozen_and_slotted() -> None:
    for value in (DOC, CHUNK, RetrievalResult(CHUNK, DOC, 0.5), TokenBudget(1000), AssemblyConfig()):
        assert not hasattr(value, "__dict__")
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, dataclasses.fields(value)[0].name, "x")


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: Document("", "a.md"), InvalidConfigurationError, "Document.id must be a non-empty string"),
        (lambda: Document("d", 3), CupelTypeError, "Document.path must be a str, got int 3"),
        (
            lambda: Document("d", "a\nb.md"),
            InvalidConfigurationError,
            "Document.path must not contain a line",
        ),
        (lambda: Document("d", "a.md", datetime(2024, 1, 1)), InvalidConfigurationError, "timezone-aware"),
        (lambda: Chunk("c", "", 0), InvalidConfigurationError, "Chunk.text must be a non-empty string"),
        (lambda: Chunk("c", "t", -1), InvalidConfigurationError, "Chunk.sequence must be >= 0, got -1"),
        (lambda: Chunk("c", "t", 0, True), CupelTypeError, "Chunk.byte_offset must be an int, got bool"),
        (lambda: Chunk("c", "t", 1.0), CupelTypeError, "Chunk.sequence must be an int, got float 1.0"),
        (
            lambda: RetrievalResult(CHUNK, DOC, float("nan")),
            InvalidConfigurationError,
            "score must be a finite",
        ),
        (lambda: RetrievalResult(CHUNK, DOC, "0.5"), CupelTypeError, "RetrievalResult.score must be a float"),
        (lambda: RetrievalResult(DOC, DOC, 0.5), CupelTypeError, "RetrievalResult.chunk must be a Chunk"),
        (
            lambda: RetrievalResult(CHUNK, DOC, 0.5, lexical_score=float("inf")),
            InvalidConfigurationError,
            "RetrievalResult.lexical_score must be a finite number, got inf",
        ),
        (
            lambda: ContextChunk("c", "a.md", "t", 0.5, 0, tokens=-2),
            InvalidConfigurationError,
            "tokens must be",
        ),
        (lambda: AssembledContext(["x"], 0, False), CupelTypeError, "AssembledContext.chunks[0] must be a"),
        (lambda: AssembledContext((), 0, 1), CupelTypeError, "AssembledContext.truncated must be a bool"),
        (
            lambda: ContextMetadata("h", datetime(2024, 1, 1)),
            InvalidConfigurationError,
            "ContextMetadata.timestamp must be timezone-aware",
        ),
    ],
)
def test_invalid_values_are_rejected_with_the_field_named(
    build: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)) as caught:
        build()  # type: ignore[operator]
    assert isinstance(caught.value, CupelError)


def test_scores_are_python_floats() -> None:
    result = RetrievalResult(CHUNK, DOC, 1, semantic_score=0)
    assert type(result.score) is float and result.score == 1.0
    assert type(result.semantic_score) is float
    assert result.lexical_score is None
    # -0.0 and 0.0 are the same score and print the same.
    assert str(RetrievalResult(CHUNK, DOC, -0.0).score) == "0.0"


def test_assembled_context_copies_chunks_into_a_tuple() -> None:
    chunks = [ContextChunk("c", "a.md", "t", 0.5, 0)]
    context = AssembledContext(chunks, 1, False)  # type: ignore[arg-type]
    chunks.clear()
    assert len(context.chunks) == 1 and context.chunk_ids == ("c",)


def test_token_budget_defaults_follow_the_spec() -> None:
    budget = TokenBudget(2000)
    assert (budget.reserved_system, budget.reserved_query, budget.reserved_response) == (200, 100, 500)
    assert budget.per_doc_overhead == 10
    assert budget.available == 1200


def test_token_budget_smaller_than_reserves_is_a_clear_error() -> None:
    with pytest.raises(InvalidConfigurationError) as caught:
        TokenBudget(500)
    assert str(caught.value) == (
        "TokenBudget.total_tokens must be at least the reserved tokens (800 = reserved_system 200 + "
        "reserved_query 100 + reserved_response 500), got 500"
    )
    assert TokenBudget(800).available == 0


@pytest.mark.parametrize("field", ["total_tokens", "reserved_system", "per_doc_overhead"])
def test_token_budget_rejects_negative_and_non_int(field: str) -> None:
    base = {"total_tokens": 5000}
    with pytest.raises(InvalidConfigurationError, match=rf"TokenBudget\.{field} must be >= 0, got -1"):
        TokenBudget(**{**base, field: -1})
    with pytest.raises(CupelTypeError, match=rf"TokenBudget\.{field} must be an int"):
        TokenBudget(**{**base, field: 10.0})


def test_token_budget_available_is_not_an_argument() -> None:
    with pytest.raises(TypeError):
        TokenBudget(1000, available=5)  # type: ignore[call-arg]


def test_token_budget_bytes_are_canonical() -> None:
    assert TokenBudget(2000).to_bytes() == b"TokenBudget/1:2000,200,100,500,10"
    assert TokenBudget(2000).to_bytes() != TokenBudget(2000, per_doc_overhead=11).to_bytes()


def test_assembly_config_defaults_and_validation() -> None:
    config = AssemblyConfig()
    assert config.packing_strategy is PackingStrategy.GREEDY
    assert config.dedup_threshold == 0.8
    assert config.max_chunks_per_doc is None
    assert not config.prefer_recent and not config.include_metadata
    assert AssemblyConfig("score_weighted").packing_strategy is PackingStrategy.SCORE_WEIGHTED  # type: ignore[arg-type]
    with pytest.raises(
        InvalidConfigurationError, match="packing_strategy must be one of greedy, interleaved"
    ):
        AssemblyConfig("best")  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigurationError, match=r"AssemblyConfig\.dedup_threshold must be between"):
        AssemblyConfig(dedup_threshold=1.5)
    with pytest.raises(InvalidConfigurationError, match=r"AssemblyConfig\.max_chunks_per_doc must be >= 1"):
        AssemblyConfig(max_chunks_per_doc=0)
    with pytest.raises(CupelTypeError, match=r"AssemblyConfig\.prefer_recent must be a bool"):
        AssemblyConfig(prefer_recent=1)  # type: ignore[arg-type]


def test_metadata_accepts_aware_timestamps() -> None:
    stamp = datetime(2024, 1, 1, tzinfo=UTC)
    assert ContextMetadata("blake3:00", stamp).state_root is None
