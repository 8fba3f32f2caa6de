"""Regression tests for defects found by an independent check of cupel.assembly against CFS-021."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cupel.assembly import (
    AssemblyConfig,
    CallableTokenizer,
    Chunk,
    Document,
    PackingStrategy,
    RetrievalResult,
    SimpleTokenizer,
    StaticRetriever,
    TokenBudget,
    assemble_context,
    format_context,
    pack_context,
    parse_results,
)
from cupel.errors import CupelError, InvalidConfigurationError
from tests.profiles import examples

from .helpers import cupel_assemble, exact_budget, result, sized

ROOT = Path(__file__).resolve().parents[2]


def test_a_cut_whose_kept_part_is_whitespace_is_never_packed_as_a_bare_ellipsis() -> None:
    # The first chunk fills the room but 2 tokens; the next chunk of the same document starts with spaces, so
    # SimpleTokenizer's 8-byte cut keeps only whitespace and would come back as "...".
    first = result("d", "d#0", sized(8), 0.9, sequence=0)
    spaces = result("d", "d#1", " " * 12 + "tail words that do not fit", 0.8, sequence=1)
    context = pack_context([first, spaces], exact_budget(10))
    assert [chunk.text for chunk in context.chunks] == [sized(8)]
    assert not context.truncated
    # When nothing fits whole, a whitespace-led first chunk is not cut to "..." either.
    alone = pack_context([spaces], exact_budget(2))
    assert alone.chunks == ()


@settings(max_examples=examples(200), deadline=None)
@given(
    texts=st.lists(st.text(alphabet=" \n\tab.", min_size=1, max_size=40), min_size=1, max_size=5),
    available=st.integers(0, 20),
    strategy=st.sampled_from(list(PackingStrategy)),
)
def test_no_packed_fragment_is_empty_after_removing_the_ellipsis(
    texts: list[str], available: int, strategy: PackingStrategy
) -> None:
    results = [result("d", f"d#{n}", text, 1.0 - n / 10, sequence=n) for n, text in enumerate(texts)]
    for tokenizer in (SimpleTokenizer(), CallableTokenizer(lambda text: len(text.split()) + 1)):
        for chunk in pack_context(results, exact_budget(available), tokenizer, strategy).chunks:
            if chunk.truncated:
                assert chunk.text.removesuffix("...").strip()


def test_a_score_too_large_for_a_float_is_a_validation_error() -> None:
    with pytest.raises(InvalidConfigurationError, match=r"RetrievalResult\.score must be a finite number"):
        RetrievalResult(Chunk("c", "text", 0), Document("d", "d.md"), 10**400)
    with pytest.raises(InvalidConfigurationError, match="semantic_score must be a finite number"):
        RetrievalResult(Chunk("c", "text", 0), Document("d", "d.md"), 1.0, semantic_score=-(10**400))


@pytest.mark.parametrize(
    ("owner", "build"),
    [
        ("Chunk.text", lambda: Chunk("c", "bad \ud800 text", 0)),
        ("Document.path", lambda: Document("d", "docs/\udcff.md")),
        ("Chunk.id", lambda: Chunk("c\udc80", "text", 0)),
    ],
)
def test_lone_surrogates_are_rejected_at_construction(owner: str, build: object) -> None:
    with pytest.raises(InvalidConfigurationError, match=f"{owner} must be valid Unicode text, got a lone"):
        build()  # type: ignore[operator]


def test_a_query_with_lone_surrogates_is_rejected() -> None:
    with pytest.raises(InvalidConfigurationError, match=r"assemble_context\.query must be valid Unicode"):
        assemble_context("bad \udcff", StaticRetriever([]), TokenBudget(1000))


def line(**changes: object) -> str:
    record = {
        "document": {"id": "d", "path": "docs/d.md"},
        "chunk": {"id": "d#0", "text": "Rotate keys.", "sequence": 0},
        "score": 0.5,
    }
    for dotted, value in changes.items():
        node = record
        *parents, last = dotted.split("__")
        for parent in parents:
            node = node[parent]  # type: ignore[assignment]
        node[last] = value
    return json.dumps(record)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (line().replace('"score": 0.5', '"score": 1' + "0" * 400), "field 'score' must be a finite number"),
        (line().replace('"score": 0.5', '"score": 1' + "0" * 5000), "invalid JSON: Exceeds the limit"),
        (
            line(chunk__text="bad \ud800 text"),
            "chunk.text: lone surrogate \\ud800 is not Unicode text",
        ),
        (line(document__path="docs/\udcff.md"), "document.path: lone surrogate \\udcff is not Unicode text"),
    ],
)
def test_the_jsonl_reader_reports_bad_values_on_one_line(text: str, message: str) -> None:
    with pytest.raises(CupelError) as caught:
        parse_results(text, source="r.jsonl")
    assert str(caught.value).startswith("r.jsonl:1")
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (line().replace('"score": 0.5', '"score": 1' + "0" * 400), "field 'score' must be a finite number"),
        (line(chunk__text="bad \ud800 text"), "chunk.text: lone surrogate \\ud800 is not Unicode text"),
        (line(document__path="docs/\udcff.md"), "document.path: lone surrogate \\udcff is not Unicode text"),
    ],
)
def test_cupel_assemble_exits_2_with_one_line_on_bad_values(text: str, message: str) -> None:
    done = cupel_assemble("-", "--budget", "2000", stdin=text.encode())
    assert done.returncode == 2, done.stderr
    stderr = done.stderr.decode()
    assert stderr.startswith("cupel assemble: <stdin>:1: ") and message in stderr
    assert stderr.count("\n") == 1 and b"Traceback" not in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX argv bytes")
def test_cupel_assemble_rejects_a_query_that_is_not_utf8() -> None:
    done = cupel_assemble("-", "--budget", "2000", b"--query", b"caf\xe9", stdin=line().encode())
    assert done.returncode == 2
    assert done.stderr.decode() == (
        "cupel assemble: --query is not valid UTF-8 (an undecodable byte at character 3)\n"
    )


LONG_PATH = "docs/" + "very-long-directory-name/" * 12 + "page.md"


def long_path_results() -> list[RetrievalResult]:
    return [
        RetrievalResult(
            Chunk(f"c{n}", " ".join(f"w{n}x{i}" for i in range(6)), n),
            Document(f"d{n}", f"{LONG_PATH}{n}"),
            1.0 - n / 100,
        )
        for n in range(20)
    ]


def test_fixed_marker_tokens_can_print_more_than_the_budget() -> None:
    # The spec's default charges 10 tokens per marker however long its path; the printed text exceeds it.
    budget = TokenBudget(1300)
    context = assemble_context("q", StaticRetriever(long_path_results()), budget)
    printed = SimpleTokenizer().count_tokens(format_context(context))
    assert context.total_tokens <= budget.available < printed


@pytest.mark.parametrize("strategy", list(PackingStrategy))
@pytest.mark.parametrize("include_metadata", [False, True])
def test_exact_marker_tokens_keep_the_printed_context_within_the_budget(
    strategy: PackingStrategy, include_metadata: bool
) -> None:
    config = AssemblyConfig(
        packing_strategy=strategy, include_metadata=include_metadata, marker_tokens="exact"
    )
    for total in range(801, 1400, 37):
        budget = TokenBudget(total)
        context = assemble_context("q", StaticRetriever(long_path_results()), budget, config=config)
        text = format_context(context, include_metadata=include_metadata)
        assert context.total_tokens == SimpleTokenizer().count_tokens(text) <= budget.available
        assert len(context.chunks) >= (1 if budget.available >= 100 else 0)


def test_exact_mode_drops_trailing_chunks_for_a_tokenizer_whose_parts_undercount_the_whole() -> None:
    # A counter that charges the joined text more than its parts (one token per line plus one overall).
    def lines(text: str) -> int:
        return text.count("\n") + 1

    results = [result("d", f"d#{n}", f"line {n}", 1.0 - n / 10, sequence=n) for n in range(6)]
    config = AssemblyConfig(marker_tokens="exact")
    context = assemble_context("q", StaticRetriever(results), exact_budget(5), lines, config)
    assert context.total_tokens == lines(format_context(context)) <= 5


def test_marker_tokens_is_validated() -> None:
    with pytest.raises(
        InvalidConfigurationError, match=r"AssemblyConfig\.marker_tokens must be 'fixed' or 'exact'"
    ):
        AssemblyConfig(marker_tokens="approximate")


def test_cupel_assemble_marker_tokens_option(tmp_path: Path) -> None:
    from cupel.assembly import result_to_dict

    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(result_to_dict(r)) for r in long_path_results()), encoding="utf-8")
    fixed = cupel_assemble(str(path), "--budget", "1300")
    exact = cupel_assemble(str(path), "--budget", "1300", "--marker-tokens", "exact")
    assert fixed.returncode == exact.returncode == 0
    assert SimpleTokenizer().count_tokens(fixed.stdout.decode()) > 500
    assert SimpleTokenizer().count_tokens(exact.stdout.decode()) <= 500
    bad = cupel_assemble(str(path), "--budget", "1300", "--marker-tokens", "loose")
    assert (bad.returncode, bad.stderr) == (
        2,
        b"cupel assemble: --marker-tokens must be fixed or exact, got 'loose'\n",
    )
