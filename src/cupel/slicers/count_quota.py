"""CountQuotaSlice, CountQuotaEntry and ScarcityBehavior (spec: Slicers, CountQuotaSlice).

Phase 1 (count-satisfy) and Phase 3 (cap enforcement) are shared with
:class:`~cupel.slicers.count_constrained_knapsack.CountConstrainedKnapsackSlice`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from cupel._kinds import folded_kinds
from cupel._score_order import sort_by_score
from cupel.diagnostics.reasons import ExclusionReason, QuotaCapExceeded
from cupel.errors import CupelTypeError, InvalidConfigurationError, ScarcityError
from cupel.model import ContextBudget, ContextItem, ContextKind, ScoredItem
from cupel.protocols import Slicer
from cupel.slicers._base import CountRequirementShortfall, SliceOutcome, is_quota_slicer
from cupel.slicers._common import check_int, check_slicer, run_inner
from cupel.slicers.knapsack import KnapsackSlice

__all__ = ["CountQuotaEntry", "CountQuotaSlice", "ScarcityBehavior"]


class ScarcityBehavior(StrEnum):
    """What a count-quota slicer does when a kind has fewer candidates than its ``require_count``.

    ``DEGRADE`` (default) commits what there is and reports a
    :class:`~cupel.slicers.CountRequirementShortfall`; ``THROW`` raises
    :class:`~cupel.errors.ScarcityError`. ``ScarcityBehavior("Degrade")`` also works.
    """

    DEGRADE = "degrade"
    THROW = "throw"

    @classmethod
    def _missing_(cls, value: object) -> ScarcityBehavior | None:
        if isinstance(value, str):
            folded = value.strip().lower()
            for member in cls:
                if member.value == folded:
                    return member
        return None


@dataclass(frozen=True, slots=True, init=False)
class CountQuotaEntry:
    """Item-count bounds for one kind: commit at least ``require_count``, keep at most ``cap_count``.

    Both are non-negative ints with ``require_count <= cap_count``; ``cap_count=0`` is allowed only
    with ``require_count=0`` (it excludes the kind). Spec: CountQuotaSlice, CountQuotaEntry.
    """

    kind: ContextKind
    require_count: int
    cap_count: int

    def __init__(self, kind: str, require_count: int, cap_count: int) -> None:
        checked_kind = ContextKind(kind)
        label = f"for kind {str(checked_kind)!r}"
        require = check_int("CountQuotaEntry", f"require_count {label}", require_count, minimum=0)
        cap = check_int("CountQuotaEntry", f"cap_count {label}", cap_count, minimum=0)
        if cap == 0 and require > 0:
            raise InvalidConfigurationError(
                f"CountQuotaEntry {label}: cap_count is 0 but require_count is {require}; "
                "a zero cap with a positive requirement can never be satisfied"
            )
        if require > cap:
            raise InvalidConfigurationError(
                f"CountQuotaEntry {label}: require_count ({require}) must be <= cap_count ({cap})"
            )
        object.__setattr__(self, "kind", checked_kind)
        object.__setattr__(self, "require_count", require)
        object.__setattr__(self, "cap_count", cap)


def _check_entries(owner: str, entries: Iterable[CountQuotaEntry]) -> tuple[CountQuotaEntry, ...]:
    """The entries as a tuple; each a CountQuotaEntry, no kind twice (case-insensitively)."""
    if isinstance(entries, str | bytes | CountQuotaEntry) or not isinstance(entries, Iterable):
        raise CupelTypeError(f"{owner}.entries must be an iterable of CountQuotaEntry, got {entries!r}")
    checked = tuple(entries)
    seen: set[str] = set()
    for entry in checked:
        if not isinstance(entry, CountQuotaEntry):
            raise CupelTypeError(f"{owner}.entries must contain only CountQuotaEntry, got {entry!r}")
        if entry.kind.folded in seen:
            raise InvalidConfigurationError(
                f"{owner}.entries names kind {str(entry.kind)!r} twice (kinds compare case-insensitively)"
            )
        seen.add(entry.kind.folded)
    return checked


def _check_scarcity(owner: str, value: object) -> ScarcityBehavior:
    if isinstance(value, ScarcityBehavior):
        return value
    if isinstance(value, str):
        try:
            return ScarcityBehavior(value)
        except ValueError:
            pass
        raise InvalidConfigurationError(f"{owner}.scarcity must be 'degrade' or 'throw', got {value!r}")
    raise CupelTypeError(f"{owner}.scarcity must be a ScarcityBehavior, got {value!r}")


@dataclass(slots=True)
class _Committed:
    """Phase 1's result: the committed items, their ids and tokens, per-kind counts, shortfalls."""

    items: list[ContextItem]
    ids: set[int]
    tokens: int
    counts: dict[str, int]
    shortfalls: list[CountRequirementShortfall]


def _count_satisfy(
    owner: str, scored: Sequence[ScoredItem], entries: tuple[CountQuotaEntry, ...], scarcity: ScarcityBehavior
) -> _Committed:
    """Phase 1: for each entry with ``require_count > 0``, in configuration order, commit its kind's
    top ``require_count`` candidates by score (ties in input order)."""
    partitions: dict[str, list[ScoredItem]] = {
        entry.kind.folded: [] for entry in entries if entry.require_count > 0
    }
    if partitions:
        for folded, candidate in zip(folded_kinds(entry.item for entry in scored), scored, strict=True):
            bucket = partitions.get(folded)
            if bucket is not None:
                bucket.append(candidate)
    result = _Committed([], set(), 0, {}, [])
    for entry in entries:
        if entry.require_count <= 0:
            continue
        # The spec requires an explicit per-kind sort: the input need not be score-sorted per kind.
        ranked = sort_by_score(partitions[entry.kind.folded], lambda candidate: candidate.score)
        taken = ranked[: entry.require_count]
        for candidate in taken:
            result.items.append(candidate.item)
            result.ids.add(id(candidate.item))
            result.tokens += candidate.item.tokens
        satisfied = len(taken)
        result.counts[entry.kind.folded] = satisfied
        if satisfied < entry.require_count:
            result.shortfalls.append(_scarce(owner, entry, satisfied, scarcity))
    return result


def _scarce(
    owner: str, entry: CountQuotaEntry, satisfied: int, scarcity: ScarcityBehavior
) -> CountRequirementShortfall:
    """The shortfall of a kind with too few candidates; raises under ``ScarcityBehavior.THROW``."""
    if scarcity is ScarcityBehavior.THROW:
        raise ScarcityError(
            f"{owner}: candidate pool for kind '{entry.kind}' has {satisfied} items "
            f"but RequireCount is {entry.require_count}.",
            kind=str(entry.kind),
            required_count=entry.require_count,
            satisfied_count=satisfied,
        )
    return CountRequirementShortfall(entry.kind, entry.require_count, satisfied)


def pool_shortfalls(
    owner: str, scored: Sequence[ScoredItem], entries: tuple[CountQuotaEntry, ...], scarcity: ScarcityBehavior
) -> tuple[CountRequirementShortfall, ...]:
    """Phase 1's scarcity check over a whole candidate pool, for a count-quota slicer that a QuotaSlice
    runs once per kind: a kind is short only if the pool as a whole has too few of it."""
    counts: dict[str, int] = {}
    for candidate in scored:
        folded = candidate.item.kind.folded
        counts[folded] = counts.get(folded, 0) + 1
    return tuple(
        _scarce(owner, entry, counts.get(entry.kind.folded, 0), scarcity)
        for entry in entries
        if counts.get(entry.kind.folded, 0) < entry.require_count
    )


def entries_for_kind(entries: tuple[CountQuotaEntry, ...], kind: str) -> tuple[CountQuotaEntry, ...]:
    """The entries that concern one kind (folded), for a partition holding only that kind."""
    return tuple(entry for entry in entries if entry.kind.folded == kind)


def _residual_pass(
    scored: Sequence[ScoredItem], committed: _Committed, budget: ContextBudget
) -> tuple[list[ScoredItem], ContextBudget]:
    """Phase 2's input: the uncommitted candidates (input order) and the reduced budget."""
    residual = [candidate for candidate in scored if id(candidate.item) not in committed.ids]
    residual_target = max(0, budget.target_tokens - committed.tokens)
    return residual, ContextBudget(budget.max_tokens, min(residual_target, budget.max_tokens))


def _enforce_caps(
    candidates: Sequence[ContextItem], entries: tuple[CountQuotaEntry, ...], counts: dict[str, int]
) -> tuple[list[ContextItem], list[tuple[ContextItem, ExclusionReason]]]:
    """Phase 3: keep Phase 2 items while their kind is under its cap; ``counts`` starts from Phase 1."""
    by_kind = {entry.kind.folded: entry for entry in entries}
    accepted: list[ContextItem] = []
    excluded: list[tuple[ContextItem, ExclusionReason]] = []
    for kind, item in zip(folded_kinds(candidates), candidates, strict=True):
        count = counts.get(kind, 0)
        entry = by_kind.get(kind)
        if entry is not None and count >= entry.cap_count:
            excluded.append((item, QuotaCapExceeded(str(entry.kind), entry.cap_count, count + 1)))
        else:
            accepted.append(item)
            counts[kind] = count + 1
    return accepted, excluded


@dataclass(frozen=True, slots=True, init=False)
class CountQuotaSlice:
    """Guarantee and limit item counts per kind around an inner slicer (spec: CountQuotaSlice).

    Phase 1 commits, for each entry with ``require_count > 0``, that kind's top-scoring candidates,
    whatever their tokens. Phase 2 runs ``inner`` on the rest with ``target_tokens`` reduced by the
    committed tokens. Phase 3 drops Phase 2 items of a kind that has reached its ``cap_count``
    (committed items count toward the cap but are never dropped). ``inner`` must not be a
    :class:`~cupel.slicers.KnapsackSlice`; use :class:`CountConstrainedKnapsackSlice` for that.
    Shortfalls and cap exclusions are reported by :meth:`slice_detailed`.
    """

    entries: tuple[CountQuotaEntry, ...]
    inner: Slicer
    scarcity: ScarcityBehavior
    is_count_quota: ClassVar[bool] = True

    def __init__(
        self,
        entries: Iterable[CountQuotaEntry],
        inner: Slicer,
        scarcity: ScarcityBehavior | str = ScarcityBehavior.DEGRADE,
    ) -> None:
        checked_inner = check_slicer("CountQuotaSlice", "inner", inner)
        if isinstance(checked_inner, KnapsackSlice):
            raise InvalidConfigurationError(
                "CountQuotaSlice does not support KnapsackSlice as the inner slicer "
                f"(got {checked_inner!r}); use GreedySlice as the inner slicer, or "
                "CountConstrainedKnapsackSlice for count quotas with knapsack selection"
            )
        object.__setattr__(self, "entries", _check_entries("CountQuotaSlice", entries))
        object.__setattr__(self, "inner", checked_inner)
        object.__setattr__(self, "scarcity", _check_scarcity("CountQuotaSlice", scarcity))

    @property
    def is_quota(self) -> bool:
        """True when the inner slicer is a percentage-quota slicer: its non-monotonicity carries over."""
        return is_quota_slicer(self.inner)

    def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
        return list(self._run(scored, budget, detailed=False).selected)

    def pool_shortfalls(self, scored: Sequence[ScoredItem]) -> tuple[CountRequirementShortfall, ...]:
        """The requirements the whole of ``scored`` cannot meet (raises under THROW); see QuotaSlice."""
        return pool_shortfalls("CountQuotaSlice", scored, self.entries, self.scarcity)

    def for_kind(self, kind: str) -> CountQuotaSlice:
        """This slicer for a partition holding only ``kind`` (folded): its entries for that kind, and
        scarcity left to :meth:`pool_shortfalls`."""
        return CountQuotaSlice(entries_for_kind(self.entries, kind), self.inner, ScarcityBehavior.DEGRADE)

    def slice_detailed(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> SliceOutcome:
        """Select like :meth:`slice`; report cap exclusions, shortfalls and the inner slicer's reasons."""
        return self._run(scored, budget, detailed=True)

    def _run(self, scored: Sequence[ScoredItem], budget: ContextBudget, *, detailed: bool) -> SliceOutcome:
        if not scored or budget.target_tokens <= 0:
            return SliceOutcome(())
        committed = _count_satisfy("CountQuotaSlice", scored, self.entries, self.scarcity)
        residual, residual_budget = _residual_pass(scored, committed, budget)
        inner = run_inner(self.inner, residual, residual_budget, detailed)
        accepted, capped = _enforce_caps(inner.selected, self.entries, committed.counts)
        return SliceOutcome(
            (*committed.items, *accepted),
            (*inner.exclusions, *capped),
            (*committed.shortfalls, *inner.shortfalls),
        )
