"""MetadataTrustScorer (spec: Scorers, MetadataTrustScorer)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from cupel._floats import to_float
from cupel.model import ContextItem
from cupel.scorers._base import ScorerBase, check_unit_interval

TRUST_KEY = "cupel:trust"

# A plain decimal float, as a strict float parser (Rust's f64::from_str) reads it: no surrounding
# whitespace and no digit-group underscores, both of which Python's float() would accept.
_DECIMAL = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.IGNORECASE)


def parse_trust(raw: object) -> float | None:
    """Read a ``cupel:trust`` value: a number, or a decimal string. ``None`` when unreadable."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        return to_float(raw)  # an integer beyond the float range reads like its digits: infinite
    if isinstance(raw, str) and _DECIMAL.fullmatch(raw):
        return float(raw)
    return None


class MetadataTrustScorer(ScorerBase):
    """Score by the caller's ``metadata["cupel:trust"]``, clamped to [0, 1].

    A missing, unparseable or non-finite value scores ``default_score`` (in [0, 1], default 0.5).
    The value may be a number or a decimal string such as ``"0.85"``.
    """

    __slots__ = ("default_score",)

    default_score: float

    def __init__(self, default_score: float = 0.5) -> None:
        self.default_score = check_unit_interval("MetadataTrustScorer", "default_score", default_score)

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        if TRUST_KEY not in item.metadata:
            return self.default_score
        value = parse_trust(item.metadata[TRUST_KEY])
        if value is None or not math.isfinite(value):
            return self.default_score
        return min(max(value, 0.0), 1.0)

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return [self.score(item, items) for item in items]

    def __repr__(self) -> str:
        return f"MetadataTrustScorer(default_score={self.default_score!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MetadataTrustScorer) and self.default_score == other.default_score

    def __hash__(self) -> int:
        return hash((MetadataTrustScorer, self.default_score))
