"""Aggregates: mean, median and a seeded percentile-bootstrap 95% confidence interval of the mean."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

__all__ = ["Bootstrap", "Summary"]


@dataclass(frozen=True, slots=True)
class Summary:
    """``n`` values' mean, median and 95% CI of the mean (``None`` fields when ``n`` is 0)."""

    n: int
    mean: float | None
    median: float | None
    ci_low: float | None
    ci_high: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "mean": self.mean,
            "median": self.median,
            "ci95": None if self.ci_low is None else [self.ci_low, self.ci_high],
        }


class Bootstrap:
    """Percentile bootstrap with shared resamples: every series of length ``n`` is resampled with the
    same index draws (paired across policies), drawn once from ``seed``."""

    def __init__(self, resamples: int = 1000, seed: int = 0) -> None:
        if resamples < 0:
            raise ValueError(f"resamples must be >= 0, got {resamples}")
        self.resamples = resamples
        self.seed = seed
        self._draws: dict[int, list[itemgetter[Any]]] = {}

    def _getters(self, n: int) -> list[itemgetter[Any]]:
        if n not in self._draws:
            rng = random.Random(self.seed * 1_000_003 + n)
            population = range(n)
            # itemgetter of two or more indices returns a tuple; of one, a bare value -- n >= 2 here.
            self._draws[n] = [itemgetter(*rng.choices(population, k=n)) for _ in range(self.resamples)]
        return self._draws[n]

    def summarise(self, values: Sequence[float]) -> Summary:
        n = len(values)
        if n == 0:
            return Summary(0, None, None, None, None)
        mean = math.fsum(values) / n
        median = statistics.median(values)
        if n == 1 or self.resamples == 0:
            return Summary(n, mean, median, mean, mean)
        means = sorted(math.fsum(getter(values)) / n for getter in self._getters(n))
        low = means[int(0.025 * (len(means) - 1))]
        high = means[math.ceil(0.975 * (len(means) - 1))]
        return Summary(n, mean, median, low, high)
