"""The JSON methods every wire-format type shares, backed by :mod:`cupel.wire`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Self


class WireFormat:
    """Adds ``to_dict``/``to_json`` and ``from_dict``/``from_json``.

    ``_wire`` names the converters in :mod:`cupel.wire`: ``"item"`` means ``item_to_dict`` and
    ``item_from_dict``. They are looked up at call time because :mod:`cupel.wire` imports the types.
    """

    __slots__ = ()
    _wire: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        """The JSON wire form (see :mod:`cupel.wire`)."""
        from cupel import wire

        data: dict[str, Any] = getattr(wire, f"{self._wire}_to_dict")(self)
        return data

    def to_json(self, *, indent: int | None = None) -> str:
        from cupel import wire

        return wire.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Read the JSON wire form; errors name the offending field."""
        from cupel import wire

        value: Self = getattr(wire, f"{cls._wire}_from_dict")(data)
        return value

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        """Read strict JSON text; every problem raises a :class:`~cupel.errors.CupelError`."""
        from cupel import wire

        return cls.from_dict(wire.loads(text))
