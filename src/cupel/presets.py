"""The policy presets, as ``cupel.presets.chat()`` etc.: :mod:`cupel.policy.presets` under a shorter name."""

from __future__ import annotations

from cupel.policy import presets as _presets
from cupel.policy.presets import *  # noqa: F403

__all__ = _presets.__all__
