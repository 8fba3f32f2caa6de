"""Per-kind work without per-item Python calls: each item's folded kind in C-level passes."""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter

from cupel.model import ContextItem, ascii_fold

__all__ = ["folded_kinds"]

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
