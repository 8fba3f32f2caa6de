"""FrequencyScorer (spec: Scorers, FrequencyScorer)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from operator import attrgetter

from cupel.model import ContextItem, ascii_fold
from cupel.scorers._base import ScorerBase

# Tags carried by more items than this get a bitset; rarer tags keep a plain list of positions.
_BITSET_THRESHOLD = 32
_TAGS = attrgetter("tags")


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
        # Folded once per distinct tag tuple (items share few of them), looked up per item in C.
        raw_tags = list(map(_TAGS, items))
        folded_sets = {
            tags: frozenset(map(ascii_fold, tags)) if tags else None for tags in dict.fromkeys(raw_tags)
        }
        tag_sets = list(map(folded_sets.__getitem__, raw_tags))
        positions_of: dict[frozenset[str] | None, list[int]] = {
            tag_set: [] for tag_set in folded_sets.values()
        }
        for position, tag_set in enumerate(tag_sets):
            positions_of[tag_set].append(position)
        postings: dict[str, list[int]] = {}
        for tag_set, positions in positions_of.items():
            for tag in tag_set or ():
                postings.setdefault(tag, []).extend(positions)

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
        for tag_set in positions_of:
            if tag_set is None:
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

        denominator = count - 1
        # Every position holding the same instance is skipped by the identity check.
        copies = Counter(map(id, items))
        if len(copies) == count:  # distinct instances (the usual case): one score per tag set
            score_of: dict[frozenset[str] | None, float] = {None: 0.0}
            score_of.update((tag_set, (size - 1) / denominator) for tag_set, size in union_sizes.items())
            return list(map(score_of.__getitem__, tag_sets))
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
