"""Custom scorer, slicer and placer types for policy files: register, unregister, list.

Every component in a policy file is ``{type = "name", ...}`` (or just ``"name"``). The built-in types
are registered by :mod:`cupel.policy._builtins`; custom ones are added with :func:`register_scorer`,
:func:`register_slicer` and :func:`register_placer`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError

# The one door to the registries: importing _builtins fills them, and the readers and writers the
# rest of the package uses are re-exported from here so that nothing uses an empty registry.
from cupel.policy import _builtins  # noqa: F401
from cupel.policy._entries import _PLACERS as _PLACERS
from cupel.policy._entries import _SCORERS as _SCORERS
from cupel.policy._entries import _SLICERS as _SLICERS
from cupel.policy._entries import _Entry, _Params, _Registry, _type_name
from cupel.policy._entries import _Reader as _Reader
from cupel.policy._readers import _read_component as _read_component
from cupel.policy._readers import _read_scorers as _read_scorers
from cupel.policy._readers import _read_slicer as _read_slicer
from cupel.policy._writers import _dump_placer as _dump_placer
from cupel.policy._writers import _dump_scorers as _dump_scorers
from cupel.policy._writers import _dump_slicer as _dump_slicer
from cupel.policy.errors import PolicyFileError
from cupel.protocols import Placer, Scorer, Slicer

_NAME = re.compile(r"[a-z][a-z0-9_.]*")

__all__ = [
    "register_placer",
    "register_scorer",
    "register_slicer",
    "registered_types",
    "unregister_placer",
    "unregister_scorer",
    "unregister_slicer",
]


def _register(
    registry: _Registry,
    name: str,
    factory: Callable[..., Any],
    to_config: Callable[[Any], Mapping[str, Any]] | None,
    cls: type | None,
    replace: bool,
) -> None:
    if not isinstance(name, str):
        raise CupelTypeError(f"register_{registry.role}: name must be a string, got {name!r}")
    normalized = _type_name(name)
    if not _NAME.fullmatch(normalized):
        raise InvalidConfigurationError(
            f"register_{registry.role}: name must start with a letter and contain only letters, digits, "
            f"'_', '-' and '.', got {name!r}"
        )
    if not callable(factory):
        raise CupelTypeError(f"register_{registry.role}: factory must be callable, got {factory!r}")
    if to_config is not None and not callable(to_config):
        raise CupelTypeError(f"register_{registry.role}: to_config must be callable, got {to_config!r}")
    if cls is None and isinstance(factory, type):
        cls = factory
    if cls is not None and not isinstance(cls, type):
        raise CupelTypeError(f"register_{registry.role}: cls must be a class, got {cls!r}")
    role = registry.role

    def build(params: _Params, path: str, reader: _Reader) -> Any:
        try:
            return factory(**params)
        except (CupelError, TypeError, ValueError) as error:
            raise PolicyFileError(path, f"{role} type {normalized!r}: {error}") from None

    def dump(value: Any) -> dict[str, Any]:
        if to_config is None:
            raise CupelTypeError(
                f"{role} type {normalized!r} was registered without to_config, so {value!r} cannot be "
                "written to a policy file"
            )
        config = to_config(value)
        if not isinstance(config, Mapping):
            raise CupelTypeError(
                f"to_config of {role} type {normalized!r} must return a mapping, got {config!r}"
            )
        params = dict(config)
        if "type" in params:
            raise CupelTypeError(f"to_config of {role} type {normalized!r} must not return a 'type' key")
        return params

    registry.add(_Entry(normalized, cls, build, dump, None, False), replace=replace)


def register_scorer(
    name: str,
    factory: Callable[..., Scorer],
    *,
    to_config: Callable[[Any], Mapping[str, Any]] | None = None,
    cls: type | None = None,
    replace: bool = False,
) -> None:
    """Make ``{type = name, ...}`` usable as a scorer in policy files.

    ``factory(**params)`` builds the scorer from the entry's keys other than ``type`` and ``weight``
    (plain TOML/JSON values). ``to_config(scorer)`` returns those keys back, for writing; instances
    are matched to the registration by exact class, ``cls`` (default: ``factory`` when it is a
    class). Built-in names cannot be taken; an existing custom name only with ``replace=True``.
    """
    _register(_SCORERS, name, factory, to_config, cls, replace)


def register_slicer(
    name: str,
    factory: Callable[..., Slicer],
    *,
    to_config: Callable[[Any], Mapping[str, Any]] | None = None,
    cls: type | None = None,
    replace: bool = False,
) -> None:
    """Make ``{type = name, ...}`` usable as a slicer in policy files (see :func:`register_scorer`)."""
    _register(_SLICERS, name, factory, to_config, cls, replace)


def register_placer(
    name: str,
    factory: Callable[..., Placer],
    *,
    to_config: Callable[[Any], Mapping[str, Any]] | None = None,
    cls: type | None = None,
    replace: bool = False,
) -> None:
    """Make ``{type = name, ...}`` (or ``"name"``) usable as a placer in policy files."""
    _register(_PLACERS, name, factory, to_config, cls, replace)


def unregister_scorer(name: str) -> None:
    """Forget a custom scorer type."""
    _SCORERS.remove(name)


def unregister_slicer(name: str) -> None:
    """Forget a custom slicer type."""
    _SLICERS.remove(name)


def unregister_placer(name: str) -> None:
    """Forget a custom placer type."""
    _PLACERS.remove(name)


def registered_types() -> dict[str, tuple[str, ...]]:
    """The type names policy files accept, built-in and custom, per role, sorted."""
    return {"scorer": _SCORERS.names(), "slicer": _SLICERS.names(), "placer": _PLACERS.names()}
