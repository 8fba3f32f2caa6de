"""KindScorer (spec: Scorers, KindScorer)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from cupel import _numeric
from cupel._kinds import per_kind, per_kind_floats
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextItem, ContextKind, ascii_fold
from cupel.scorers._base import ScorerBase, check_weight

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

    from cupel.scorers.columns import ItemColumns

DEFAULT_KIND_WEIGHTS: Mapping[ContextKind, float] = MappingProxyType(
    {
        ContextKind.SYSTEM_PROMPT: 1.0,
        ContextKind.MEMORY: 0.8,
        ContextKind.TOOL_OUTPUT: 0.6,
        ContextKind.DOCUMENT: 0.4,
        ContextKind.MESSAGE: 0.2,
    }
)


class KindScorer(ScorerBase):
    """Look the item's kind up in a weight map (case-insensitive); unknown kinds score 0.0.

    Without ``weights`` the spec's defaults apply: SystemPrompt 1.0, Memory 0.8, ToolOutput 0.6,
    Document 0.4, Message 0.2. Custom weights must be finite and non-negative; they may exceed 1.0.
    """

    __slots__ = ("_by_folded_kind", "weights")

    weights: Mapping[ContextKind, float]

    def __init__(self, weights: Mapping[str, float] | None = None) -> None:
        if weights is None:
            checked = dict(DEFAULT_KIND_WEIGHTS)
        else:
            if not isinstance(weights, Mapping):
                raise CupelTypeError(
                    f"KindScorer: weights must be a mapping of kind to weight, got {weights!r}"
                )
            checked = {}
            for raw_kind, raw_weight in weights.items():
                kind = ContextKind(raw_kind)
                if kind in checked:
                    raise InvalidConfigurationError(
                        f"KindScorer: kind {str(kind)!r} appears twice (kinds are case-insensitive)"
                    )
                checked[kind] = check_weight(
                    "KindScorer", f"weight for kind {str(kind)!r}", raw_weight, allow_zero=True
                )
        self.weights = MappingProxyType(checked)
        self._by_folded_kind = {kind.folded: weight for kind, weight in checked.items()}

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        return self._by_folded_kind.get(ascii_fold(item.kind), 0.0)

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        weights = self._by_folded_kind
        return per_kind(items, lambda folded: weights.get(folded, 0.0))

    def _score_column(self, items: Sequence[ContextItem]) -> Any:
        """``score_all`` as a float64 array for large lists when numpy is present (CompositeScorer
        combines the arrays without building lists)."""
        if len(items) < _numeric.THRESHOLD or _numeric.numpy_module() is None:
            return self.score_all(items)
        weights = self._by_folded_kind
        return per_kind_floats(items, lambda folded: weights.get(folded, 0.0))

    def score_columns(self, batch: ItemColumns) -> Any:
        """Each distinct kind of the batch looked up once."""
        if batch.source is not None:
            return self._score_column(batch.source)
        kinds = batch.kinds()
        weights = self._by_folded_kind
        # Kinds are interned: a few distinct objects, each looked up once (by identity, not by hash).
        distinct = dict(zip(map(id, kinds), kinds, strict=True))  # one C-level pass
        known = {key: weights.get(ascii_fold(kind), 0.0) for key, kind in distinct.items()}
        return list(map(known.__getitem__, map(id, kinds)))

    def __repr__(self) -> str:
        if self.weights == DEFAULT_KIND_WEIGHTS:
            return "KindScorer()"
        return f"KindScorer({ {str(k): w for k, w in self.weights.items()}!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KindScorer) and self._by_folded_kind == other._by_folded_kind

    def __hash__(self) -> int:
        return hash(frozenset(self._by_folded_kind.items()))
