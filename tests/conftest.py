"""Shared test configuration."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from tests.numeric_paths import always_fast  # noqa: F401  (a fixture shared by the numpy-path tests)

settings.register_profile(
    "default", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("ci", max_examples=100, deadline=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")
