"""QuotaSlice and its QuotaSet configuration (spec: Slicers, QuotaSlice)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from cupel._kinds import folded_kinds
from cupel.diagnostics.reasons import BudgetExceeded, ExclusionReason
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextBudget, ContextItem, ContextKind, ScoredItem
from cupel.protocols import Slicer
from cupel.slicers._base import CountRequirementShortfall, SliceOutcome, is_count_quota_slicer
from cupel.slicers._common import check_percent, check_slicer, run_inner

__all__ = ["QuotaEntry", "QuotaSet", "QuotaSlice"]


@dataclass(frozen=True, slots=True, init=False)
class QuotaEntry:
    """One kind's share of the budget: at least ``require`` and at most ``cap`` percent.

    Both are percentages in [0.0, 100.0] with ``require <= cap`` (spec: QuotaSlice, Validation
    Rules). A kind without an entry behaves as ``require=0, cap=100``.
    """

    kind: ContextKind
    require: float
    cap: float

    def __init__(self, kind: str, require: float = 0.0, cap: float = 100.0) -> None:
        checked_kind = ContextKind(kind)
        label = f"for kind {str(checked_kind)!r}"
        checked_require = check_percent("QuotaEntry", f"require {label}", require)
        checked_cap = check_percent("QuotaEntry", f"cap {label}", cap)
        if checked_require > checked_cap:
            raise InvalidConfigurationError(
                f"QuotaEntry {label}: require ({checked_require!r}) must be <= cap ({checked_cap!r})"
            )
        object.__setattr__(self, "kind", checked_kind)
        object.__setattr__(self, "require", checked_require)
        object.__setattr__(self, "cap", checked_cap)


QuotaSpec = QuotaEntry | tuple[str, float, float]


def _as_entry(spec: object) -> QuotaEntry:
    if isinstance(spec, QuotaEntry):
        return spec
    if isinstance(spec, tuple) and len(spec) == 3:
        kind, require, cap = spec
        return QuotaEntry(kind, require, cap)
    raise CupelTypeError(f"QuotaSet entries must be QuotaEntry or (kind, require, cap) tuples, got {spec!r}")


class QuotaSet:
    """Per-kind require/cap percentages for :class:`QuotaSlice`, validated as a whole.

    Build it from entries or tuples, ``QuotaSet([QuotaEntry("Message", require=20, cap=50)])`` or
    ``QuotaSet([("Message", 20, 50)])``, or fluently: ``QuotaSet().require("SystemPrompt", 30)
    .cap("SystemPrompt", 50).cap("Message", 40)``. Each step returns a new, validated set. A kind may
    appear once (kinds compare case-insensitively) and the requires may sum to at most 100%.
    """

    __slots__ = ("_by_folded", "_entries")

    _entries: tuple[QuotaEntry, ...]
    _by_folded: Mapping[str, QuotaEntry]

    def __init__(self, entries: Iterable[QuotaSpec] = ()) -> None:
        if isinstance(entries, str | bytes | QuotaEntry) or not isinstance(entries, Iterable):
            raise CupelTypeError(
                f"QuotaSet.entries must be an iterable of QuotaEntry or (kind, require, cap), got {entries!r}"
            )
        checked = tuple(_as_entry(spec) for spec in entries)
        by_folded: dict[str, QuotaEntry] = {}
        for entry in checked:
            if entry.kind.folded in by_folded:
                raise InvalidConfigurationError(
                    f"QuotaSet names kind {str(entry.kind)!r} twice (kinds compare case-insensitively)"
                )
            by_folded[entry.kind.folded] = entry
        # fsum: the check must not depend on entry order or on accumulated rounding.
        total = math.fsum(entry.require for entry in checked)
        if total > 100.0:
            parts = ", ".join(f"{str(entry.kind)!r} {entry.require:g}" for entry in checked if entry.require)
            raise InvalidConfigurationError(
                f"QuotaSet: the require percentages must sum to at most 100.0, got {total:g} ({parts})"
            )
        object.__setattr__(self, "_entries", checked)
        object.__setattr__(self, "_by_folded", by_folded)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"QuotaSet is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"QuotaSet is immutable; cannot delete {name!r}")

    @property
    def entries(self) -> tuple[QuotaEntry, ...]:
        """The configured entries, in the order given."""
        return self._entries

    def get(self, kind: str) -> QuotaEntry | None:
        """The entry for ``kind`` (case-insensitive), if configured."""
        return self._by_folded.get(ContextKind(kind).folded)

    def get_require(self, kind: str) -> float:
        """The require percentage for ``kind``; 0.0 when not configured."""
        entry = self.get(kind)
        return 0.0 if entry is None else entry.require

    def get_cap(self, kind: str) -> float:
        """The cap percentage for ``kind``; 100.0 when not configured."""
        entry = self.get(kind)
        return 100.0 if entry is None else entry.cap

    def require(self, kind: str, min_percent: float) -> QuotaSet:
        """A copy guaranteeing ``kind`` at least ``min_percent`` of the budget (spec: Require)."""
        current = self.get(kind)
        return self._with(QuotaEntry(kind, min_percent, 100.0 if current is None else current.cap))

    def cap(self, kind: str, max_percent: float) -> QuotaSet:
        """A copy limiting ``kind`` to at most ``max_percent`` of the budget (spec: Cap)."""
        current = self.get(kind)
        return self._with(QuotaEntry(kind, 0.0 if current is None else current.require, max_percent))

    def _with(self, replacement: QuotaEntry) -> QuotaSet:
        folded = replacement.kind.folded
        if folded not in self._by_folded:
            return QuotaSet((*self._entries, replacement))
        return QuotaSet(replacement if entry.kind.folded == folded else entry for entry in self._entries)

    def __iter__(self) -> Iterator[QuotaEntry]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, kind: object) -> bool:
        return isinstance(kind, str) and bool(kind.strip()) and self.get(kind) is not None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, QuotaSet):
            return frozenset(self._entries) == frozenset(other._entries)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(frozenset(self._entries))

    def __repr__(self) -> str:
        inner = ", ".join(
            f"QuotaEntry({str(entry.kind)!r}, require={entry.require:g}, cap={entry.cap:g})"
            for entry in self._entries
        )
        return f"QuotaSet([{inner}])"

    def __reduce__(self) -> tuple[type[QuotaSet], tuple[tuple[QuotaEntry, ...]]]:
        return (QuotaSet, (self._entries,))


def _percent_of(percent: float, target_tokens: int) -> int:
    # Evaluated exactly as the spec writes it, floor(percent / 100.0 * target), float64 throughout:
    # floor(29 / 100.0 * 100) is 28, and implementations must agree on that.
    return math.floor(percent / 100.0 * target_tokens)


def _distribute_budget(mass: Mapping[str, int], target_tokens: int, quotas: QuotaSet) -> dict[str, int]:
    """DISTRIBUTE-BUDGET (spec: QuotaSlice, Budget Distribution): token budget per folded kind.

    ``mass`` maps each partition's folded kind to its candidate token mass. The proportional share
    is an exact integer floor, ``unassigned * mass // total``, which is the spec's
    ``floor(unassigned * mass / totalMass)`` without float rounding.
    """
    require_tokens: dict[str, int] = {}
    cap_tokens: dict[str, int] = {}
    for entry in quotas:
        require_tokens[entry.kind.folded] = _percent_of(entry.require, target_tokens)
        cap_tokens[entry.kind.folded] = _percent_of(entry.cap, target_tokens)
    # Configured kinds without candidates still take their require: it stays unused (spec).
    unassigned = max(0, target_tokens - sum(require_tokens.values()))
    distributable = 0
    for kind, kind_mass in mass.items():
        if cap_tokens.get(kind, target_tokens) > require_tokens.get(kind, 0):
            distributable += kind_mass
    budgets: dict[str, int] = {}
    for kind, kind_mass in mass.items():
        require = require_tokens.get(kind, 0)
        cap = cap_tokens.get(kind, target_tokens)
        proportional = 0
        if distributable > 0 and cap > require:
            proportional = unassigned * kind_mass // distributable
        budgets[kind] = min(require + proportional, cap)
    return budgets


@dataclass(frozen=True, slots=True, init=False)
class QuotaSlice:
    """Split the budget across kinds by percentage quotas, then slice each kind with ``inner``.

    Items are partitioned by kind (case-insensitively, in order of first appearance); each kind gets
    its require share plus a share of the rest proportional to its candidates' token mass, clamped to
    its cap, all floored to whole tokens; ``inner`` then selects within
    ``ContextBudget(max_tokens=cap tokens, target_tokens=kind budget)``. The output concatenates the
    kinds' selections in partition order. Spec: Slicers, QuotaSlice.

    Count requirements of a count-quota slicer inside (at any depth of nested QuotaSlices) are judged
    once, by the outermost QuotaSlice, over the whole pool (docs/spec-notes.md, Truthful explanations).
    """

    quotas: QuotaSet
    inner: Slicer
    # True for the copy an outer QuotaSlice runs on one kind's partition: the pool was judged already.
    _judged: bool = field(default=False, compare=False, repr=False)
    is_quota: ClassVar[bool] = True

    def __init__(self, quotas: QuotaSet | Iterable[QuotaSpec], inner: Slicer) -> None:
        object.__setattr__(self, "quotas", quotas if isinstance(quotas, QuotaSet) else QuotaSet(quotas))
        object.__setattr__(self, "inner", check_slicer("QuotaSlice", "inner", inner))
        object.__setattr__(self, "_judged", False)

    @property
    def is_count_quota(self) -> bool:
        """True when the inner slicer enforces count quotas: its non-monotonicity carries over."""
        return is_count_quota_slicer(self.inner)

    def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
        return list(self._run(scored, budget, detailed=False).selected)

    def pool_shortfalls(self, scored: Sequence[ScoredItem]) -> tuple[CountRequirementShortfall, ...]:
        """The count requirements inside that the whole of ``scored`` cannot meet (raises under THROW)."""
        judge = getattr(self.inner, "pool_shortfalls", None)
        return () if judge is None else tuple(judge(scored))

    def for_kind(self, kind: str) -> QuotaSlice:
        """This slicer for a partition holding only ``kind`` (folded), its count requirements judged
        already: see :meth:`pool_shortfalls`."""
        narrow = _narrowing(self.inner)
        judged = QuotaSlice(self.quotas, self.inner if narrow is None else narrow(kind))
        object.__setattr__(judged, "_judged", True)
        return judged

    def slice_detailed(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> SliceOutcome:
        """Select like :meth:`slice`; an item the inner slicer did not explain is reported as
        BudgetExceeded against what was left of its kind's budget."""
        return self._run(scored, budget, detailed=True)

    def _run(self, scored: Sequence[ScoredItem], budget: ContextBudget, *, detailed: bool) -> SliceOutcome:
        if not scored or budget.target_tokens <= 0:
            return SliceOutcome(())
        target = budget.target_tokens
        partitions: dict[str, list[ScoredItem]] = {}
        for folded, entry in zip(folded_kinds(entry.item for entry in scored), scored, strict=True):
            partitions.setdefault(folded, []).append(entry)
        mass = {kind: sum(entry.item.tokens for entry in items) for kind, items in partitions.items()}
        kind_budgets = _distribute_budget(mass, target, self.quotas)

        selected: list[ContextItem] = []
        exclusions: list[tuple[ContextItem, ExclusionReason]] = []
        shortfalls: list[CountRequirementShortfall] = []
        # A count-quota inner slicer sees one kind at a time, so its requirements are judged once,
        # over the whole pool, by the outermost QuotaSlice: a kind is missing only if no partition has it.
        for_kind = _narrowing(self.inner)
        if for_kind is not None and not self._judged:
            shortfalls.extend(self.inner.pool_shortfalls(scored))  # type: ignore[attr-defined]
        for kind, items in partitions.items():
            kind_budget = kind_budgets[kind]
            if kind_budget <= 0:
                if detailed:
                    exclusions.extend((entry.item, BudgetExceeded(entry.item.tokens, 0)) for entry in items)
                continue
            cap = _percent_of(self.quotas.get_cap(kind), target)
            # DISTRIBUTE-BUDGET already clamps to the cap; ContextBudget requires target <= max.
            kind_budget = min(kind_budget, cap)
            inner = self.inner if for_kind is None else for_kind(kind)
            outcome = run_inner(inner, items, ContextBudget(cap, kind_budget), detailed)
            selected.extend(outcome.selected)
            if detailed:
                exclusions.extend(outcome.exclusions)
                if for_kind is None:
                    shortfalls.extend(outcome.shortfalls)
                explained = {id(item) for item in outcome.selected}
                explained.update(id(item) for item, _ in outcome.exclusions)
                left = max(0, kind_budget - sum(item.tokens for item in outcome.selected))
                exclusions.extend(
                    (entry.item, BudgetExceeded(entry.item.tokens, left))
                    for entry in items
                    if id(entry.item) not in explained
                )
        return SliceOutcome(tuple(selected), tuple(exclusions), tuple(shortfalls))


def _narrowing(slicer: Slicer) -> Callable[[str], Slicer] | None:
    """``slicer.for_kind`` when it narrows a count-quota slicer to one kind's partition, else None."""
    if isinstance(slicer, QuotaSlice):
        return slicer.for_kind if _narrowing(slicer.inner) is not None else None
    narrow: Callable[[str], Slicer] | None = getattr(slicer, "for_kind", None)
    return narrow
