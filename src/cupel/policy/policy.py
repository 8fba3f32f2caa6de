"""Policy: a pipeline's whole selection behaviour as one immutable value (spec: Policy Sensitivity).

A :class:`Policy` holds what a :class:`~cupel.pipeline.Pipeline` is built from -- scorer, slicer, placer,
deduplication and overflow strategy -- and nothing else: no budget (spec: Explicit Budget Parameter)
and no observer callbacks. Any scorer, slicer or placer the library offers (or any object implementing
the protocols) can be held, so unlike the reference ``CupelPolicy`` a policy can express every slicer,
count-quota slicers included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cupel._checks import check_bool, check_component, coerce_overflow_strategy
from cupel._frozen import dataclass
from cupel.errors import CupelTypeError
from cupel.model import OverflowStrategy
from cupel.pipeline import Pipeline
from cupel.policy.chat_settings import ChatSettings
from cupel.protocols import Placer, Scorer, Slicer

if TYPE_CHECKING:
    # Annotations only: building a pipeline from a policy does not load the diagnostics.
    from cupel.diagnostics.trace import OverflowEvent

__all__ = ["FORMAT_VERSION", "Policy", "policy_to_dict"]

#: The policy file format version this package reads and writes.
FORMAT_VERSION = 1


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
    #: How chat transcripts are selected (:func:`cupel.chat.select_messages`); the pipeline ignores it.
    #: ``None`` means the defaults (:class:`~cupel.policy.ChatSettings` ``()``).
    chat: ChatSettings | None = None

    def __post_init__(self) -> None:
        check_component("Policy", "scorer", self.scorer, "score")
        check_component("Policy", "slicer", self.slicer, "slice")
        check_component("Policy", "placer", self.placer, "place")
        check_bool("Policy", "deduplication", self.deduplication)
        strategy = coerce_overflow_strategy(self.overflow_strategy, "Policy.overflow_strategy")
        object.__setattr__(self, "overflow_strategy", strategy)
        if self.chat is not None and not isinstance(self.chat, ChatSettings):
            raise CupelTypeError(f"Policy.chat must be a ChatSettings or None, got {self.chat!r}")
        if self.chat == ChatSettings():
            # One canonical form: the default settings are no settings.
            object.__setattr__(self, "chat", None)

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
        import dataclasses  # on first use: creating a policy does not import it

        return dataclasses.replace(self, **changes)

    def with_query(self, query: str | None) -> Policy:
        """This policy with ``query`` bound into its relevance terms (itself for None or without one).

        For callers that cannot pass a query per call.
        """
        from cupel.scorers._base import bind_query

        scorer = bind_query(self.scorer, query)
        return self if scorer is self.scorer else self.replace(scorer=scorer)

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
        return policy_to_dict(self)


def policy_to_dict(policy: Policy) -> dict[str, Any]:
    """The canonical policy document for ``policy``: plain values, keys in a fixed order.

    ``extends`` is never written (the result is self-contained) and a DecayScorer's clock is not part
    of the document. Raises :class:`~cupel.errors.CupelTypeError` for a component that is neither
    built in nor registered with a ``to_config``.
    """
    if not isinstance(policy, Policy):
        raise CupelTypeError(f"policy must be a Policy, got {type(policy).__name__}")
    # The registry (and every built-in type's reader and writer) only when a policy is written.
    from cupel.policy.registry import _dump_placer, _dump_scorers, _dump_slicer

    document = {
        "version": FORMAT_VERSION,
        "scorers": _dump_scorers(policy.scorer),
        "slicer": _dump_slicer(policy.slicer),
        "placer": _dump_placer(policy.placer),
        "deduplication": policy.deduplication,
        "overflow_strategy": policy.overflow_strategy.value,
    }
    if policy.chat is not None:
        document["chat"] = policy.chat.to_dict()
    return document
