"""ChatOptions: how messages are costed and pinned when a transcript becomes context items."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cupel._frozen import dataclass, field
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import _ReadOnlyMap

__all__ = ["DEFAULT_PART_COST", "LOW_DETAIL_IMAGE_COST", "ChatOptions"]

DEFAULT_PART_COST = 765
"""Tokens charged for one image or other non-text part: OpenAI's price of a 1024x1024 high-detail image."""

LOW_DETAIL_IMAGE_COST = 85
"""Tokens charged for an image part with ``"detail": "low"``: OpenAI's fixed low-detail price."""


def _check_count(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CupelTypeError(f"ChatOptions.{name} must be an int, got {value!r}")
    if value < 0:
        raise InvalidConfigurationError(f"ChatOptions.{name} must be >= 0, got {value}")


@dataclass(frozen=True, slots=True)
class ChatOptions:
    """Token accounting and pinning for chat conversion; every field has a documented default.

    A message costs ``message_overhead`` plus its counted text: content text parts, ``name`` (plus
    ``name_overhead``), ``refusal``, and each tool call's name and arguments (plus
    ``tool_call_overhead``). Each non-text part (image, audio, file, ...) costs
    ``low_detail_image_cost`` if it is an image marked ``"detail": "low"``, else
    ``part_costs.get(type, part_cost)``; a base64 payload's length never counts.

    ``pin_system`` pins system and developer messages; ``pin_last_user`` pins the unit holding the last
    user message, so trimming never drops the turn the model is asked to answer.
    """

    message_overhead: int = 4
    name_overhead: int = 1
    tool_call_overhead: int = 3
    part_cost: int = DEFAULT_PART_COST
    low_detail_image_cost: int = LOW_DETAIL_IMAGE_COST
    part_costs: Mapping[str, int] = field(default_factory=lambda: _ReadOnlyMap[str, int]())
    pin_system: bool = True
    pin_last_user: bool = True

    def __post_init__(self) -> None:
        for name in ("message_overhead", "name_overhead", "tool_call_overhead", "part_cost"):
            _check_count(name, getattr(self, name))
        _check_count("low_detail_image_cost", self.low_detail_image_cost)
        if not isinstance(self.part_costs, Mapping):
            raise CupelTypeError(
                f"ChatOptions.part_costs must be a mapping of part type to tokens, got {self.part_costs!r}"
            )
        costs: dict[str, int] = {}
        for part_type, cost in self.part_costs.items():
            if not isinstance(part_type, str):
                raise CupelTypeError(
                    f"ChatOptions.part_costs keys must be part type strings, got {part_type!r}"
                )
            _check_count(f"part_costs[{part_type!r}]", cost)
            costs[part_type] = cost
        object.__setattr__(self, "part_costs", _ReadOnlyMap(costs))
        for name in ("pin_system", "pin_last_user"):
            value: Any = getattr(self, name)
            if not isinstance(value, bool):
                raise CupelTypeError(f"ChatOptions.{name} must be a bool, got {value!r}")

    def cost_of_part(self, part_type: str, *, low_detail: bool = False) -> int:
        """Tokens charged for one non-text part of ``part_type``."""
        if low_detail:
            return self.low_detail_image_cost
        return self.part_costs.get(part_type, self.part_cost)
