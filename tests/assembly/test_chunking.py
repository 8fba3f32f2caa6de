"""File chunking for `cupel index`: sizes, overlaps, break points, byte offsets."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cupel.assembly import ChunkingOptions, chunk_document
from cupel.assembly.chunking import kind_of
from cupel.errors import InvalidConfigurationError
from tests.profiles import examples

ROOT = Path(__file__).resolve().parents[2]
PIECES = [*"ab é#\n`~-", "word ", "## Heading\n", "```\n"]


def check_offsets(text: str, chunks: list) -> None:  # type: ignore[type-arg]
    data = text.encode("utf-8")
    for chunk in chunks:
        assert data[chunk.byte_offset :].startswith(chunk.text.encode("utf-8"))


@settings(max_examples=examples(150), deadline=None)
@given(
    text=st.lists(st.sampled_from([*"ab é#\n`~-", "word ", "## Heading\n", "```\n"]), max_size=600).map(
        "".join
    ),
    kind=st.sampled_from(["markdown", "code", "text"]),
    max_chars=st.integers(100, 400),
    overlap=st.integers(0, 49),
)
def test_chunks_are_exact_slices_within_the_size_and_cover_the_text(
    text: str, kind: str, max_chars: int, overlap: int
) -> None:
    chunks = chunk_document("doc", text, kind, ChunkingOptions(max_chars, overlap))
    check_offsets(text, chunks)
    assert [chunk.sequence for chunk in chunks] == list(range(len(chunks)))
    assert [chunk.id for chunk in chunks] == [f"doc#{n}" for n in range(len(chunks))]
    assert all(0 < len(chunk.text) <= max_chars and chunk.text.strip() for chunk in chunks)
    offsets = [chunk.byte_offset for chunk in chunks]
    assert offsets == sorted(set(offsets))
    # Every non-whitespace character is in some chunk.
    data = text.encode("utf-8")
    covered = bytearray(len(data))
    for chunk in chunks:
        size = len(chunk.text.encode("utf-8"))
        covered[chunk.byte_offset : chunk.byte_offset + size] = b"\x01" * size
    assert all(covered[i] or data[i : i + 1].isspace() for i in range(len(data)))


def test_markdown_breaks_before_headings_and_overlaps_paragraphs() -> None:
    paragraph = "Rotate the keys. " * 20  # 340 characters
    text = f"# Keys\n\n{paragraph}\n\n{paragraph}\n\n## Vault\n\n{paragraph}\n"
    chunks = chunk_document("k", text, "markdown", ChunkingOptions(1000, 200))
    assert [chunk.text.splitlines()[0] for chunk in chunks] == ["# Keys", "## Vault"]
    small = chunk_document("k", text, "markdown", ChunkingOptions(500, 100))
    assert small[0].text.startswith("# Keys") and small[-1].text.startswith("## Vault")
    check_offsets(text, small)


def test_markdown_does_not_break_inside_a_fence_when_it_can_avoid_it() -> None:
    fence = "```python\n" + "".join(f"value_{n} = {n}\n" for n in range(20)) + "```\n"
    text = "Intro paragraph.\n\n" + fence + "\nAfter the code.\n"
    chunks = chunk_document("f", text, "markdown", ChunkingOptions(400, 0))
    assert any("```python" in chunk.text and chunk.text.count("```") == 2 for chunk in chunks)


def test_code_breaks_before_top_level_definitions() -> None:
    function = "def f{n}(x):\n" + "    y = x + 1\n" * 12 + "    return y\n\n\n"
    text = "".join(function.format(n=n) for n in range(6))
    chunks = chunk_document("c.py", text, "code", ChunkingOptions(600, 0))
    assert all(chunk.text.startswith("def f") for chunk in chunks)


def test_a_long_line_is_split_at_spaces() -> None:
    text = "word " * 400
    chunks = chunk_document("t", text, "text", ChunkingOptions(300, 0))
    assert len(chunks) >= 7 and all(len(chunk.text) <= 300 for chunk in chunks)
    assert "".join(chunk.text + " " for chunk in chunks).split() == text.split()


def test_this_repository_s_docs_chunk_cleanly() -> None:
    for path in sorted((ROOT / "docs").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        chunks = chunk_document(path.name, text, "markdown")
        check_offsets(text, chunks)
        assert all(len(chunk.text) <= 1500 for chunk in chunks)


def test_kinds_and_options() -> None:
    assert [kind_of(name) for name in ("a.md", "b.PY", "c.txt", "d.png", "Makefile")] == [
        "markdown",
        "code",
        "text",
        None,
        None,
    ]
    with pytest.raises(InvalidConfigurationError, match="overlap_chars must be less than half"):
        ChunkingOptions(200, 100)
    with pytest.raises(InvalidConfigurationError, match="max_chars must be >= 100"):
        ChunkingOptions(50, 0)
    with pytest.raises(InvalidConfigurationError, match="kind must be markdown, code or text"):
        chunk_document("x", "text", "html")
