"""DecayScorer, its curves and time providers (spec: Scorers, DecayScorer)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextItem
from cupel.protocols import TimeProvider
from cupel.scorers._base import ScorerBase, check_unit_interval

_ZERO = timedelta(0)


def _positive_duration(owner: str, name: str, value: object) -> timedelta:
    if not isinstance(value, timedelta):
        raise CupelTypeError(f"{owner}: {name} must be a datetime.timedelta, got {value!r}")
    if value <= _ZERO:
        raise InvalidConfigurationError(f"{owner}: {name} must be greater than zero, got {value}")
    return value


@dataclass(frozen=True, slots=True)
class ExponentialCurve:
    """``2 ** (-age / half_life)``: 1.0 at age zero, 0.5 at one half-life."""

    half_life: timedelta

    def __post_init__(self) -> None:
        _positive_duration("ExponentialCurve", "half_life", self.half_life)

    def __call__(self, age: timedelta) -> float:
        return float(2.0 ** (-age.total_seconds() / self.half_life.total_seconds()))


@dataclass(frozen=True, slots=True)
class StepCurve:
    """The score of the first window whose ``max_age`` is strictly greater than the age, else the last.

    ``windows`` are ``(max_age, score)`` pairs ordered youngest first; at least one, every max_age > 0
    and strictly increasing, every score in [0, 1].
    """

    windows: tuple[tuple[timedelta, float], ...]

    def __init__(self, windows: Iterable[tuple[timedelta, float]]) -> None:
        checked: list[tuple[timedelta, float]] = []
        for index, window in enumerate(windows):
            try:
                max_age, score = window
            except (TypeError, ValueError):
                raise CupelTypeError(
                    f"StepCurve: windows[{index}] must be a (max_age, score) pair, got {window!r}"
                ) from None
            max_age = _positive_duration("StepCurve", f"windows[{index}].max_age", max_age)
            if checked and max_age <= checked[-1][0]:
                raise InvalidConfigurationError(
                    f"StepCurve: windows must be ordered youngest first; windows[{index}].max_age "
                    f"{max_age} is not greater than {checked[-1][0]}"
                )
            score = check_unit_interval("StepCurve", f"windows[{index}].score", score)
            checked.append((max_age, score))
        if not checked:
            raise InvalidConfigurationError("StepCurve: windows must contain at least one entry")
        object.__setattr__(self, "windows", tuple(checked))

    def __call__(self, age: timedelta) -> float:
        for max_age, score in self.windows:
            if max_age > age:
                return score
        return self.windows[-1][1]


@dataclass(frozen=True, slots=True)
class WindowCurve:
    """1.0 while ``age < max_age`` (half-open), then 0.0."""

    max_age: timedelta

    def __post_init__(self) -> None:
        _positive_duration("WindowCurve", "max_age", self.max_age)

    def __call__(self, age: timedelta) -> float:
        return 1.0 if age < self.max_age else 0.0


DecayCurve = ExponentialCurve | StepCurve | WindowCurve


class SystemTimeProvider:
    """The system clock, in UTC."""

    __slots__ = ()

    def now(self) -> datetime:
        return datetime.now(UTC)

    def __repr__(self) -> str:
        return "SystemTimeProvider()"

    def __eq__(self, other: object) -> bool:
        return type(other) is SystemTimeProvider

    def __hash__(self) -> int:
        return hash(SystemTimeProvider)


@dataclass(frozen=True, slots=True)
class FixedTimeProvider:
    """Always returns the same instant; for tests and reproducible runs."""

    instant: datetime

    def __post_init__(self) -> None:
        if not isinstance(self.instant, datetime) or self.instant.utcoffset() is None:
            raise InvalidConfigurationError(
                f"FixedTimeProvider: instant must be a timezone-aware datetime, got {self.instant!r}"
            )

    def now(self) -> datetime:
        return self.instant


class DecayScorer(ScorerBase):
    """Absolute time decay of an item's age against ``time_provider.now()``.

    There is no default time provider: pass ``SystemTimeProvider()`` for the system clock or
    ``FixedTimeProvider(instant)`` for reproducible scores. Future-dated items have age zero; items
    without a timestamp score ``null_timestamp_score`` (default 0.5).
    """

    __slots__ = ("curve", "null_timestamp_score", "time_provider")

    time_provider: TimeProvider
    curve: DecayCurve
    null_timestamp_score: float

    def __init__(
        self, time_provider: TimeProvider, curve: DecayCurve, *, null_timestamp_score: float = 0.5
    ) -> None:
        if not callable(getattr(time_provider, "now", None)):
            raise CupelTypeError(
                f"DecayScorer: time_provider must have a now() method, got {time_provider!r}"
            )
        if not isinstance(curve, ExponentialCurve | StepCurve | WindowCurve):
            raise CupelTypeError(
                f"DecayScorer: curve must be an ExponentialCurve, StepCurve or WindowCurve, got {curve!r}"
            )
        self.time_provider = time_provider
        self.curve = curve
        self.null_timestamp_score = check_unit_interval(
            "DecayScorer", "null_timestamp_score", null_timestamp_score
        )

    def _score_at(self, item: ContextItem, now: datetime) -> float:
        if item.timestamp is None:
            return self.null_timestamp_score
        age = max(_ZERO, now - item.timestamp)
        return self.curve(age)

    def _now(self) -> datetime:
        now = self.time_provider.now()
        if not isinstance(now, datetime) or now.utcoffset() is None:
            raise CupelTypeError(
                f"DecayScorer: time_provider.now() must return a timezone-aware datetime, got {now!r}"
            )
        return now

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        return self._score_at(item, self._now())

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        # One clock reading per pass, so every item of a run is aged against the same instant.
        now = self._now()
        return [self._score_at(item, now) for item in items]

    def __repr__(self) -> str:
        return (
            f"DecayScorer({self.time_provider!r}, {self.curve!r}, "
            f"null_timestamp_score={self.null_timestamp_score!r})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DecayScorer) and (
            self.time_provider,
            self.curve,
            self.null_timestamp_score,
        ) == (other.time_provider, other.curve, other.null_timestamp_score)

    def __hash__(self) -> int:
        return hash((DecayScorer, self.curve, self.null_timestamp_score))
