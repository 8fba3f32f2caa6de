"""Placers: decide the final order of the context window (spec: Placers)."""

from cupel.placers.chronological import ChronologicalPlacer
from cupel.placers.u_shaped import UShapedPlacer

__all__ = ["ChronologicalPlacer", "UShapedPlacer"]
