"""A stable identifier of an item for traces: the same content, the same id, in every run and process."""

from __future__ import annotations

import hashlib

from cupel.model import ContextItem

__all__ = ["item_id"]


def item_id(item: ContextItem) -> str:
    """A stable identifier of an item: the first 16 hex digits of its content's SHA-256.

    The same content gives the same id in every run and process, without putting the content itself
    into a trace.
    """
    return hashlib.sha256(item.content.encode("utf-8", "surrogatepass")).hexdigest()[:16]
