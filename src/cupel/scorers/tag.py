"""TagScorer (spec: Scorers, TagScorer)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextItem, ascii_fold
from cupel.scorers._base import ScorerBase, check_weight

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from cupel.scorers.columns import ItemColumns


class TagScorer(ScorerBase):
    """Sum the weights of the item's configured tags over the total configured weight, capped at 1.0.

    Tag lookup is case-sensitive by default, as the spec requires; pass ``case_sensitive=False`` for
    ASCII case-insensitive lookup. Each occurrence of a tag on an item counts.
    """

    __slots__ = ("_lookup", "_total_weight", "case_sensitive", "tag_weights")

    tag_weights: Mapping[str, float]
    case_sensitive: bool

    def __init__(self, tag_weights: Mapping[str, float], *, case_sensitive: bool = True) -> None:
        if not isinstance(tag_weights, Mapping):
            raise CupelTypeError(
                f"TagScorer: tag_weights must be a mapping of tag to weight, got {tag_weights!r}"
            )
        checked: dict[str, float] = {}
        lookup: dict[str, float] = {}
        total = 0.0
        for tag, raw_weight in tag_weights.items():
            if not isinstance(tag, str):
                raise CupelTypeError(f"TagScorer: tags must be strings, got {tag!r}")
            weight = check_weight("TagScorer", f"weight for tag {tag!r}", raw_weight, allow_zero=True)
            key = tag if case_sensitive else ascii_fold(tag)
            if key in lookup:
                raise InvalidConfigurationError(
                    f"TagScorer: tag {tag!r} appears twice when compared case-insensitively"
                )
            checked[tag] = weight
            lookup[key] = weight
            total += weight
        self.tag_weights = MappingProxyType(checked)
        self.case_sensitive = case_sensitive
        self._lookup = lookup
        self._total_weight = total

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        return self._score_tags(item.tags)

    def _score_tags(self, tags: tuple[str, ...]) -> float:
        total = self._total_weight
        if total == 0.0 or not tags:
            return 0.0
        lookup = self._lookup
        matched = 0.0
        for tag in tags:
            key = tag if self.case_sensitive else ascii_fold(tag)
            if key in lookup:
                matched += lookup[key]
        return min(matched / total, 1.0)

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return [self.score(item, items) for item in items]

    def score_columns(self, batch: ItemColumns) -> list[float]:
        """Each distinct tag tuple of the batch scored once; with one weighted tag, by its presence
        where the batch can tell it (its items' tags are then distinct)."""
        if batch.source is not None:
            return self.score_all(batch.source)
        if len(self.tag_weights) == 1 and self.case_sensitive:
            (tag,) = self.tag_weights
            present = batch.presence(tag)
            if present is not None:
                with_tag, without = self._score_tags((tag,)), self._score_tags(())
                return [with_tag if has else without for has in present]
        tags = batch.tags()
        known = {value: self._score_tags(value) for value in set(tags)}
        return list(map(known.__getitem__, tags))

    def __repr__(self) -> str:
        suffix = "" if self.case_sensitive else ", case_sensitive=False"
        return f"TagScorer({dict(self.tag_weights)!r}{suffix})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TagScorer)
            and dict(self.tag_weights) == dict(other.tag_weights)
            and self.case_sensitive == other.case_sensitive
        )

    def __hash__(self) -> int:
        return hash((frozenset(self.tag_weights.items()), self.case_sensitive))
