"""A batch of items as columns, and the one entry point that scores it (spec: Scorers).

The pipeline scores its candidates as a batch read off their ContextItems
(:meth:`ItemColumns.of_items`). A front end that already holds its candidates as columns (chat's turns:
first message positions, kinds, role tags, contents) hands those over instead, so a scorer that reads
only them never needs an item built. Every built-in scorer scores a batch (``score_columns``):
Recency, Priority, Kind, Tag and Composite read the columns, Relevance the contents; the others read
``batch.items()``, which builds the items on first need. A scorer defined outside cupel is always
given the items, through :func:`~cupel.scorers._base.score_items` and its checks, so it keeps working
unchanged. The entry point is :func:`~cupel.scorers._base.score_columns`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter

from cupel.model import ContextItem, ContextKind

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from cupel.scorers.term_counts import TermCounts

__all__ = ["ItemColumns"]

_TIMESTAMP_KEY = attrgetter("_timestamp_us")
_PRIORITY = attrgetter("priority")
_KIND = attrgetter("kind")
_TAGS = attrgetter("tags")
_CONTENT = attrgetter("content")


class ItemColumns:
    """The columns of a batch of ``count`` items that the built-in scorers read.

    ``order_keys`` are numbers ordered as the items' timestamps are (``None`` for an item without
    one): Recency ranks them, so any keys with the timestamps' order give the same scores.
    ``source`` is the item list when the batch was read off items (scorers may then use their
    item fast paths); otherwise ``items()`` builds the items with ``make_items`` on first need.
    ``term_counts``: the caller's term counts kept from its last call (a chat session's), with which a
    relevance scorer counts only what is new.
    """

    __slots__ = (
        "_contents",
        "_items",
        "_make_items",
        "count",
        "kinds",
        "order_keys",
        "presence",
        "priorities",
        "source",
        "tags",
        "term_counts",
    )

    def __init__(
        self,
        count: int,
        *,
        order_keys: Callable[[], Sequence[int | None]],
        kinds: Callable[[], list[ContextKind]],
        tags: Callable[[], list[tuple[str, ...]]],
        priorities: Callable[[], list[int | None]],
        make_items: Callable[[], Sequence[ContextItem]],
        presence: Callable[[str], list[bool] | None] = lambda tag: None,
        source: Sequence[ContextItem] | None = None,
        contents: Callable[[], list[str]] | None = None,
        term_counts: TermCounts | None = None,
    ) -> None:
        self.count = count
        self.order_keys = order_keys
        self.kinds = kinds
        self.tags = tags
        self.priorities = priorities
        self.presence = presence
        self.source = source
        self._make_items = make_items
        self._contents = contents
        self.term_counts = term_counts
        self._items: Sequence[ContextItem] | None = source

    @classmethod
    def of_items(cls, items: Sequence[ContextItem]) -> ItemColumns:
        """The batch of ``items``, each column read off them when a scorer asks for it."""
        return cls(
            len(items),
            order_keys=lambda: list(map(_TIMESTAMP_KEY, items)),
            kinds=lambda: list(map(_KIND, items)),
            tags=lambda: list(map(_TAGS, items)),
            priorities=lambda: list(map(_PRIORITY, items)),
            make_items=lambda: items,
            source=items,
        )

    def contents(self) -> list[str]:
        """Each item's content: from ``contents`` when the batch was given one (a text scorer then
        needs no item built), else read off the items."""
        if self._contents is not None and self._items is None:
            return self._contents()
        return list(map(_CONTENT, self.items()))

    def items(self) -> Sequence[ContextItem]:
        """The batch as ContextItems (built once, on first need, when it was given as columns)."""
        if self._items is None:
            self._items = self._make_items()
        return self._items
