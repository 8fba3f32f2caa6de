"""Aggregates: mean, median and the seeded bootstrap interval."""

from __future__ import annotations

import pytest

from cupel.eval.stats import Bootstrap


def test_mean_median_and_interval() -> None:
    summary = Bootstrap(500, seed=3).summarise([0.0, 0.5, 1.0, 1.0])
    assert summary.n == 4
    assert summary.mean == pytest.approx(0.625)
    assert summary.median == pytest.approx(0.75)
    assert summary.ci_low is not None and summary.ci_high is not None
    assert 0.0 <= summary.ci_low <= summary.mean <= summary.ci_high <= 1.0
    assert summary == Bootstrap(500, seed=3).summarise([0.0, 0.5, 1.0, 1.0])


def test_constant_values_have_a_point_interval() -> None:
    summary = Bootstrap(200).summarise([1.0] * 10)
    assert (summary.ci_low, summary.ci_high) == (1.0, 1.0)


def test_empty_and_single() -> None:
    assert Bootstrap().summarise([]).mean is None
    single = Bootstrap().summarise([0.4])
    assert (single.mean, single.median, single.ci_low, single.ci_high) == (0.4, 0.4, 0.4, 0.4)


def test_interval_narrows_with_more_data() -> None:
    bootstrap = Bootstrap(400, seed=1)
    small = bootstrap.summarise([0.0, 1.0] * 5)
    large = bootstrap.summarise([0.0, 1.0] * 100)
    assert small.ci_low is not None and small.ci_high is not None
    assert large.ci_low is not None and large.ci_high is not None
    assert large.ci_high - large.ci_low < small.ci_high - small.ci_low
