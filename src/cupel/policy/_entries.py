"""The component registries: type name -> how to build, write and describe a scorer, slicer or placer.

:mod:`cupel.policy.registry` adds to them (``register_scorer``...), :mod:`cupel.policy._builtins` fills
them with the built-in types, :mod:`cupel.policy._readers` and :mod:`cupel.policy._writers` use them.
"""

from __future__ import annotations

import importlib
from _thread import allocate_lock  # threading.Lock itself, without importing threading
from collections.abc import Callable, Mapping
from typing import Any

from cupel._frozen import dataclass
from cupel.errors import InvalidConfigurationError
from cupel.protocols import TimeProvider

_Params = Mapping[str, Any]

#: ScarcityBehavior's values (default first), for the schema of count-quota slicers.
SCARCITY_VALUES = ("degrade", "throw")


def class_path(cls: type) -> str:
    """``module.QualifiedName``: how a built-in component's class is named before it is imported."""
    return f"{cls.__module__}.{cls.__qualname__}"


def component_class(cls: type | str) -> type:
    """The class itself, importing its module first when ``cls`` is a class path."""
    if isinstance(cls, type):
        return cls
    module, _, name = cls.rpartition(".")
    value = getattr(importlib.import_module(module), name)
    assert isinstance(value, type), cls
    return value


@dataclass(frozen=True, slots=True)
class _Reader:
    """What reading needs besides the document: the clock for DecayScorer."""

    time_provider: TimeProvider


@dataclass(frozen=True, slots=True)
class _Entry:
    """One component type: how to build it from a table and how to write it back."""

    name: str
    # A class, or a built-in's class path (``class_path``), imported only when a policy uses it.
    cls: type | str | None
    build: Callable[[_Params, str, _Reader], Any]
    dump: Callable[[Any], dict[str, Any]] | None
    # A built-in type's parameters as JSON Schemas, in document order; None for custom types, whose
    # parameters go to their factory unchecked. The loader's key check and policy.schema.json both
    # come from here.
    params: Mapping[str, Any] | None
    builtin: bool
    required: tuple[str, ...] = ()
    description: str = ""

    @property
    def keys(self) -> tuple[str, ...] | None:
        """The parameters a built-in type allows; None for custom types."""
        return None if self.params is None else tuple(self.params)


class _Registry:
    """Type name -> component, for one role (scorer, slicer or placer). Thread-safe."""

    def __init__(self, role: str) -> None:
        self.role = role
        self._lock = allocate_lock()
        self._by_name: dict[str, _Entry] = {}
        self._by_class: dict[type | str, _Entry] = {}

    def add(self, entry: _Entry, *, replace: bool = False) -> None:
        with self._lock:
            current = self._by_name.get(entry.name)
            if current is not None and (current.builtin or not replace):
                what = "a built-in" if current.builtin else "an already registered"
                raise InvalidConfigurationError(
                    f"{entry.name!r} is {what} {self.role} type"
                    + ("" if current.builtin else "; pass replace=True to replace it")
                )
            if entry.cls is not None:
                owner = self._by_class.get(entry.cls)
                if owner is None and isinstance(entry.cls, type):
                    owner = self._by_class.get(class_path(entry.cls))
                if owner is not None and owner.name != entry.name:
                    raise InvalidConfigurationError(
                        f"{_class_name(entry.cls)} is already registered as {self.role} type {owner.name!r}"
                    )
            if current is not None and current.cls is not None:
                del self._by_class[current.cls]
            self._by_name[entry.name] = entry
            if entry.cls is not None:
                self._by_class[entry.cls] = entry

    def remove(self, name: str) -> None:
        with self._lock:
            entry = self._by_name.get(_type_name(name))
            if entry is None or entry.builtin:
                raise InvalidConfigurationError(f"{name!r} is not a registered custom {self.role} type")
            del self._by_name[entry.name]
            if entry.cls is not None:
                del self._by_class[entry.cls]

    def get(self, name: str) -> _Entry | None:
        with self._lock:
            return self._by_name.get(name)

    def for_object(self, value: object) -> _Entry | None:
        cls = type(value)
        with self._lock:
            entry = self._by_class.get(cls)
            return self._by_class.get(class_path(cls)) if entry is None else entry

    def names(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(sorted(self._by_name))


_SCORERS = _Registry("scorer")
_SLICERS = _Registry("slicer")
_PLACERS = _Registry("placer")


def _type_name(name: str) -> str:
    """Type and preset names compare case-insensitively, with ``-`` and ``_`` interchangeable.

    :func:`cupel.policy._readers.spelled` says the same in policy.schema.json.
    """
    return name.strip().lower().replace("-", "_")


def _class_name(cls: type | str) -> str:
    return cls.__name__ if isinstance(cls, type) else cls.rpartition(".")[2]
