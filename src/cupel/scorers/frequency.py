"""FrequencyScorer (spec: Scorers, FrequencyScorer)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from cupel.model import ContextItem, ascii_fold
from cupel.scorers._base import ScorerBase

# Tags carried by more items than this get a bitset; rarer tags keep a plain list of positions.
_BITSET_THRESHOLD = 32


def _shares_any_tag(tags_a: Sequence[str], tags_b: Sequence[str]) -> bool:
    folded_b = {ascii_fold(tag) for tag in tags_b}
    return any(ascii_fold(tag) in folded_b for tag in tags_a)


class FrequencyScorer(ScorerBase):
    """Share of peers (all other items) that have at least one tag in common (ASCII case-insensitive).

    The item itself is skipped by identity, so a second copy of the same instance is skipped too; the
    denominator is always ``len(all_items) - 1``. ``score_all`` uses an inverted tag index: items with
    the same tag set share one union count, computed with bitsets for common tags.
    """

    __slots__ = ()

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        if not item.tags or len(all_items) <= 1:
            return 0.0
        matching = 0
        for other in all_items:
            if other is item or not other.tags:
                continue
            if _shares_any_tag(item.tags, other.tags):
                matching += 1
        return matching / (len(all_items) - 1)

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        count = len(items)
        if count <= 1:
            return [0.0] * count
        tag_sets: list[frozenset[str] | None] = []
        postings: dict[str, list[int]] = {}
        for position, item in enumerate(items):
            if not item.tags:
                tag_sets.append(None)
                continue
            folded = frozenset(ascii_fold(tag) for tag in item.tags)
            tag_sets.append(folded)
            for tag in folded:
                postings.setdefault(tag, []).append(position)

        bitsets: dict[str, int] = {}

        def bitset(tag: str) -> int:
            cached = bitsets.get(tag)
            if cached is None:
                bits = bytearray((count + 7) // 8)
                for position in postings[tag]:
                    bits[position >> 3] |= 1 << (position & 7)
                cached = bitsets[tag] = int.from_bytes(bits, "little")
            return cached

        union_sizes: dict[frozenset[str], int] = {}
        for tag_set in tag_sets:
            if tag_set is None or tag_set in union_sizes:
                continue
            heavy = [tag for tag in tag_set if len(postings[tag]) > _BITSET_THRESHOLD]
            light = [tag for tag in tag_set if len(postings[tag]) <= _BITSET_THRESHOLD]
            if not heavy:
                union_sizes[tag_set] = len({p for tag in light for p in postings[tag]})
                continue
            mask = 0
            for tag in heavy:
                mask |= bitset(tag)
            size = mask.bit_count()
            if light:
                mask_bytes = mask.to_bytes((count + 7) // 8, "little")
                extra = {p for tag in light for p in postings[tag] if not (mask_bytes[p >> 3] >> (p & 7)) & 1}
                size += len(extra)
            union_sizes[tag_set] = size

        # Every position holding the same instance is skipped by the identity check.
        copies = Counter(id(item) for item in items)
        denominator = count - 1
        return [
            0.0 if tag_set is None else (union_sizes[tag_set] - copies[id(item)]) / denominator
            for item, tag_set in zip(items, tag_sets, strict=True)
        ]

    def __repr__(self) -> str:
        return "FrequencyScorer()"

    def __eq__(self, other: object) -> bool:
        return type(other) is FrequencyScorer

    def __hash__(self) -> int:
        return hash(FrequencyScorer)
