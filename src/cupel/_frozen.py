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

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import repeat
from reprlib import recursive_repr

TYPE_CHECKING = False  # not typing's: importing typing costs more than the rest of ``import cupel``
if TYPE_CHECKING:
    from dataclasses import Field
    from typing import Any, ClassVar, TypeVar

    K = TypeVar("K")
    V = TypeVar("V")
else:
    K = V = object  # ``Mapping[K, V]`` below is then a plain alias of Mapping at run time

__all__ = [
    "EMPTY_MAP",
    "FieldSpec",
    "Frozen",
    "MadeOnRead",
    "ReadOnlyMap",
    "Record",
    "dataclass",
    "field",
    "made_on_read",
    "made_on_read_fields",
]

#: One field: (name, annotation as written, shown in repr, compared by eq/hash).
FieldSpec = tuple[str, str, bool, bool]


def _frozen_error(action: str, name: str) -> Exception:
    from dataclasses import FrozenInstanceError  # only on the error path

    return FrozenInstanceError(f"cannot {action} field {name!r}")


class _DataclassInfo:
    """``__dataclass_fields__`` and ``__dataclass_params__``: those of an equivalent dataclass, built on
    first access (real :class:`dataclasses.Field` objects with the record's defaults), so that
    :mod:`dataclasses` functions work and a real dataclass can subclass a record."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __get__(self, instance: object, owner: type[Record]) -> Any:
        import dataclasses

        defaults = owner.__dict__.get("_field_defaults", {})
        specs = []
        for name, kind, shown, compared in owner._field_specs:
            default = defaults.get(name, _NO_VALUE)
            if isinstance(default, _Factory):
                made = dataclasses.field(default_factory=default.factory, repr=shown, compare=compared)
            elif default is not _NO_VALUE:
                made = dataclasses.field(default=default, repr=shown, compare=compared)
            else:
                made = dataclasses.field(repr=shown, compare=compared)
            specs.append((name, kind, made))
        twin = vars(dataclasses.make_dataclass(owner.__name__, specs, frozen=issubclass(owner, Frozen)))
        if owner is not Record and owner is not Frozen:  # the bases' own values would shadow this
            type.__setattr__(owner, "__dataclass_fields__", twin["__dataclass_fields__"])
            type.__setattr__(owner, "__dataclass_params__", twin["__dataclass_params__"])
        return twin[self.attribute]


class Record:
    """Base of the records: subclasses set ``__slots__`` and ``__match_args__``, annotated."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    _field_specs: ClassVar[tuple[FieldSpec, ...]] = ()
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]] = _DataclassInfo("__dataclass_fields__")  # type: ignore[assignment]
    __dataclass_params__: ClassVar[Any] = _DataclassInfo("__dataclass_params__")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        annotations: dict[str, str] = {}
        for klass in reversed(cls.__mro__):  # a subclass may annotate only its own fields
            annotations.update(vars(klass).get("__annotations__", {}))
        cls._field_specs = tuple(
            (name, annotations[name], not name.startswith("_"), not name.startswith("_"))
            for name in cls.__match_args__
        )

    def __getstate__(self) -> list[object]:
        return [getattr(self, spec[0]) for spec in self._field_specs]

    def __setstate__(self, state: list[object]) -> None:
        for spec, value in zip(self._field_specs, state, strict=False):
            object.__setattr__(self, spec[0], value)

    @recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name, _, show, _ in self._field_specs if show)
        return f"{type(self).__qualname__}({shown})"


class Frozen(Record):
    """Base of the immutable records: assignment and deletion raise, as a frozen dataclass's do."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise _frozen_error("assign to", name)

    def __delattr__(self, name: str) -> None:
        raise _frozen_error("delete", name)


class _Factory:
    """A field's ``default_factory`` (what :func:`field` returns)."""

    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], object]) -> None:
        self.factory = factory


def _field(*, default_factory: Callable[[], object]) -> Any:
    """Run-time twin of :func:`dataclasses.field` for :func:`dataclass` records (``default_factory`` only)."""
    return _Factory(default_factory)


def _dataclass(*, frozen: bool = False, slots: bool = False) -> Callable[[type], type]:
    """Run-time twin of ``@dataclasses.dataclass(frozen=..., slots=True)``, without importing dataclasses.

    Modules import it as ``cupel._frozen.dataclass``, which type checkers see as the real decorator.
    The class is rebuilt on :class:`Frozen` (or :class:`Record`) with ``__slots__``: one compiled
    ``__init__`` (defaults, factories, then ``__post_init__``), ``__eq__`` field by field for the same
    class, ``__hash__`` of the fields when frozen (``None`` otherwise), a dataclass ``repr``; a class's
    own methods win, as with dataclasses.
    """
    if not slots:
        raise TypeError("cupel._frozen.dataclass builds slotted records only (slots=True)")

    def wrap(cls: type) -> type:
        return _build_record(cls, frozen)

    return wrap


def _build_record(cls: type, frozen: bool) -> type:
    if any(getattr(base, "_field_specs", ()) for base in cls.__bases__):
        raise TypeError(f"{cls.__qualname__}: a record cannot extend another record's fields")
    own = cls.__dict__
    annotations: dict[str, str] = own.get("__annotations__", {})
    names = tuple(name for name, kind in annotations.items() if not str(kind).startswith("ClassVar"))
    namespace = {key: value for key, value in own.items() if key not in names}
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    namespace["__slots__"] = namespace["__match_args__"] = names
    defaults = {name: own[name] for name in names if name in own}
    if "__init__" not in own:
        namespace["__init__"] = _make_init(
            cls.__qualname__, names, defaults, hasattr(cls, "__post_init__"), frozen
        )
    if "__eq__" not in own:
        namespace["__eq__"] = _record_eq
        if "__hash__" not in own or own["__hash__"] is None:
            namespace["__hash__"] = _record_hash if frozen else None
    bases = (*[base for base in cls.__bases__ if base is not object], Frozen if frozen else Record)
    record: type = type(cls)(cls.__name__, bases, namespace)
    record._field_specs = tuple((name, annotations[name], True, True) for name in names)  # type: ignore[attr-defined]
    record._field_defaults = defaults  # type: ignore[attr-defined]
    return record


def _make_init(
    qualname: str, names: tuple[str, ...], defaults: dict[str, object], post_init: bool, frozen: bool
) -> Callable[..., None]:
    scope: dict[str, object] = {"_set": object.__setattr__, "_none": _NO_VALUE}
    parameters = []
    body = []
    # As dataclasses does: a frozen record's fields are set through object.__setattr__, a mutable
    # record's by plain assignment (several times faster per field on hot paths such as parsing).
    store = "_set(self, {name!r}, {value})" if frozen else "self.{name} = {value}"
    for name in names:
        default = defaults.get(name, _NO_VALUE)
        if isinstance(default, _Factory):
            scope[f"_factory_{name}"] = default.factory
            parameters.append(f"{name}=_none")
            body.append(store.format(name=name, value=f"_factory_{name}() if {name} is _none else {name}"))
            continue
        if default is not _NO_VALUE:
            scope[f"_default_{name}"] = default
            parameters.append(f"{name}=_default_{name}")
        else:
            parameters.append(name)
        body.append(store.format(name=name, value=name))
    if post_init:
        body.append("self.__post_init__()")
    source = f"def __init__(self, {', '.join(parameters)}):\n    " + "\n    ".join(body or ["pass"])
    exec(source, scope)  # one small function per record: what dataclasses does, for __init__ alone
    init: Callable[..., None] = scope["__init__"]  # type: ignore[assignment]
    init.__qualname__ = f"{qualname}.__init__"
    return init


def _record_values(record: Record) -> tuple[object, ...]:
    return tuple([getattr(record, spec[0]) for spec in record._field_specs])


def _record_eq(self: Record, other: object) -> object:
    if other.__class__ is self.__class__:
        assert isinstance(other, Record)
        return _record_values(self) == _record_values(other)
    return NotImplemented


def _record_hash(self: Record) -> int:
    return hash(_record_values(self))


_NO_VALUE = object()


def made_on_read_fields(
    defaults: Mapping[str, object] | None = None, /, **makers: Callable[[Any], object]
) -> Callable[[Any, str], Any]:
    """A record's ``__getattr__`` for fields a trusted batch may leave unset (``cupel._trusted``): field
    ``name`` is then ``makers[name](record)`` (or ``defaults[name]``), made when first read and kept in
    its slot (two threads reading it first may each make it, equal values, and one is kept); any other
    name is missing."""
    fixed = {} if defaults is None else dict(defaults)

    def __getattr__(self: Any, name: str) -> Any:
        make = makers.get(name)
        if make is not None:
            value = make(self)
        elif name in fixed:
            value = fixed[name]
        else:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        object.__setattr__(self, name, value)  # into the slot, past the frozen record's guard
        return value

    return __getattr__


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


class MadeOnRead(ReadOnlyMap[K, V]):
    """A :class:`ReadOnlyMap` whose dict is ``make(key)``, made when the map is first read.

    For maps a library builds by the thousand and few callers open (a chat report's item metadata):
    ``make`` must return a new dict, the same for the same key every time, from values that no longer
    change. The map holds ``make`` and ``key`` (and what ``make`` refers to) as long as it lives, read
    or not (a thread may be making the dict while another makes it too). It pickles and copies as a
    plain :class:`ReadOnlyMap`.
    """

    __slots__ = ("_key", "_make")
    _key: Any
    _make: Callable[[Any], dict[K, V]]

    if not TYPE_CHECKING:  # for type checkers ``_data`` is simply there
        __getattr__ = made_on_read_fields(_data=lambda self: self._make(self._key))

    def __reduce__(self) -> tuple[type, tuple[dict[K, V]]]:
        return (ReadOnlyMap, (self._data,))


_set_make = MadeOnRead.__dict__["_make"].__set__
_set_key = MadeOnRead.__dict__["_key"].__set__


def made_on_read(
    make: Callable[[Any], dict[K, V]], keys: Iterable[Any], count: int
) -> list[ReadOnlyMap[K, V]]:
    """``count`` maps, the ``n``-th ``make(keys[n])`` when first read (:class:`MadeOnRead`), made in
    C-level passes, with no Python-level call per map."""
    maps: list[ReadOnlyMap[K, V]] = list(map(object.__new__, repeat(MadeOnRead, count)))
    deque(map(_set_make, maps, repeat(make)), maxlen=0)
    deque(map(_set_key, maps, keys), maxlen=0)
    return maps


if TYPE_CHECKING:  # the real decorators, so that type checkers understand the records
    from dataclasses import dataclass as dataclass
    from dataclasses import field as field
else:
    dataclass, field = _dataclass, _field
