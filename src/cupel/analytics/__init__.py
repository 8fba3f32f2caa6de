"""Analytics: budget simulation, policy sensitivity and report metrics (spec: Budget Simulation,
Policy Sensitivity; Cupel.Testing notes on analytics)."""

from cupel.analytics.report_analytics import (
    KindQuotaUtilization,
    QuotaMode,
    budget_utilization,
    kind_diversity,
    quota_utilization,
    timestamp_coverage,
)
from cupel.analytics.sensitivity import (
    MINIMUM_VARIANTS_MESSAGE,
    ItemStatus,
    PolicySensitivityDiffEntry,
    PolicySensitivityReport,
    policy_sensitivity,
    policy_sensitivity_from_pipelines,
    policy_sensitivity_from_reports,
)
from cupel.analytics.simulation import (
    MARGINAL_ITEMS_MONOTONICITY_MESSAGE,
    MIN_BUDGET_MONOTONICITY_MESSAGE,
    find_min_budget_for,
    get_marginal_items,
)

__all__ = [
    "MARGINAL_ITEMS_MONOTONICITY_MESSAGE",
    "MINIMUM_VARIANTS_MESSAGE",
    "MIN_BUDGET_MONOTONICITY_MESSAGE",
    "ItemStatus",
    "KindQuotaUtilization",
    "PolicySensitivityDiffEntry",
    "PolicySensitivityReport",
    "QuotaMode",
    "budget_utilization",
    "find_min_budget_for",
    "get_marginal_items",
    "kind_diversity",
    "policy_sensitivity",
    "policy_sensitivity_from_pipelines",
    "policy_sensitivity_from_reports",
    "quota_utilization",
    "timestamp_coverage",
]
