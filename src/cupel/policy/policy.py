"""Policy: a pipeline's whole selection behaviour as one immutable value (spec: Policy Sensitivity).

A :class:`Policy` holds what a :class:`~cupel.pipeline.Pipeline` is built from -- scorer, slicer, placer,
deduplication and overflow strategy -- and nothing else: no budget (spec: Explicit Budget Parameter)
and no observer callbacks. Any scorer, slicer or placer the library offers (or any object implementing
the protocols) can be held, so unlike the reference ``CupelPolicy`` a policy can express every slicer,
count-quota slicers included.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cupel.diagnostics.trace import OverflowEvent
from cupel.errors import CupelTypeError
from cupel.model import OverflowStrategy
from cupel.pipeline import Pipeline
from cupel.protocols import Placer, Scorer, Slicer

__all__ = ["Policy", "coerce_overflow_strategy"]


def coerce_overflow_strategy(value: object, owner: str = "Policy.overflow_strategy") -> OverflowStrategy:
    """An :class:`OverflowStrategy`, or its value as a string in any letter case."""
    if isinstance(value, OverflowStrategy):
        return value
    if isinstance(value, str):
        try:
            return OverflowStrategy(value.strip().lower())
        except ValueError:
            pass
    known = ", ".join(repr(strategy.value) for strategy in OverflowStrategy)
    raise CupelTypeError(f"{owner} must be an OverflowStrategy ({known}), got {value!r}")


def _check_component(role: str, value: object, method: str) -> None:
    if not callable(getattr(value, method, None)):
        raise CupelTypeError(f"Policy.{role} must have a {method}() method, got {value!r}")


@dataclass(frozen=True, slots=True)
class Policy:
    """Scorer, slicer, placer, deduplication and overflow strategy, validated at construction.

    ``Policy(RecencyScorer(), GreedySlice(), ChronologicalPlacer())``. Policies compare by value (through
    the components' ``__eq__``) and are hashable when their components are. Build a pipeline with
    :meth:`build_pipeline` or ``Pipeline.from_policy(policy)``; derive a variant with :meth:`replace`.
    """

    scorer: Scorer
    slicer: Slicer
    placer: Placer
    deduplication: bool = True
    overflow_strategy: OverflowStrategy = OverflowStrategy.THROW

    def __post_init__(self) -> None:
        _check_component("scorer", self.scorer, "score")
        _check_component("slicer", self.slicer, "slice")
        _check_component("placer", self.placer, "place")
        if not isinstance(self.deduplication, bool):
            raise CupelTypeError(f"Policy.deduplication must be a bool, got {self.deduplication!r}")
        object.__setattr__(self, "overflow_strategy", coerce_overflow_strategy(self.overflow_strategy))

    def build_pipeline(self, *, on_overflow: Callable[[OverflowEvent], None] | None = None) -> Pipeline:
        """A :class:`~cupel.pipeline.Pipeline` configured exactly as this policy says."""
        return Pipeline(
            self.scorer,
            self.slicer,
            self.placer,
            deduplication=self.deduplication,
            overflow_strategy=self.overflow_strategy,
            on_overflow=on_overflow,
        )

    def replace(self, **changes: Any) -> Policy:
        """A copy with ``changes`` applied (validated again); this policy is left as it is."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_pipeline(cls, pipeline: Pipeline) -> Policy:
        """The policy an existing pipeline runs (its ``on_overflow`` callback is not part of it)."""
        if not isinstance(pipeline, Pipeline):
            raise CupelTypeError(f"pipeline must be a Pipeline, got {type(pipeline).__name__}")
        return cls(
            pipeline.scorer,
            pipeline.slicer,
            pipeline.placer,
            pipeline.deduplication,
            pipeline.overflow_strategy,
        )

    def to_dict(self) -> dict[str, Any]:
        """The policy-file form (see :func:`cupel.policy.policy_to_dict`)."""
        from cupel.policy.files import policy_to_dict

        return policy_to_dict(self)
