"""Splitting files into chunks for indexing (``cupel index``).

Chunks are runs of whole lines of at most ``max_chars`` characters (default 1,500, about 375 tokens by the
spec's four-bytes-per-token estimate for English text); a line longer than that is split at spaces, or
hard at ``max_chars`` when it has none. Each chunk ends at the best break point in its second half:

* Markdown (``.md``, ``.markdown``, ``.mdx``): before a heading (a heading also starts a new chunk once
  the current one holds a quarter of ``max_chars``), else after a blank line; never inside a fenced code
  block unless a block alone is too long.
* Code (``.py``, ``.js``, ``.ts``, ``.go``, ``.rs``, ``.java``, ``.c``, ``.cpp``, ``.rb``, ``.sh``, …):
  before an unindented line that follows a blank line (a top-level definition), else after a blank line.
* Text (``.txt``, ``.rst`` and the rest): after a blank line (between paragraphs).

Consecutive chunks overlap by the whole lines that fit in ``overlap_chars`` (default 200) before the
break, so a sentence cut at a chunk boundary is still whole in one of them. A chunk's text is the exact
slice of the file, without leading blank lines or trailing whitespace; its ``byte_offset`` is the UTF-8
offset of that slice and its ``sequence`` its position in the file. Whitespace-only chunks are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath

from cupel.assembly._validate import require_int
from cupel.assembly.types import Chunk
from cupel.errors import InvalidConfigurationError

__all__ = [
    "CODE_SUFFIXES",
    "MARKDOWN_SUFFIXES",
    "TEXT_SUFFIXES",
    "ChunkingOptions",
    "chunk_document",
    "kind_of",
]

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx"})
CODE_SUFFIXES = frozenset(
    {".py", ".pyi", ".js", ".jsx", ".ts", ".tsx", ".go", ".rs", ".java", ".kt", ".c", ".h", ".cc", ".cpp",
     ".hpp", ".cs", ".rb", ".php", ".swift", ".scala", ".sh", ".bash", ".sql", ".toml", ".yaml", ".yml",
     ".json", ".ini", ".cfg"}
)  # fmt: skip
TEXT_SUFFIXES = frozenset({".txt", ".rst", ".text", ".adoc", ".org"})

_HEADING = re.compile(r"#{1,6}\s")
_FENCE = re.compile(r"(```|~~~)")


@dataclass(frozen=True, slots=True)
class ChunkingOptions:
    """``max_chars`` per chunk (>= 100) and ``overlap_chars`` between neighbours (< max_chars / 2)."""

    max_chars: int = 1500
    overlap_chars: int = 200

    def __post_init__(self) -> None:
        require_int("ChunkingOptions", "max_chars", self.max_chars, minimum=100)
        require_int("ChunkingOptions", "overlap_chars", self.overlap_chars)
        if self.overlap_chars * 2 >= self.max_chars:
            raise InvalidConfigurationError(
                f"ChunkingOptions.overlap_chars must be less than half of max_chars ({self.max_chars}), "
                f"got {self.overlap_chars}"
            )


def kind_of(path: str | PurePath) -> str | None:
    """``"markdown"``, ``"code"`` or ``"text"`` by file suffix; ``None`` for other files."""
    suffix = PurePath(path).suffix.lower()
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in CODE_SUFFIXES:
        return "code"
    if suffix in TEXT_SUFFIXES:
        return "text"
    return None


def _segments(text: str, kind: str, max_chars: int) -> list[tuple[int, int, int]]:
    """``(start, end, break score before it)`` for each line, long lines split; 0 means never break."""
    segments: list[tuple[int, int, int]] = []
    in_fence = False
    previous_blank = True
    position = 0
    for line in text.splitlines(keepends=True):
        start, end = position, position + len(line)
        position = end
        stripped = line.strip()
        score = 1
        if kind == "markdown":
            if in_fence:
                score = 0
            elif _HEADING.match(line):
                score = 4
            elif previous_blank:
                score = 2
            if _FENCE.match(stripped):
                in_fence = not in_fence
        elif kind == "code":
            if previous_blank and stripped and not line[0].isspace():
                score = 3
            elif previous_blank:
                score = 2
        elif previous_blank:
            score = 2
        previous_blank = not stripped
        while end - start > max_chars:
            cut = text.rfind(" ", start + 1, start + max_chars)
            cut = cut + 1 if cut > start else start + max_chars
            segments.append((start, cut, score))
            start, score = cut, 1
        segments.append((start, end, score))
    return segments


def _spans(segments: list[tuple[int, int, int]], options: ChunkingOptions) -> list[tuple[int, int]]:
    limit, count = options.max_chars, len(segments)
    spans: list[tuple[int, int]] = []
    first = 0
    while first < count:
        begin = segments[first][0]
        last = first  # the chunk is segments[first..last]
        while last + 1 < count:
            start, end, score = segments[last + 1]
            if end - begin > limit or (score >= 4 and start - begin >= limit // 4):
                break
            last += 1
        if last + 1 < count:
            start, _, score = segments[last + 1]
            if not (score >= 4 and start - begin >= limit // 4):
                # Too long: cut at the best break in the chunk's second half (the latest among equals).
                best = last + 1
                for candidate in range(last, first, -1):
                    if segments[candidate][0] - begin < limit // 2:
                        break
                    if segments[candidate][2] > segments[best][2]:
                        best = candidate
                last = best - 1
        spans.append((begin, segments[last][1]))
        following = last + 1
        if following < count and segments[following][2] < 4:
            # Overlap: start the next chunk with the whole lines that fit in overlap_chars.
            while (
                following - 1 > first
                and segments[last][1] - segments[following - 1][0] <= options.overlap_chars
            ):
                following -= 1
        first = following
    return spans


def chunk_document(doc_id: str, text: str, kind: str, options: ChunkingOptions | None = None) -> list[Chunk]:
    """The chunks of ``text`` (a file of ``kind``), with ids ``"<doc_id>#<sequence>"``."""
    if kind not in ("markdown", "code", "text"):
        raise InvalidConfigurationError(f"kind must be markdown, code or text, got {kind!r}")
    options = options or ChunkingOptions()
    chunks: list[Chunk] = []
    byte_position = char_position = 0
    for start, end in _spans(_segments(text, kind, options.max_chars), options):
        piece = text[start:end]
        body = piece.lstrip("\r\n").rstrip()
        if not body:
            continue
        begin = start + len(piece) - len(piece.lstrip("\r\n"))
        # Chunk starts only move forward, so byte offsets accumulate.
        byte_position += len(text[char_position:begin].encode("utf-8"))
        char_position = begin
        chunks.append(Chunk(f"{doc_id}#{len(chunks)}", body, len(chunks), byte_position))
    return chunks
