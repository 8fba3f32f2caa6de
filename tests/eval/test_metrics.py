"""Every metric pinned on hand-computed selections."""

from __future__ import annotations

import pytest

from cupel.eval.metrics import case_metrics, middle_exposure

TOKENS = [10, 20, 30, 40]  # elements 0..3; total 100


def test_recall_by_items_uses_weights_and_by_tokens_uses_sizes() -> None:
    gold = {1: 1.0, 3: 3.0}
    metrics = case_metrics([0, 1], TOKENS, gold, 100)
    assert metrics.recall_items == pytest.approx(1 / 4)  # weight 1 of 4 kept
    assert metrics.recall_tokens == pytest.approx(20 / 60)  # 20 of 60 gold tokens kept
    assert metrics.all_gold == 0.0
    assert metrics.budget_use == pytest.approx(30 / 100)
    assert metrics.tokens == 30


def test_all_gold_and_full_recall() -> None:
    metrics = case_metrics([3, 1, 0], TOKENS, {1: 1.0, 3: 1.0}, 80)
    assert (metrics.recall_items, metrics.recall_tokens, metrics.all_gold) == (1.0, 1.0, 1.0)
    assert metrics.budget_use == pytest.approx(70 / 80)


def test_middle_exposure_is_the_share_of_kept_gold_tokens_in_the_middle_third() -> None:
    # Window 0,1,2 spans 60 tokens: [0,10) [10,30) [30,60); the middle third is [20, 40).
    assert middle_exposure([0, 1, 2], TOKENS, {1: 1.0}) == pytest.approx(10 / 20)
    assert middle_exposure([0, 1, 2], TOKENS, {2: 1.0}) == pytest.approx(10 / 30)
    assert middle_exposure([0, 1, 2], TOKENS, {0: 1.0}) == 0.0
    # The same items placed gold-first: the gold item sits at [0, 30) and overlaps [20, 40) by 10.
    assert middle_exposure([2, 0, 1], TOKENS, {2: 1.0}) == pytest.approx(10 / 30)


def test_middle_exposure_is_undefined_without_kept_gold() -> None:
    assert middle_exposure([0], TOKENS, {3: 1.0}) is None
    assert middle_exposure([], TOKENS, {3: 1.0}) is None
    assert case_metrics([0], TOKENS, {3: 1.0}, 50).middle_exposure is None


def test_validity_time_and_error_are_carried() -> None:
    metrics = case_metrics([], TOKENS, {0: 1.0}, 50, valid=False, seconds=0.002, error="boom")
    assert metrics.valid == 0.0
    assert metrics.time_ms == pytest.approx(2.0)
    assert metrics.error == "boom"
    assert metrics.recall_items == 0.0
    assert case_metrics([0], TOKENS, {0: 1.0}, 50).valid is None
    assert case_metrics([0], TOKENS, {0: 1.0}, 50, valid=True).valid == 1.0


def test_zero_token_gold_counts_by_presence() -> None:
    assert case_metrics([0], [0, 5], {0: 1.0}, 10).recall_tokens == 1.0
    assert case_metrics([1], [0, 5], {0: 1.0}, 10).recall_tokens == 0.0
