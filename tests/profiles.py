"""How many examples the Hypothesis properties run: a quick profile by default, a thorough one on request.

``CUPEL_HYPOTHESIS_PROFILE=thorough python -m pytest`` runs every property with the number of examples
written next to it (and 100 where none is written); the default ``quick`` profile runs a quarter of that
(at least 10, or the written number when it is smaller), so the whole suite stays within its time limit.
``CI`` set in the environment derandomizes either profile. The profiles are registered in ``conftest.py``.
"""

from __future__ import annotations

import os

#: The profile names ``CUPEL_HYPOTHESIS_PROFILE`` accepts.
PROFILES = ("quick", "thorough")

PROFILE = os.environ.get("CUPEL_HYPOTHESIS_PROFILE", "quick")
if PROFILE not in PROFILES:
    raise ValueError(f"CUPEL_HYPOTHESIS_PROFILE: expected one of {', '.join(PROFILES)}, got {PROFILE!r}")

#: Examples for a property that names no number.
THOROUGH_EXAMPLES = 100


def examples(thorough: int) -> int:
    """``max_examples`` for a property written to run ``thorough`` examples, under the active profile."""
    if PROFILE == "thorough":
        return thorough
    return max(min(thorough, 10), thorough // 4)
