"""Shared test configuration."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from tests.numeric_paths import always_fast  # noqa: F401  (a fixture shared by the numpy-path tests)
from tests.profiles import PROFILE, THOROUGH_EXAMPLES, examples

# quick (the default) or thorough, as CUPEL_HYPOTHESIS_PROFILE chooses (tests/profiles.py); CI derandomizes.
settings.register_profile(
    PROFILE,
    max_examples=examples(THOROUGH_EXAMPLES),
    deadline=None,
    derandomize=bool(os.environ.get("CI")),
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(PROFILE)
