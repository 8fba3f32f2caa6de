"""Token budget for context assembly (CFS-021 §3)."""

from __future__ import annotations

from dataclasses import dataclass, field

from cupel.assembly._validate import require_int
from cupel.errors import InvalidConfigurationError

__all__ = ["TokenBudget"]


@dataclass(frozen=True, slots=True)
class TokenBudget:
    """How many tokens the retrieved context may use (CFS-021 §3).

    ``available = total_tokens - reserved_system - reserved_query - reserved_response``; a total smaller
    than the reserves is an :class:`~cupel.errors.InvalidConfigurationError` rather than the spec's unsigned
    underflow. ``per_doc_overhead`` is charged for every ``[DOC: path]`` marker the context will contain.
    """

    total_tokens: int
    reserved_system: int = 200
    reserved_query: int = 100
    reserved_response: int = 500
    per_doc_overhead: int = 10
    available: int = field(init=False)

    def __post_init__(self) -> None:
        for name in (
            "total_tokens",
            "reserved_system",
            "reserved_query",
            "reserved_response",
            "per_doc_overhead",
        ):
            require_int("TokenBudget", name, getattr(self, name))
        reserved = self.reserved_system + self.reserved_query + self.reserved_response
        if self.total_tokens < reserved:
            raise InvalidConfigurationError(
                f"TokenBudget.total_tokens must be at least the reserved tokens ({reserved} = "
                f"reserved_system {self.reserved_system} + reserved_query {self.reserved_query} + "
                f"reserved_response {self.reserved_response}), got {self.total_tokens}"
            )
        object.__setattr__(self, "available", self.total_tokens - reserved)

    def to_bytes(self) -> bytes:
        """A canonical encoding of the budget, the input of the cache's budget hash (CFS-021 Caching)."""
        values = (
            self.total_tokens,
            self.reserved_system,
            self.reserved_query,
            self.reserved_response,
            self.per_doc_overhead,
        )
        return ("TokenBudget/1:" + ",".join(str(value) for value in values)).encode("ascii")
