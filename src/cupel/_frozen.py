"""Immutable records and mappings of the data model, built without :mod:`dataclasses` or :mod:`typing`
(which load ``inspect``, ``ast`` and ``re``: most of what ``import cupel`` would cost otherwise).

A :class:`Frozen` record lists its fields in ``__match_args__`` (names starting with ``_`` are left out
of ``repr`` and comparisons) and gets what ``@dataclass(frozen=True, slots=True)`` generates: assignment
and deletion raise :class:`dataclasses.FrozenInstanceError`, ``repr`` lists the shown fields, pickling
and copying keep every field, and ``__dataclass_fields__`` is built on first access, so
:func:`dataclasses.fields`, :func:`dataclasses.asdict` and :func:`dataclasses.is_dataclass` keep working.
Equality and hashing are each class's own (identity unless it defines them).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from reprlib import recursive_repr

TYPE_CHECKING = False  # not typing's: importing typing costs more than the rest of ``import cupel``
if TYPE_CHECKING:
    from dataclasses import Field
    from typing import Any, ClassVar, TypeVar

    K = TypeVar("K")
    V = TypeVar("V")
else:
    K = V = object  # ``Mapping[K, V]`` below is then a plain alias of Mapping at run time

__all__ = ["EMPTY_MAP", "FieldSpec", "Frozen", "ReadOnlyMap"]

#: One field: (name, annotation as written, shown in repr, compared by eq/hash).
FieldSpec = tuple[str, str, bool, bool]


def _frozen_error(action: str, name: str) -> Exception:
    from dataclasses import FrozenInstanceError  # only on the error path

    return FrozenInstanceError(f"cannot {action} field {name!r}")


class _DataclassFields:
    """``__dataclass_fields__``: real :class:`dataclasses.Field` objects, built on first access."""

    def __get__(self, instance: object, owner: type[Frozen]) -> dict[str, Field[Any]]:
        import dataclasses

        specs = [
            (name, kind, dataclasses.field(repr=shown, compare=compared))
            for name, kind, shown, compared in owner._field_specs
        ]
        fields: dict[str, Field[Any]] = vars(dataclasses.make_dataclass(owner.__name__, specs, frozen=True))[
            "__dataclass_fields__"
        ]
        type.__setattr__(owner, "__dataclass_fields__", fields)  # later lookups read the dict
        return fields


class Frozen:
    """Base of the immutable records: subclasses set ``__slots__`` and ``__match_args__``, annotated."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    _field_specs: ClassVar[tuple[FieldSpec, ...]] = ()
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]] = _DataclassFields()  # type: ignore[assignment]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        annotations = cls.__annotations__
        cls._field_specs = tuple(
            (name, annotations[name], not name.startswith("_"), not name.startswith("_"))
            for name in cls.__match_args__
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise _frozen_error("assign to", name)

    def __delattr__(self, name: str) -> None:
        raise _frozen_error("delete", name)

    def __getstate__(self) -> list[object]:
        return [getattr(self, spec[0]) for spec in self._field_specs]

    def __setstate__(self, state: list[object]) -> None:
        for spec, value in zip(self._field_specs, state, strict=False):
            object.__setattr__(self, spec[0], value)

    @recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name, _, show, _ in self._field_specs if show)
        return f"{type(self).__qualname__}({shown})"


class ReadOnlyMap(Mapping[K, V]):
    """A read-only, picklable view over a private copy of a mapping."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        self._data: dict[K, V] = dict(data)

    def __getitem__(self, key: K) -> V:
        return self._data[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __repr__(self) -> str:
        return repr(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._data == dict(other.items())
        return NotImplemented

    def __reduce__(self) -> tuple[type, tuple[dict[K, V]]]:
        return (type(self), (self._data,))


#: The shared empty map: items and budgets without metadata or reserved slots.
EMPTY_MAP: ReadOnlyMap[Any, Any] = ReadOnlyMap()
