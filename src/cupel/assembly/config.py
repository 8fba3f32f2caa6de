"""Assembly configuration (CFS-021 Configuration Parameters)."""

from __future__ import annotations

from dataclasses import dataclass

from cupel.assembly._validate import require_bool, require_int
from cupel.assembly.dedup import DEFAULT_DEDUP_THRESHOLD, check_threshold
from cupel.assembly.packing import PackingStrategy, check_marker_tokens

__all__ = ["RECENCY_BOOST", "AssemblyConfig"]

RECENCY_BOOST = 0.1
"""The largest relative score boost ``prefer_recent`` gives (to the most recently modified document)."""


@dataclass(frozen=True, slots=True)
class AssemblyConfig:
    """How ``assemble_context`` dedups, limits, ranks, packs and annotates (CFS-021 Configuration Parameters).

    * ``packing_strategy``: a :class:`PackingStrategy` or its name.
    * ``dedup_threshold``: near-duplicate containment threshold in [0, 1]; 1.0 keeps near duplicates.
    * ``max_chunks_per_doc``: keep at most this many of each document's best-ranked chunks (``None``: all).
    * ``prefer_recent``: boost each score by up to ``RECENCY_BOOST`` of its magnitude, in proportion to where
      its document's ``modified_at`` lies between the oldest and the newest in the result set (no boost
      without timestamps). Relative to the result set rather than to the clock, so it stays deterministic.
    * ``include_metadata``: print a ``[CHUNK: id seq=N score=S]`` line before each chunk, and charge it to
      the budget.
    * ``marker_tokens``: how document markers are charged. ``"fixed"`` (the default, as the spec says)
      charges ``TokenBudget.per_doc_overhead`` per ``[DOC: path]`` marker, whatever its real length, so the
      printed context can count more tokens than the budget when paths are long. ``"exact"`` counts each
      marker line, annotation line and the newline after each chunk with the tokenizer, and makes
      ``total_tokens`` the tokenizer's count of the whole formatted text, which never exceeds
      ``available`` (``per_doc_overhead`` is then unused).
    """

    packing_strategy: PackingStrategy = PackingStrategy.GREEDY
    dedup_threshold: float = DEFAULT_DEDUP_THRESHOLD
    max_chunks_per_doc: int | None = None
    prefer_recent: bool = False
    include_metadata: bool = False
    marker_tokens: str = "fixed"

    def __post_init__(self) -> None:
        setter = object.__setattr__
        setter(self, "packing_strategy", PackingStrategy.parse(self.packing_strategy))
        setter(
            self, "dedup_threshold", check_threshold(self.dedup_threshold, "AssemblyConfig.dedup_threshold")
        )
        if self.max_chunks_per_doc is not None:
            require_int("AssemblyConfig", "max_chunks_per_doc", self.max_chunks_per_doc, minimum=1)
        require_bool("AssemblyConfig", "prefer_recent", self.prefer_recent)
        require_bool("AssemblyConfig", "include_metadata", self.include_metadata)
        check_marker_tokens(self.marker_tokens, "AssemblyConfig.marker_tokens")

    def to_bytes(self) -> bytes:
        """A canonical encoding, part of the cache key."""
        return (
            f"AssemblyConfig/1:{self.packing_strategy.value},{self.dedup_threshold!r},"
            f"{self.max_chunks_per_doc},{int(self.prefer_recent)},{int(self.include_metadata)},"
            f"{self.marker_tokens}"
        ).encode("ascii")
