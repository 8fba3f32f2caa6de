"""Per-kind work done once per distinct kind, not once per item (kind folding, weights, quotas)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import TypeVar

from cupel.model import ContextItem, ContextKind, ascii_fold

__all__ = ["folded_kinds", "per_kind"]

T = TypeVar("T")

_KIND = attrgetter("kind")


def per_kind(items: Iterable[ContextItem], compute: Callable[[ContextKind], T]) -> list[T]:
    """``[compute(item.kind) for item in items]``, calling ``compute`` once per distinct kind object.

    ContextKind interns its values, so items whose kinds were built from the same string share one
    object: ``compute`` then runs once per spelling, and each item costs a lookup by identity.
    ``compute`` must depend on the kind's value only.
    """
    kinds = list(map(_KIND, items))
    keys = list(map(id, kinds))
    table = {key: compute(kind) for key, kind in dict(zip(keys, kinds, strict=True)).items()}
    return list(map(table.__getitem__, keys))


def folded_kinds(items: Iterable[ContextItem]) -> list[str]:
    """Each item's ASCII-folded kind (``item.kind.folded``), folding each distinct kind once."""
    return per_kind(items, ascii_fold)
