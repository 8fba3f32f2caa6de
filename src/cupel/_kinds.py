"""Per-kind work without per-item Python calls: each item's folded kind in C-level passes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter

from cupel import _numeric
from cupel.model import ContextItem, ContextKind, ascii_fold

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

__all__ = ["folded_kinds", "per_kind", "per_kind_floats"]

_KIND = attrgetter("kind")


def folded_kinds(items: Iterable[ContextItem]) -> list[str]:
    """Each item's ASCII-folded kind (``item.kind.folded``), without a Python call per item.

    On ASCII text ASCII folding is ``str.lower``, so the usual all-ASCII case is two C-level passes.
    Otherwise each distinct kind object is folded once (ContextKind interns its values, so items
    whose kinds were built from the same string share one object) and items look theirs up by
    identity.
    """
    kinds = list(map(_KIND, items))
    if all(map(str.isascii, kinds)):
        return list(map(str.lower, kinds))
    keys = list(map(id, kinds))
    folded = {key: ascii_fold(kind) for key, kind in dict(zip(keys, kinds, strict=True)).items()}
    return list(map(folded.__getitem__, keys))


def per_kind(items: Sequence[ContextItem], value: Callable[[str], T]) -> list[T]:
    """``value(folded kind)`` for each item, computed once per distinct kind object.

    Kinds are interned, so the usual items share a handful of kind objects: the values are computed
    for those and each item's is found by the identity of its kind in one fused C-level pass. Kind
    objects built otherwise are grouped by identity in a second pass.
    """
    result: list[T] = _per_kind(items, value, list)
    return result


def per_kind_floats(items: Sequence[ContextItem], value: Callable[[str], float]) -> Any:
    """:func:`per_kind` of float values as a float64 array, collected without a list (numpy present)."""
    np = _numeric.numpy_module()
    count = len(items)
    return _per_kind(items, value, lambda values: np.fromiter(values, dtype=np.float64, count=count))


def _per_kind(
    items: Sequence[ContextItem], value: Callable[[str], Any], collect: Callable[[Any], Any]
) -> Any:
    interned = list(ContextKind._interned.values())  # one C-level copy; other threads may add kinds
    if len(interned) <= len(items):
        table = {id(kind): value(ascii_fold(kind)) for kind in interned}
        try:
            return collect(map(table.__getitem__, map(id, map(_KIND, items))))
        except KeyError:
            pass
    kinds = list(map(_KIND, items))
    distinct = dict(zip(map(id, kinds), kinds, strict=True))
    table = {key: value(ascii_fold(kind)) for key, kind in distinct.items()}
    return collect(map(table.__getitem__, map(id, kinds)))
